CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
SELECT user_id, COUNT(*) FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '7' SECOND, INTERVAL '1' MINUTE)) GROUP BY user_id, window_start, window_end;
