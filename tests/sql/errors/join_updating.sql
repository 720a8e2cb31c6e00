CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE VIEW first_click AS SELECT user_id, MIN(ts) AS ts FROM clicks GROUP BY user_id;
SELECT * FROM clicks c JOIN first_click f ON c.user_id = f.user_id AND f.ts BETWEEN c.ts - INTERVAL '1' MINUTE AND c.ts;
