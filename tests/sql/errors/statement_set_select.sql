CREATE TABLE clicks (user_id STRING, article_id STRING, action STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE out (user_id STRING) WITH ('connector' = 'print');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO out SELECT user_id FROM clicks;
  SELECT user_id FROM clicks;
END;
