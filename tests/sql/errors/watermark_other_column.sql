CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3), seen TIMESTAMP(3),
  WATERMARK FOR ts AS seen - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
SELECT user_id FROM clicks;
