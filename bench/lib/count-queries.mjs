// Preloaded into an allot server by `bench:placement --count-queries` (node --import): counts the
// SQL statements the server sends (pg: Client#query, one round trip each; better-sqlite3:
// Database#prepare, which Kysely calls once per statement) and writes the totals to the file
// named by ALLOT_BENCH_QUERY_COUNT_FILE every 100 ms, so the bench can report statements per
// operation without touching allot's code.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const file = process.env.ALLOT_BENCH_QUERY_COUNT_FILE;
if (file) {
  const require = createRequire(path.join(process.cwd(), 'package.json'));
  const counts = { pg_queries: 0, sqlite_statements: 0 };
  const pg = require('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(...args) {
    counts.pg_queries++;
    return query.apply(this, args);
  };
  const Sqlite = require('better-sqlite3');
  const prepare = Sqlite.prototype.prepare;
  Sqlite.prototype.prepare = function countedPrepare(...args) {
    counts.sqlite_statements++;
    return prepare.apply(this, args);
  };
  let last = '';
  setInterval(() => {
    const now = JSON.stringify(counts);
    if (now !== last) writeFileSync(file, now);
    last = now;
  }, 100).unref();
}
