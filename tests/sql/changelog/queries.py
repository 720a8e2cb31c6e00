"""The queries of changelog.json (one list, so the recording and the tests agree)."""

QUERIES = [
    # GroupAggregate over insert-only input
    "SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id",
    "SELECT user_id, SUM(amount) AS s, MIN(amount) AS mn, MAX(amount) AS mx FROM orders GROUP BY user_id",
    "SELECT user_id, MAX(amount) AS mx FROM orders GROUP BY user_id",
    "SELECT product, AVG(amount) AS a, COUNT(amount) AS c FROM orders GROUP BY product",
    "SELECT product, COUNT(DISTINCT user_id) AS users FROM orders GROUP BY product",
    "SELECT product, SUM(price) AS total, MAX(ts) AS last_ts FROM orders GROUP BY product",
    "SELECT user_id, product, COUNT(*) AS n FROM orders GROUP BY user_id, product",
    "SELECT vip, MIN(price) AS lo, MAX(price) AS hi FROM orders GROUP BY vip",
    # HAVING / WHERE that turn false
    "SELECT user_id, MIN(amount) AS mn FROM orders GROUP BY user_id HAVING MIN(amount) > 4",
    "SELECT user_id, SUM(amount) AS s FROM orders GROUP BY user_id HAVING SUM(amount) < 20",
    "SELECT * FROM (SELECT product, COUNT(*) AS n FROM orders GROUP BY product) WHERE n <> 2",
    # a GROUP BY over an updating input
    "SELECT n, COUNT(*) AS users FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) GROUP BY n",
    "SELECT mx, COUNT(*) AS c, SUM(s) AS total FROM (SELECT user_id, MAX(amount) AS mx, SUM(amount) AS s FROM orders GROUP BY user_id) GROUP BY mx",
    "SELECT COUNT(*) AS n_groups, MAX(n) AS biggest, MIN(n) AS smallest FROM (SELECT product, COUNT(*) AS n FROM orders GROUP BY product)",
    "SELECT s > 15 AS big, COUNT(DISTINCT user_id) AS users FROM (SELECT user_id, SUM(amount) AS s FROM orders GROUP BY user_id) GROUP BY s > 15",
    # non-keyed aggregates and GROUP BY on expressions
    "SELECT COUNT(*) AS n FROM orders",
    "SELECT COUNT(*) AS n, SUM(amount) AS s, MAX(price) AS mx, AVG(price) AS av FROM orders",
    "SELECT amount % 3 AS b, COUNT(*) AS n FROM orders GROUP BY amount % 3",
    "SELECT UPPER(product) AS p, SUM(amount) AS s FROM orders GROUP BY UPPER(product)",
    # print format of insert-only rows
    "SELECT order_id, user_id, price, vip, ts FROM orders",
    "SELECT order_id, price * 2 AS p2, CAST(amount AS DOUBLE) / 3 AS third, ts + INTERVAL '1' SECOND AS t1 FROM orders WHERE order_id < 5",
    # regular joins
    "SELECT o.order_id, u.name FROM orders o JOIN users u ON o.user_id = u.user_id",
    "SELECT o.order_id, u.name FROM orders o LEFT JOIN users u ON o.user_id = u.user_id",
    "SELECT o.order_id, u.name FROM orders o RIGHT JOIN users u ON o.user_id = u.user_id",
    "SELECT o.order_id, u.name, u.user_id FROM orders o FULL JOIN users u ON o.user_id = u.user_id",
    "SELECT u.name, c.n FROM users u JOIN (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) c ON u.user_id = c.user_id",
    "SELECT c.user_id, c.n, u.country FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) c LEFT JOIN users u ON u.user_id = c.user_id",
    # Top-N and deduplication
    "SELECT * FROM (SELECT order_id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2",
    "SELECT order_id, user_id, amount FROM (SELECT order_id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2",
    "SELECT * FROM (SELECT order_id, product, amount, RANK() OVER (PARTITION BY product ORDER BY amount) AS r FROM orders) WHERE r <= 2",
    "SELECT * FROM (SELECT order_id, product, amount, DENSE_RANK() OVER (PARTITION BY product ORDER BY amount) AS r FROM orders) WHERE r <= 2",
    "SELECT * FROM (SELECT order_id, amount, ROW_NUMBER() OVER (ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 3",
    "SELECT order_id, user_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn FROM orders) WHERE rn = 1",
    "SELECT order_id, user_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rn FROM orders) WHERE rn = 1",
    # sinks that take insert-only input
]
