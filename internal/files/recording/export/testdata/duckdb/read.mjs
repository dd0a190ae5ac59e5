// SPDX-License-Identifier: Apache-2.0

// Reads a Parquet file with DuckDB and prints, as one JSON object, the
// file's Parquet schema (parquet_schema: physical, logical type and
// repetition of each column), the columns as DuckDB reads them (name and
// DuckDB type) and the rows in file order, every value as text so that
// nothing is rounded on the way: integers in decimal, doubles in the
// shortest form that reads back exactly, timestamps as nanoseconds since
// the Unix epoch (DuckDB 1.5 reads a UTC-adjusted TIMESTAMP(NANOS) as
// TIMESTAMP WITH TIME ZONE, to the microsecond), null as null.
//
//	node read.mjs FILE.parquet
import { DuckDBInstance } from '@duckdb/node-api';

const file = process.argv[2];
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const quoted = "'" + file.replaceAll("'", "''") + "'";
const src = `read_parquet(${quoted}, file_row_number = true)`;
const schema = await conn.runAndReadAll(
  `SELECT name, type, logical_type, repetition_type FROM parquet_schema(${quoted}) WHERE type IS NOT NULL`);
const desc = await conn.runAndReadAll(`DESCRIBE SELECT * EXCLUDE (file_row_number) FROM ${src}`);
const columns = desc.getRowObjectsJson().map((c) => ({ name: c.column_name, type: c.column_type }));
const text = (c) => {
  const id = '"' + c.name.replaceAll('"', '""') + '"';
  if (c.type.startsWith('TIMESTAMP')) {
    return `CAST(epoch_ns(${id}) AS VARCHAR)`;
  }
  return `CAST(${id} AS VARCHAR)`;
};
const query = `SELECT ${columns.map(text).join(', ')} FROM ${src} ORDER BY file_row_number`;
const result = await conn.runAndReadAll(query);
process.stdout.write(JSON.stringify({ schema: schema.getRowObjectsJson(), columns, rows: result.getRowsJson() }));
