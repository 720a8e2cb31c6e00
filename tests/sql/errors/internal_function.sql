CREATE TABLE nums (a BIGINT, b BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
-- the translator's own functions for '/' and '%' cannot be called, nor are they suggested
SELECT _sql_div(a, b) AS q FROM nums;
SELECT sql_div(a, b) AS q FROM nums;
