CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE VIEW per_user AS SELECT user_id, COUNT(*) AS n, MAX(ts) AS last_ts FROM clicks GROUP BY user_id;
SELECT * FROM TABLE(TUMBLE(TABLE per_user, DESCRIPTOR(last_ts), INTERVAL '1' MINUTE));
