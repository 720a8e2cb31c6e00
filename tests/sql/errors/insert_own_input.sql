CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE all_clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = 'data', 'format' = 'csv');
INSERT INTO all_clicks SELECT * FROM clicks WHERE action = 'appclick';
