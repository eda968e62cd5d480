// This machine's durable commit rate: the ceiling for "one durable commit per claim".
// PostgreSQL: pgbench -N (a small read-write transaction, one commit each) on the same server
// allot uses. SQLite: a loop of one-row write transactions in WAL mode with synchronous=FULL
// (an fsync of the WAL per commit), the way allot opens its file.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { round, summarize } from './stats.js';

const run = promisify(execFile);

function pgEnv(url: string): NodeJS.ProcessEnv {
  const u = new URL(url);
  return {
    ...process.env,
    PGHOST: decodeURIComponent(u.hostname), // a socket directory arrives %-encoded
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: u.pathname.slice(1),
  };
}

export async function pgbench(opts: { url: string; clients: number[]; seconds: number; log: (m: string) => void }) {
  const env = pgEnv(opts.url);
  const { stdout: version } = await run('pgbench', ['--version']);
  await run('pgbench', ['-i', '-s', '1', '-q'], { env });
  const rows = [];
  for (const c of opts.clients) {
    const threads = Math.min(c, os.cpus().length);
    const args = ['-N', '-n', '-M', 'prepared', '-c', String(c), '-j', String(threads), '-T', String(opts.seconds)];
    const { stdout } = await run('pgbench', args, { env, maxBuffer: 1 << 24 });
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
    const latency = Number(/latency average = ([\d.]+) ms/.exec(stdout)?.[1]);
    const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
    rows.push({ clients: c, threads, commits_per_s: round(tps, 1), latency_avg_ms: latency, failed_transactions: failed });
    opts.log(`  pgbench -N -c ${c}: ${round(tps, 1)} commits/s (latency ${latency} ms)`);
  }
  return { command: `pgbench -N -n -M prepared -c C -j min(C,cpus) -T ${opts.seconds} (scale 1)`, pgbench_version: version.trim(), results: rows };
}

/** One-row write transactions on a fresh SQLite file in WAL mode, for `seconds`, per sync mode. */
export function sqliteCommitRate(opts: { dir?: string; seconds: number; log: (m: string) => void }) {
  const results = [];
  for (const sync of ['FULL', 'NORMAL'] as const) {
    const file = path.join(opts.dir ?? os.tmpdir(), `allot-bench-commit-${process.pid}-${sync}.db`);
    const db = new BetterSqlite3(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${sync}`);
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
      const begin = db.prepare('BEGIN IMMEDIATE');
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      const commit = db.prepare('COMMIT');
      const latencies: number[] = [];
      const start = process.hrtime.bigint();
      const end = start + BigInt(Math.round(opts.seconds * 1e9));
      let n = 0;
      for (let now = start; now < end; ) {
        begin.run();
        insert.run(`row ${n}`);
        commit.run();
        n++;
        const after = process.hrtime.bigint();
        latencies.push(Number(after - now) / 1e6);
        now = after;
      }
      const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
      const rate = round(n / elapsed, 1);
      results.push({ synchronous: sync, journal_mode: 'WAL', commits: n, commits_per_s: rate, commit_latency: summarize(latencies) });
      opts.log(`  SQLite WAL synchronous=${sync}: ${rate} commits/s`);
    } finally {
      db.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    }
  }
  return { file_system_dir: opts.dir ?? os.tmpdir(), results };
}
