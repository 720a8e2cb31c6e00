CREATE TABLE t (k STRING, epoch_ms BIGINT, ok BOOLEAN)
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE o (d DATE, e DATE) WITH ('connector' = 'print');
-- was accepted: the epoch kept as the DATE's value (1000 and 2000 two groups, both printing
-- 1970-01-01); Flink casts only a timestamp or a string to DATE
INSERT INTO o SELECT CAST(epoch_ms AS DATE), CAST(ok AS DATE) FROM t;
