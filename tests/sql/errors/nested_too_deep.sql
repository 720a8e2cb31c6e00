CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
SELECT (((((((((((((((((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))))))))))))))))) AS s FROM t;
