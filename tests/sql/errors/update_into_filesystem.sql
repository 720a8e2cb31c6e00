CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE counts (user_id STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out/counts', 'format' = 'csv');
INSERT INTO counts SELECT user_id, COUNT(*) FROM clicks GROUP BY user_id;
