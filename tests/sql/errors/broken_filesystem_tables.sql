CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE o (a STRING) WITH ('connector' = 'filesystem', 'format' = 'csv');
CREATE TABLE p (a STRING) WITH ('connector' = 'filesystem', 'path' = 'p', 'format' = 'avro');
INSERT INTO o SELECT user_id FROM clicks;
INSERT INTO p SELECT user_id FROM clicks;
