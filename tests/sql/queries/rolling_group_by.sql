CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
SELECT user_id, COUNT(*) AS clicks, COUNT(DISTINCT article_id) AS articles, MAX(ts) AS last_seen
FROM clicks GROUP BY user_id;
