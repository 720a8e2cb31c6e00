CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
SELECT user_id, window_start, COUNT(*) AS n
FROM TABLE(TUMBLE(DATA => TABLE clicks, TIMECOL => DESCRIPTOR(ts), SIZ => INTERVAL '5' MINUTES))
GROUP BY window_start, window_end, user_id;
