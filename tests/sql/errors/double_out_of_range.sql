CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
SELECT a, 1e400 AS x FROM t;
