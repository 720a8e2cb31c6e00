SET 'parallelism.default' = '2';
CREATE TABLE clicks (
  user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE out (user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, articles BIGINT) WITH ('connector' = 'print');
-- the job of clicks.flow
INSERT INTO out
SELECT user_id, window_start, window_end, COUNT(*) AS clicks,
       COUNT(DISTINCT article_id) AS articles
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
WHERE user_id IS NOT NULL AND article_id IS NOT NULL AND lower(action) = 'appclick'
GROUP BY window_start, window_end, user_id;
SELECT user_id, lower(action) AS a FROM clicks WHERE user_id IS NOT NULL;
SELECT user_id, COUNT(*), MAX(ts) AS last_seen FROM clicks GROUP BY user_id;
SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) AS ws, user_id, COUNT(DISTINCT article_id) AS a FROM clicks GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), user_id;
