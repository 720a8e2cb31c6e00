CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, pt AS PROCTIME()
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
SELECT user_id, window_start, window_end, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, user_id;
