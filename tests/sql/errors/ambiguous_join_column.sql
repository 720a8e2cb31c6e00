CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE imp (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'i.csv', 'format' = 'csv');
SELECT user_id FROM clicks c JOIN imp i ON c.user_id = i.user_id AND i.ts BETWEEN c.ts AND c.ts + INTERVAL '1' SECOND;
