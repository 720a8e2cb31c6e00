CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
CREATE TABLE per_user (user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'out/per_user', 'format' = 'json', 'sink.parallelism' = '1');
INSERT INTO per_user
SELECT user_id, window_start, window_end, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, user_id;
