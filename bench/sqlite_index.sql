-- bench: sqlite3 with two sorter threads building indexes on 300 000 rows
PRAGMA threads=2;
PRAGMA cache_size=-8000;
CREATE TABLE t(a INTEGER, b TEXT, c REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300000)
INSERT INTO t SELECT i, hex(randomblob(12)), random() FROM s;
CREATE INDEX tb ON t(b);
CREATE INDEX tc ON t(c, a);
SELECT count(*) FROM t;
