SET 'execution.runtime-mode' = 'batch';
CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
SELECT user_id, ts FROM clicks ORDER BY ts DESC;
