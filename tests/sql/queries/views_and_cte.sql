CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE impressions (user_id STRING, article_id STRING, position BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.csv', 'format' = 'csv');
CREATE VIEW good AS SELECT * FROM clicks WHERE user_id IS NOT NULL;
WITH shares AS (SELECT user_id, ts FROM good WHERE action = 'share')
SELECT user_id, COUNT(*) AS n FROM shares GROUP BY user_id;
