CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE VIEW per_user AS SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id;
SELECT n, COUNT(*) AS users FROM per_user GROUP BY n;
