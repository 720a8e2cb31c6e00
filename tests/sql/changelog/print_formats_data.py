"""The print formats fixture (print_formats.json): one row of literals of every type flowc's
print writes, each as Flink's print connector writes it (Java's toString of the external
value), over a one-row table; the sink's column types as Flink derives them."""

ONE = "1\n"
ITEMS = [
    ("TIMESTAMP '2024-05-01 10:00:00'", "TIMESTAMP(0)"),
    ("TIMESTAMP '2024-05-01 10:00:01.500'", "TIMESTAMP(3)"),
    ("TIMESTAMP '2024-05-01 10:00:05.010'", "TIMESTAMP(3)"),
    ("CAST(TIMESTAMP '2024-05-01 10:00:00.123' AS TIMESTAMP(3))", "TIMESTAMP(3)"),
    ("CAST(1.5 AS DECIMAL(10, 2))", "DECIMAL(10, 2)"),
    ("CAST(0 AS DECIMAL(5, 3))", "DECIMAL(5, 3)"),
    ("CAST(-0.5 AS DECIMAL(4, 1))", "DECIMAL(4, 1)"),
    ("CAST(1.10 AS DECIMAL(38, 18))", "DECIMAL(38, 18)"),
    ("ARRAY[1, 2, 3]", "ARRAY<INT>"),
    ("ARRAY['x', CAST(NULL AS STRING)]", "ARRAY<STRING>"),
    ("ARRAY[ARRAY[1, 2], ARRAY[3]]", "ARRAY<ARRAY<INT>>"),
    ("ARRAY[CAST(1.5 AS DOUBLE)]", "ARRAY<DOUBLE>"),
    ("STR_TO_MAP('a=1,b=2')", "MAP<STRING, STRING>"),
    ("CAST(1e7 AS DOUBLE)", "DOUBLE"),
    ("CAST(0.1 AS DOUBLE)", "DOUBLE"),
    ("CAST(0.001 AS DOUBLE)", "DOUBLE"),
    ("CAST(0.0001 AS DOUBLE)", "DOUBLE"),
    ("CAST(1234567.0 AS DOUBLE)", "DOUBLE"),
    ("CAST(12345678.9 AS DOUBLE)", "DOUBLE"),
    ("CAST(123456789012 AS DOUBLE)", "DOUBLE"),
    ("CAST(100 AS DOUBLE) / 3", "DOUBLE"),
    ("CAST(1.5 AS FLOAT)", "FLOAT"),
    ("CAST(9007199254740993 AS BIGINT)", "BIGINT"),
    ("TRUE", "BOOLEAN"),
    ("CAST(NULL AS INT)", "INT"),
    ("CAST(NULL AS DOUBLE)", "DOUBLE"),
    ("'a,b'", "STRING"),
    ("''", "STRING"),
    ("' a b '", "STRING"),
]
QUERY = "SELECT " + ", ".join(f"{e} AS c{i}" for i, (e, _) in enumerate(ITEMS)) + " FROM single_row"
