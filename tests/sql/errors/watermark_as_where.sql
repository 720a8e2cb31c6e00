CREATE TABLE t (a INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS WHERE INTERVAL)
  WITH ('connector' = 'datagen', 'number-of-rows' = '5');
SELECT a FROM t;
