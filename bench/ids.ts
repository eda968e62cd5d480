// Benchmark of identifier allocation: allocations per second per strategy and pool size, over
// HTTP to an in-process server, on SQLite and PostgreSQL. The point it makes: a 16M-value VNI
// pool with a million values already taken (scattered at random, the worst case for free-range
// fragmentation) allocates about as fast as an empty one, because every strategy is a few index
// probes on the free spans, not a scan.
//
//   npm run bench:ids                          # both databases, 1M seeded, 2000 allocations per case
//   npm run bench:ids -- --db sqlite --seed 200000 --allocations 1000 --concurrency 8 --sqlite-sync normal
//
// `--served` measures issue 15's paths instead, against `allot serve` processes built from
// `--root` (bench/lib/ids-served.ts): one pool allocated by 48 clients over 3 processes, the bulk
// fill rate (imports of 100, then of 10 000 up to `--fill` values held, 1 M by default), and
// listings and allocations with the pool full, after `--warmup` allocations (1 000) that are not
// measured; `--out FILE` writes the JSON there, `--allot-cpu-prof
// DIR` the servers' CPU profiles there (npx tsx bench/cpu-profile.ts DIR):
//
//   npm run build && npm run bench:ids -- --served --db postgres --root /path/to/other/tree
//
// PostgreSQL: DATABASE_URL (allowing CREATE DATABASE) or a throwaway embedded server. Prints JSON.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { progressBar } from '../src/cli/progress.js';
import { send } from '../src/client/http.js';
import { defaultConfig } from '../src/config.js';
import { importAllocations } from '../src/ids/services/allocations.js';
import { startAllot } from '../src/server/start.js';
import { runServed, servedTable } from './lib/ids-served.js';
import { createTestDatabase, startEmbeddedPostgres } from '../test/helpers/postgres.js';

const { values: opts } = parseArgs({
  options: {
    db: { type: 'string', default: 'both' },
    seed: { type: 'string', default: '1000000' },
    allocations: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    'sqlite-sync': { type: 'string', default: 'full' },
    served: { type: 'boolean', default: false },
    root: { type: 'string', default: process.cwd() },
    processes: { type: 'string', default: '3' },
    clients: { type: 'string', default: '48' },
    /** --served: allocations before anything is measured (in a pool of their own) */
    warmup: { type: 'string', default: '1000' },
    'small-batch': { type: 'string', default: '100' },
    'small-values': { type: 'string', default: '20000' },
    fill: { type: 'string', default: '1000000' },
    out: { type: 'string' },
    'fill-batch': { type: 'string', default: '10000' },
    'fill-timeout': { type: 'string', default: '240' },
    pages: { type: 'string', default: '50' },
    /** --served: run the servers with node --cpu-prof, profiles written to DIR (npx tsx bench/cpu-profile.ts DIR) */
    'allot-cpu-prof': { type: 'string' },
  },
});
const SEED = Number(opts.seed);
const N = Number(opts.allocations);
const CONCURRENCY = Number(opts.concurrency);
const STRATEGIES = ['lowest', 'random', 'next_after_last'] as const;
const VNI_MAX = 16_777_215;

interface Result {
  db: string;
  pool: string;
  size: number;
  allocated_before: number;
  strategy: string;
  allocations: number;
  concurrency: number;
  seconds: number;
  per_second: number;
  p50_ms: number;
  p99_ms: number;
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await send(fetch, { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, json: JSON.parse(res.text) };
    } catch (err) {
      // a kept-alive connection the server closed while we were seeding: retry on a new one
      if (attempt >= 3) throw err;
    }
  }
}

const progress = (message: string) => process.stderr.write(`# ${new Date().toISOString()} ${message}\n`);

