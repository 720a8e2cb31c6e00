CREATE TABLE t1 (k STRING, epoch_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(epoc_ms, 3))
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE t2 (k STRING, epoch_ms BIGINT, ts AS TO_TIMSTAMP_LTZ(epoch_ms, 3))
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE t3 (k STRING, epoch_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3),
  WATERMARK FOR ts AS epoch_ms)
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE t4 (k STRING, epoch_ms BIGINT, ts AS CAST(k AS TIMESTAMP_LTZ(6)),
  WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE t5 (k STRING, epoch_ms BIGINT, n AS epoch_ms * 2, WATERMARK FOR n AS n)
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE t6 (k STRING, epoch_ms BIGINT, n AS epoch_ms * 2, m AS n + 1)
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
CREATE TABLE t7 (k STRING, d DATE, WATERMARK FOR d AS d)
  WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');
SET 'table.local-time-zone' = 'America/New_York';
