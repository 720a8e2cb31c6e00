CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE VIEW v