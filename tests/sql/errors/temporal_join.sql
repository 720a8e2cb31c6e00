CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE users (user_id STRING, country STRING) WITH ('connector' = 'filesystem', 'path' = 'data/users.csv', 'format' = 'csv');
SELECT c.user_id, u.country FROM clicks c JOIN users FOR SYSTEM_TIME AS OF c.ts AS u ON c.user_id = u.user_id;
