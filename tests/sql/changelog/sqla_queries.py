"""The queries of cumulate.json, state_ttl_hint.json and topn_outside.json (one list per
file, shared by record_sqla.py, run under Flink, and the tests, run under flowc).

Tables: ``orders`` and ``users`` of data.py (no watermark) and ``events``, over_data.py's
ORDERS with ``WATERMARK FOR ts AS ts - INTERVAL '1' SECOND``."""

CUM = "TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))"
CUM_AGG = (f"SELECT window_start, window_end, user_id, SUM(amount) AS total, COUNT(*) AS n "
           f"FROM {CUM} GROUP BY window_start, window_end, user_id")
ON = ("ON L.user_id = R.user_id AND L.window_start = R.window_start "
      "AND L.window_end = R.window_end")

CUMULATE = [
    CUM_AGG,
    f"SELECT window_start, window_end, COUNT(*) AS n, MAX(amount) AS mx FROM {CUM} "
    "GROUP BY window_start, window_end",
    "SELECT window_start, window_end, user_id, COUNT(amount) AS n FROM TABLE(CUMULATE(TABLE "
    "events, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND, INTERVAL '1' SECOND)) "
    "GROUP BY window_start, window_end, user_id",
    "SELECT user_id, window_end, SUM(amount) AS total FROM TABLE(CUMULATE(DATA => TABLE events, "
    "TIMECOL => DESCRIPTOR(ts), STEP => INTERVAL '3' SECOND, SIZE => INTERVAL '9' SECOND)) "
    "GROUP BY window_start, window_end, user_id HAVING SUM(amount) > 10",
    f"SELECT window_start, window_end, window_time, user_id, MIN(amount) AS lo FROM {CUM} "
    "WHERE amount > 3 GROUP BY window_start, window_end, window_time, user_id",
    f"SELECT * FROM {CUM}",
    f"SELECT user_id, amount, window_start, window_end FROM {CUM} WHERE amount >= 40",
    # window Top-N and deduplication over CUMULATE
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
    f"ORDER BY amount DESC) AS rn FROM {CUM}) WHERE rn <= 2",
    f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
    f"ORDER BY total DESC) AS rn FROM ({CUM_AGG})) WHERE rn <= 1",
    f"SELECT user_id, amount, ts, window_end FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
    f"window_start, window_end, user_id ORDER BY ts DESC) AS rn FROM {CUM}) WHERE rn = 1",
    # window join of two CUMULATE aggregates
    f"SELECT L.user_id, L.window_start, L.window_end, L.n, R.total FROM ({CUM_AGG}) L JOIN "
    f"(SELECT window_start, window_end, user_id, SUM(amount) AS total FROM {CUM} WHERE amount "
    f"< 10 GROUP BY window_start, window_end, user_id) R {ON}",
    f"SELECT L.user_id, L.window_end, L.n, R.total FROM ({CUM_AGG}) L LEFT JOIN "
    f"(SELECT window_start, window_end, user_id, SUM(amount) AS total FROM {CUM} WHERE amount "
    f"< 10 GROUP BY window_start, window_end, user_id) R {ON}",
    # errors
    "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE events, "
    "DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '6' SECOND)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE events, "
    "DESCRIPTOR(ts), INTERVAL '8' SECOND, INTERVAL '4' SECOND)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE events, "
    "DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE events, "
    "DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND, INTERVAL '3' SECOND)) "
    "GROUP BY window_start, window_end",
]

STATE_TTL_HINT = [
    "SELECT /*+ STATE_TTL('orders' = '1d') */ user_id, COUNT(*) AS n FROM orders GROUP BY user_id",
    "SELECT /*+ STATE_TTL('o' = '1d') */ user_id, SUM(amount) AS s FROM orders o GROUP BY user_id",
    "SELECT /*+ STATE_TTL('o' = '1d', 'u' = '12h') */ o.order_id, u.name FROM orders o "
    "JOIN users u ON o.user_id = u.user_id",
    "SELECT /*+ STATE_TTL('orders' = '2h', 'users' = '30min') */ orders.order_id, users.name "
    "FROM orders LEFT JOIN users ON orders.user_id = users.user_id",
    "SELECT /*+ STATE_TTL('u' = '1 h') */ o.order_id, u.name FROM orders o "
    "JOIN users u ON o.user_id = u.user_id",
    "SELECT /*+ STATE_TTL('c' = '1d') */ c.user_id, c.n, u.country FROM (SELECT user_id, "
    "COUNT(*) AS n FROM orders GROUP BY user_id) c LEFT JOIN users u ON u.user_id = c.user_id",
    # errors
    "SELECT /*+ STATE_TTL('x' = '1d') */ user_id, COUNT(*) AS n FROM orders GROUP BY user_id",
    "SELECT /*+ STATE_TTL('o' = '1d', 'x' = '2d') */ o.order_id, u.name FROM orders o "
    "JOIN users u ON o.user_id = u.user_id",
    "SELECT /*+ STATE_TTL('orders' = '1d') */ user_id, COUNT(*) AS n FROM orders o GROUP BY "
    "user_id",
    "SELECT /*+ STATE_TTL('o' = 'abc') */ user_id, COUNT(*) AS n FROM orders o GROUP BY user_id",
    "SELECT /*+ STATE_TTL() */ user_id, COUNT(*) AS n FROM orders GROUP BY user_id",
    "SELECT /*+ STATE_TTL('orders' = '1d') */ order_id, user_id FROM orders WHERE amount > 5",
    "SELECT /*+ STATE_TTL('o' = '1d', 'o2' = '1d') */ user_id, COUNT(*) AS n FROM orders o "
    "GROUP BY user_id",
]

TOPN_OUTSIDE = [
    "SELECT user_id, amount FROM (SELECT user_id, amount, ROW_NUMBER() OVER (PARTITION BY "
    "user_id ORDER BY ts DESC) rn FROM orders) WHERE rn <= 2",
    "SELECT order_id, amount FROM (SELECT order_id, amount, ROW_NUMBER() OVER (PARTITION BY "
    "product ORDER BY amount DESC, order_id) AS rn FROM orders) WHERE rn <= 2",
    "SELECT * FROM (SELECT order_id, user_id, ROW_NUMBER() OVER (PARTITION BY user_id "
    "ORDER BY price ASC) AS rn FROM orders) WHERE rn <= 2",
    "SELECT order_id, product FROM (SELECT order_id, product, ROW_NUMBER() OVER (PARTITION BY "
    "product ORDER BY ts ASC) AS rn FROM orders) WHERE rn = 1",
    "SELECT user_id, s FROM (SELECT user_id, s, ROW_NUMBER() OVER (ORDER BY n DESC) AS rn FROM "
    "(SELECT user_id, SUM(amount) AS s, COUNT(*) AS n FROM orders GROUP BY user_id)) "
    "WHERE rn <= 2",
    # over a time attribute: Flink's Deduplicate (rn = 1 on the rowtime) and a Rank
    "SELECT user_id, amount FROM (SELECT user_id, amount, ROW_NUMBER() OVER (PARTITION BY "
    "user_id ORDER BY ts DESC) AS rn FROM events) WHERE rn = 1",
    "SELECT amount FROM (SELECT amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts "
    "ASC) AS rn FROM events) WHERE rn <= 2",
    # the inner query projects the ORDER BY column away: not in scope (an error in Flink)
    "SELECT user_id, amount FROM (SELECT user_id, amount, ROW_NUMBER() OVER (PARTITION BY "
    "user_id ORDER BY ts DESC) rn FROM (SELECT user_id, amount FROM orders)) WHERE rn <= 2",
]
