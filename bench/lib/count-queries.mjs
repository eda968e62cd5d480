// Counts the SQL statements an allot server sends: pg's Client#query (one round trip each) and
// better-sqlite3's run/get/all/iterate of a prepared statement (allot keeps statements prepared).
// Preloaded into an `allot serve` (node --import) by the benches, it writes the totals to
// ALLOT_BENCH_QUERY_COUNT_FILE every 100 ms, and a bench reads them with `statementsSent(file)` —
// so it reports statements per operation without touching allot's code.
//
// Its tracing variant: with ALLOT_BENCH_QUERY_TRACE_FILE too, it also keeps, per statement text
// (whitespace folded, cut at 160 characters), how many times it was sent and the milliseconds
// from sending to its answer (SQLite: that the statement ran on the main thread) and how many
// failed (an error answered: a refused compare-and-set), and writes them there as JSON ({text:
// {n, ms, failed}}, the busiest first) — where a request's round trips go.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Start counting in this process; the returned counts grow as statements are sent. */
function installStatementCounter() {
  const require = createRequire(path.join(process.cwd(), 'package.json'));
  const counts = { pg_queries: 0, sqlite_statements: 0 };
  const pg = require('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(...args) {
    counts.pg_queries++;
    if (!trace && !timeline) return query.apply(this, args);
    const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
    const key = String(text).replace(/\s+/g, ' ').trim().slice(0, 160);
    if (timeline) {
      const event = [connectionOf(this), key.slice(0, 60), performance.now(), 0];
      timeline.push(event);
      const result = query.apply(this, args);
      if (result && typeof result.then === 'function') {
        const done = () => (event[3] = performance.now());
        result.then(done, done);
      }
      return result;
    }
    const entry = trace.get(key) ?? { n: 0, ms: 0, failed: 0 };
    trace.set(key, entry);
    entry.n++;
    const started = performance.now();
    const result = query.apply(this, args);
    if (result && typeof result.then === 'function') {
      const done = () => (entry.ms += performance.now() - started);
      result.then(done, () => {
        done();
        entry.failed++;
      });
    }
    return result;
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
          if (!trace) return original.apply(this, params);
          const key = String(this.source).replace(/\s+/g, ' ').trim().slice(0, 160);
          const entry = trace.get(key) ?? { n: 0, ms: 0, failed: 0 };
          trace.set(key, entry);
          entry.n++;
          const started = performance.now();
          try {
            return original.apply(this, params);
          } catch (err) {
            entry.failed++;
            throw err;
          } finally {
            entry.ms += performance.now() - started;
          }
        };
      }
    }
    return statement;
  };
  return counts;
}

const file = process.env.ALLOT_BENCH_QUERY_COUNT_FILE;
const traceFile = process.env.ALLOT_BENCH_QUERY_TRACE_FILE;
/** statement text → times sent and milliseconds until answered (the tracing variant) */
const trace = file && traceFile ? new Map() : null;
// The timeline variant: with ALLOT_BENCH_QUERY_TIMELINE_FILE, every statement as [connection,
// text (60 characters), sent ms, answered ms] — where a transaction's time goes between its
// statements (what a row lock is held across).
const timelineFile = process.env.ALLOT_BENCH_QUERY_TIMELINE_FILE;
const timeline = file && timelineFile ? [] : null;
const connections = new WeakMap();
let connectionCount = 0;
const connectionOf = (client) => {
  if (!connections.has(client)) connections.set(client, ++connectionCount);
  return connections.get(client);
};
if (timeline) {
  let written = 0;
  setInterval(() => {
    if (timeline.length === written) return;
    written = timeline.length;
    writeFileSync(timelineFile, JSON.stringify(timeline));
  }, 2000).unref();
}
if (file) {
  const counts = installStatementCounter();
  let last = '';
  let lastTrace = '';
  setInterval(() => {
    const now = JSON.stringify(counts);
    if (now !== last) writeFileSync(file, now);
    last = now;
    if (trace?.size) {
      const busiest = [...trace].sort(([, a], [, b]) => b.n - a.n).map(([text, e]) => [text, { n: e.n, ms: Math.round(e.ms * 10) / 10, failed: e.failed }]);
      const text = JSON.stringify(Object.fromEntries(busiest), null, 1);
      if (text !== lastTrace) writeFileSync(traceFile, text);
      lastTrace = text;
    }
  }, 100).unref();
}

/** The statements a preloaded server has sent so far, by its file (0 before its first); waits for the file's next write. */
export async function statementsSent(countFile) {
  await new Promise((r) => setTimeout(r, 250));
  try {
    const c = JSON.parse(readFileSync(countFile, 'utf8'));
    return c.pg_queries + c.sqlite_statements;
  } catch {
    return 0; // no statement yet
  }
}
