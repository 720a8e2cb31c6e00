CREATE TABLE t (a INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL 'NaN' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '5');
SELECT a FROM t;
