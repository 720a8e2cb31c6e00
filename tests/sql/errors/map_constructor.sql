CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
SELECT user_id, MAP['a', 1, 'b', 2] AS m FROM clicks;