async function measure(base: string, db: string, pool: string, size: number, before: number, strategy: string, tag: string): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= N) return;
        const t = performance.now();
        const res = await post(`${base}/ids/v1/pools/${pool}/allocations`, { owner: `${tag}-${i}`, strategy });
        latencies.push(performance.now() - t);
        if (res.status !== 201) throw new Error(`allocation failed: ${res.status} ${JSON.stringify(res.json)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]! * 100) / 100;
  return {
    db,
    pool,
    size,
    allocated_before: before,
    strategy,
    allocations: N,
    concurrency: CONCURRENCY,
    seconds: Math.round(seconds * 100) / 100,
    per_second: Math.round(N / seconds),
    p50_ms: q(0.5),
    p99_ms: q(0.99),
  };
}

/** `count` distinct values scattered uniformly over [1, max], as import items. */
function scattered(count: number, max: number) {
  const taken = new Set<number>();
  while (taken.size < count) taken.add(1 + Math.floor(Math.random() * max));
  return [...taken].map((value, i) => ({ value, owner: `seed-${i}` }));
}

async function runOn(db: string, url: string): Promise<{ results: Result[]; seed_seconds: number }> {
  const sqliteSync = opts['sqlite-sync'] as 'full' | 'normal' | 'off';
  const running = await startAllot({ ...defaultConfig(), db: url, port: 0, logLevel: 'silent', idsWorkerIntervalMs: 60_000, sqliteSync });
  await running.ready;
  const base = running.urls.main!;
  const results: Result[] = [];
  progress(`${db}: measuring`);
  try {
    for (const strategy of STRATEGIES) {
      await post(`${base}/ids/v1/pools`, { name: `vlan-${strategy}`, kind: 'integer', ranges: ['1-4094'] });
      results.push(await measure(base, db, `vlan-${strategy}`, 4094, 0, strategy, 'b'));
    }
    for (const strategy of STRATEGIES) {
      await post(`${base}/ids/v1/pools`, { name: `vni-empty-${strategy}`, kind: 'integer', ranges: [`1-${VNI_MAX}`] });
      results.push(await measure(base, db, `vni-empty-${strategy}`, VNI_MAX, 0, strategy, 'b'));
    }
    await post(`${base}/ids/v1/pools`, { name: 'vni-seeded', kind: 'integer', ranges: [`1-${VNI_MAX}`] });
    progress(`${db}: seeding ${SEED} scattered allocations`);
    const seedStart = performance.now();
    const items = scattered(SEED, VNI_MAX);
    const bar = progressBar('seeding', items.length);
    for (let i = 0; i < items.length; i += 250_000) {
      const outcome = await importAllocations(running.context.ids, 'vni-seeded', items.slice(i, i + 250_000), 'abort');
      if (outcome.imported !== Math.min(250_000, items.length - i)) throw new Error('seeding failed');
      bar.advance(outcome.imported);
    }
    bar.finish();
    const seedSeconds = Math.round((performance.now() - seedStart) / 10) / 100;
    progress(`${db}: seeded in ${seedSeconds} s`);
    for (const strategy of STRATEGIES) results.push(await measure(base, db, 'vni-seeded', VNI_MAX, SEED, strategy, `b-${strategy}`));
    return { results, seed_seconds: seedSeconds };
  } finally {
    await running.close();
  }
}

if (opts.served) {
  const runs: Record<string, unknown> = {};
  for (const db of opts.db === 'both' ? (['sqlite', 'postgres'] as const) : [opts.db as 'sqlite' | 'postgres']) {
    runs[db] = await runServed({
      root: path.resolve(opts.root),
      db,
      processes: Number(opts.processes),
      clients: Number(opts.clients),
      allocations: N,
      warmup: Number(opts.warmup),
      smallBatch: Number(opts['small-batch']),
      smallValues: Number(opts['small-values']),
      held: Number(opts.fill),
      fillBatch: Number(opts['fill-batch']),
      fillTimeoutS: Number(opts['fill-timeout']),
      pages: Number(opts.pages),
      cpuProfDir: opts['allot-cpu-prof'] && path.resolve(opts['allot-cpu-prof']),
      progress,
    });
  }
  const doc = { benchmark: 'ids-served', node: process.version, cpus: os.cpus().length, at: new Date().toISOString(), runs, table: servedTable(runs) };
  const text = JSON.stringify(doc, null, 2);
  if (opts.out) writeFileSync(opts.out, `${text}\n`);
  else console.log(text);
  process.exit(0);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-ids-'));
const out: Record<string, unknown> = {
  benchmark: 'ids-allocation',
  node: process.version,
  cpus: os.cpus().length,
  settings: { seed: SEED, allocations_per_case: N, concurrency: CONCURRENCY, sqlite_sync: opts['sqlite-sync'], transport: 'HTTP, in-process server' },
  runs: {},
};
const runs = out.runs as Record<string, unknown>;
try {
  if (opts.db === 'both' || opts.db === 'sqlite') runs.sqlite = await runOn('sqlite', `sqlite:${path.join(dir, 'bench.db')}`);
  if (opts.db === 'both' || opts.db === 'postgres') {
    const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres();
    try {
      runs.postgres = await runOn('postgres', await createTestDatabase(process.env.DATABASE_URL ?? embedded!.adminUrl, 'allot_bench'));
    } finally {
      await embedded?.stop();
    }
  }
  // The claim in one number per database and strategy: seeded rate / empty rate (1.0 = no slowdown).
  const ratios: Record<string, Record<string, number>> = {};
  for (const [db, run] of Object.entries(runs) as Array<[string, { results: Result[] }]>) {
    ratios[db] = {};
    for (const s of STRATEGIES) {
      const empty = run.results.find((r) => r.pool === `vni-empty-${s}`)!;
      const seeded = run.results.find((r) => r.pool === 'vni-seeded' && r.strategy === s)!;
      ratios[db]![s] = Math.round((seeded.per_second / empty.per_second) * 100) / 100;
    }
  }
  out.seeded_vs_empty_rate = ratios;
  console.log(JSON.stringify(out, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
