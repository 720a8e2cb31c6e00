CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE nt (k STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = 'n.csv', 'format' = 'csv');
SELECT k, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE nt, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end;
