// Writes the parquet fixtures of hubrepo/testdata (and table/testdata's
// types.parquet) with DuckDB, an
// independent parquet writer laid out like the files the Hub serves
// (three-level LIST columns, zstd, nullable columns). The files are
// committed; this script only records how they were made:
//
//	npm install @duckdb/node-api@1.5.6-r.1
//	node gen-parquet.mjs   (from this directory)
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const copy = (select, file, extra = '') =>
  c.run(`COPY (${select}) TO '${file}' (FORMAT parquet, COMPRESSION zstd${extra})`);

const split = 'NanoMini';
await copy(`SELECT * FROM (VALUES
    ('d1', 'Aspirin inhibits cyclooxygenase.'),
    ('d2', ''),
    ('d3', 'Metformin lowers hepatic glucose output.'),
    ('d4', 'Insulin resistance in type 2 diabetes.'),
    ('d5', 'Statins reduce LDL cholesterol.'),
    ('d6', '')) t("_id", "text")`, `nano-mini/corpus/${split}-00000-of-00001.parquet`);
await copy(`SELECT * FROM (VALUES
    ('q1', 'How does aspirin work?'),
    ('q2', 'First-line drug for type 2 diabetes?'),
    ('q3', ''),
    ('q4', 'Cholesterol lowering drugs')) t("_id", "text")`, `nano-mini/queries/${split}-00000-of-00001.parquet`);
await copy(`SELECT * FROM (VALUES
    ('q1', 'd1'), ('q2', 'd3'), ('q2', 'd2'), ('q2', 'd3'), ('q3', 'd5')) t("query-id", "corpus-id")`,
  `nano-mini/qrels/${split}-00000-of-00001.parquet`);
await copy(`SELECT * FROM (VALUES
    ('q1', ['d1', 'd5', 'd3']),
    ('q2', ['d4', 'd5', 'd1']),
    ('q4', NULL::VARCHAR[])) t("query-id", "corpus-ids")`, `nano-mini/bm25/${split}-00000-of-00001.parquet`);
await copy(`SELECT * FROM (VALUES
    ('q1', ['d1', 'd5']),
    ('q2', ['d4', 'd5', 'd3'])) t("query-id", "corpus-ids")`, `nano-mini/reranking_hybrid/${split}-00000-of-00001.parquet`);

// Every column type the reader takes or refuses, over several row groups.
await copy(`SELECT * FROM (VALUES
    (1::INTEGER, 10::BIGINT, 1.0::DOUBLE, 2.5::FLOAT, true, 'a"b', ['x', 'y'], [1, 2]::BIGINT[], {'a': 1}, [['x']], MAP {'k': 1}),
    (-2, 9007199254740993, 0.1, NULL, false, NULL, [], [], {'a': 2}, [], MAP {}),
    (3, 30, 'NaN'::DOUBLE, 'inf'::FLOAT, NULL, 'é\n', NULL, NULL, NULL, NULL, NULL),
    (4, 40, 1e30, -0.0, true, '', ['z', NULL], [3], {'a': 4}, [['y', 'z']], MAP {'k': 2})
  ) t(i32, i64, f64, f32, flag, s, l, li, st, ll, m)`, '../../table/testdata/types.parquet', ', ROW_GROUP_SIZE 2');
