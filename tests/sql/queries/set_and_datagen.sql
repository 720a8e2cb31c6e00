CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
SET 'parallelism' = '2';
CREATE TABLE load (id BIGINT, user_id BIGINT, amount DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'datagen', 'number-of-rows' = '1000', 'fields.user_id.min' = '1', 'fields.user_id.max' = '10');
CREATE TABLE sink (user_id BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT user_id, SUM(amount) AS total FROM load GROUP BY user_id;
