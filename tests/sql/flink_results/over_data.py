"""The orders table of the OVER / window Top-N / window join fixtures (shared by the record
scripts, run under Flink, and by the tests, run under flowc).

Rowtimes never go back by more than the watermark delay (1 s), so no row is late in either
system whatever the watermark cadence (Flink emits watermarks every 200 ms of wall-clock
time, flowc every 10,000 records, or after each one with 'flowc.watermarks' = 'per-record')."""

ORDERS = [  # user_id, amount, ts
    ("u1", 10, "2024-05-01 10:00:00.000"),
    ("u2", 5, "2024-05-01 10:00:01.000"),
    ("u1", 20, "2024-05-01 10:00:02.000"),
    ("u1", 30, "2024-05-01 10:00:02.000"),
    ("u2", None, "2024-05-01 10:00:03.000"),
    ("u1", 40, "2024-05-01 10:00:05.000"),
    ("u2", 7, "2024-05-01 10:00:04.500"),
    ("u3", 1, "2024-05-01 10:00:06.000"),
    ("u1", 50, "2024-05-01 10:00:08.000"),
    ("u2", 9, "2024-05-01 10:00:09.000"),
    ("u1", 60, "2024-05-01 10:00:11.000"),
    ("u3", 2, "2024-05-01 10:00:12.000"),
    ("u2", 3, "2024-05-01 10:00:12.000"),
]


def orders_csv(header: bool) -> str:
    lines = ["user_id,amount,ts"] if header else []
    lines += [f"{u},{'' if a is None else a},{t}" for u, a, t in ORDERS]
    return "".join(line + "\n" for line in lines)
