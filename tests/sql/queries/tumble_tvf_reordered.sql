CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
SELECT window_start, window_end, user_id, COUNT(*) AS n, AVG(position) AS mean
FROM TABLE(TUMBLE(TABLE impressions, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '15' SECOND))
GROUP BY window_start, window_end, user_id;
