CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
SELECT * FROM clicks c, impressions i
WHERE c.user_id = i.user_id AND i.ts >= c.ts - INTERVAL '1' MINUTE AND i.ts < c.ts;
