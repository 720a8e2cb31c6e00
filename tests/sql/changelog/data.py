"""The tables of the changelog fixtures (changelog.json), shared by the recording script
and the tests: csv text without a header (Flink's csv format reads none), an empty field
is NULL (Flink: ``'csv.null-literal' = ''``)."""

ORDERS = """1,u1,p1,10,1.5,true,2024-05-01 10:00:00.000
2,u2,p1,5,2.25,false,2024-05-01 10:00:01.500
3,u1,p2,7,,true,2024-05-01 10:00:02.000
4,u3,p3,,0.1,,2024-05-01 10:00:03.250
5,u2,p2,20,3.0,false,2024-05-01 10:00:04.000
6,u1,p1,10,1.0E7,true,2024-05-01 10:00:05.000
7,,p3,3,2.5,false,2024-05-01 10:00:06.000
8,u3,p1,8,100.0,true,2024-05-01 10:00:07.000
9,u2,p3,5,0.001,false,2024-05-01 10:00:08.999
10,u1,p3,1,1.0,true,2024-05-01 10:00:09.000
11,u2,p1,5,2.0,false,2024-05-01 10:00:10.000
12,u3,p2,30,12.5,true,2024-05-01 10:00:11.000
"""

USERS = """u1,Alice,de
u2,Bob,fr
u4,Dora,de
u1,Alicia,at
"""

ORDERS_COLUMNS = ("order_id BIGINT, user_id STRING, product STRING, amount BIGINT, "
                  "price DOUBLE, vip BOOLEAN, ts TIMESTAMP(3)")
USERS_COLUMNS = "user_id STRING, name STRING, country STRING"
