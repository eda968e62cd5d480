// Preloaded into an allot server by `bench:placement --count-queries` (node --import): counts the
// SQL statements the server sends (pg: Client#query, one round trip each; better-sqlite3: each
// run/get/all/iterate of a prepared statement, since allot keeps statements prepared) and writes the totals to the file
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
  let counting = false;
  Sqlite.prototype.prepare = function countingPrepare(...args) {
    const statement = prepare.apply(this, args);
    if (!counting) {
      // The Statement class is not exported: count on its prototype, found from the first one.
      counting = true;
      const proto = Object.getPrototypeOf(statement);
      for (const method of ['run', 'get', 'all', 'iterate']) {
        const original = proto[method];
        proto[method] = function counted(...params) {
          counts.sqlite_statements++;
          return original.apply(this, params);
        };
      }
    }
    return statement;
  };
  let last = '';
  setInterval(() => {
    const now = JSON.stringify(counts);
    if (now !== last) writeFileSync(file, now);
    last = now;
  }, 100).unref();
}
