CREATE TABLE orders (user_id STRING, amount INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
SELECT /*+ STATE_TTL('order' = '1d') */ user_id, COUNT(*) AS n FROM orders GROUP BY user_id;
