// Hot pools (issue 32): a small pool everyone wants. `--clients` clients over `--processes` allot
// serve processes (built from `--root`) on one database allocate single values from one pool of
// `--sizes` values with one strategy until it is full; then every client asks once more and must
// be refused `409 ids.pool_exhausted`. Per database × size × strategy: allocations/s (of the
// values the pool holds), latency p50/p99/max of the successful allocations, and whether
// exhaustion was exact (every value handed out once, no 409 before the pool was full).
//
//   npm run build && npx tsx bench/hot-pools.ts
//   npx tsx bench/hot-pools.ts --dialects postgres --sizes 4094 --strategies lowest --root /other/tree
//   npx tsx bench/hot-pools.ts --dialects postgres --allot-cpu-prof /tmp/prof && npx tsx bench/cpu-profile.ts /tmp/prof
//   npx tsx bench/hot-pools.ts --dialects postgres --sizes 4094 --strategies lowest --trace
//
// `--trace`: per row, also what an allocation cost — the servers' statements per allocation by
// text (sent, milliseconds from sending to the answer, refused; the count-queries preload), the
// mean number of PostgreSQL backends waiting for a lock (pg_locks sampled every 20 ms), and CPU
// per allocation of the servers, PostgreSQL and the clients (procfs cpuMeter).
//
// PostgreSQL: DATABASE_URL (must allow CREATE DATABASE), else a throwaway embedded server.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createTestDatabase, freePort, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { jsonCaller, percentile, round1 } from './lib/api-calls.js';
import { sampleLockWaiters } from './lib/lock-waiters.js';
import { cpuMeter } from './lib/procfs.js';
import { type Target, ownPostgresPids, startAllot } from './lib/targets.js';

const { values } = parseArgs({
  options: {
    dialects: { type: 'string', default: 'sqlite,postgres' },
    sizes: { type: 'string', default: '100,4094' },
    strategies: { type: 'string', default: 'lowest,random,highest,next_after_last' },
    clients: { type: 'string', default: '48' },
    processes: { type: 'string', default: '3' },
    root: { type: 'string', default: fileURLToPath(new URL('..', import.meta.url)) },
    out: { type: 'string' },
    /** run the servers with node --cpu-prof, profiles written here (npx tsx bench/cpu-profile.ts DIR) */
    'allot-cpu-prof': { type: 'string' },
    trace: { type: 'boolean', default: false },
  },
});
const DIALECTS = values.dialects!.split(',') as Array<'sqlite' | 'postgres'>;
const SIZES = values.sizes!.split(',').map(Number);
const STRATEGIES = values.strategies!.split(',');
const CLIENTS = Number(values.clients);
const call = jsonCaller({ 'x-auth-token': 'admin' });
const counter = pathToFileURL(path.join(import.meta.dirname, 'lib/count-queries.mjs')).href;

const round2 = (x: number) => Math.round(x * 100) / 100;

type Trace = Record<string, { n: number; ms: number; failed: number }>;

/** The statements the servers sent so far, by text, summed over their trace files. */
async function traced(files: string[]): Promise<Trace> {
  await new Promise((r) => setTimeout(r, 250)); // the preload writes every 100 ms
  const sum: Trace = {};
  for (const f of files) {
    let t: Trace = {};
    try {
      t = JSON.parse(readFileSync(f, 'utf8'));
    } catch {
      // nothing sent yet
    }
    for (const [text, e] of Object.entries(t)) {
      const s = (sum[text] ??= { n: 0, ms: 0, failed: 0 });
      s.n += e.n;
      s.ms += e.ms;
      s.failed += e.failed ?? 0;
    }
  }
  return sum;
}

/** What one row's allocations cost in statements, from the trace before and after it. */
function perAllocation(before: Trace, after: Trace, allocations: number) {
  const rows = Object.entries(after)
    .map(([text, e]) => {
      const b = before[text] ?? { n: 0, ms: 0, failed: 0 };
      return { text: text.slice(0, 100), n: e.n - b.n, ms: e.ms - b.ms, failed: e.failed - b.failed };
    })
    .filter((r) => r.n > 0)
    .sort((a, b) => b.n - a.n);
  const per = (x: number) => Math.round((x / allocations) * 1000) / 1000;
  return {
    statementsPerAllocation: per(rows.reduce((a, r) => a + r.n, 0)),
    statements: rows.slice(0, 8).map((r) => ({ text: r.text, perAllocation: per(r.n), msEach: round2(r.ms / r.n), refusedPerAllocation: per(r.failed) })),
  };
}

/** One pool of `size` values filled by every client with `strategy`, then asked once more by each. */
async function fill(bases: string[], pool: string, size: number, strategy: string, watch?: Watch) {
  const made = await call(bases[0]!, 'POST', '/pools', { name: pool, kind: 'integer', ranges: [`1-${size}`], strategy });
  if (made.status !== 201) throw new Error(`pool: ${made.status} ${JSON.stringify(made.body)}`);
  const latencies: number[] = [];
  const values = new Set<number>();
  let duplicates = 0;
  let exhaustedEarly = 0;
  let other = 0;
  let n = 0;
  let inFlight = 0;
  const watching = watch?.start();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const base = bases[c % bases.length]!;
      for (;;) {
        const owner = `o-${n++}`;
        inFlight++;
        const res = await call(base, 'POST', `/pools/${pool}/allocations`, { owner });
        inFlight--;
        if (res.status === 201) {
          latencies.push(res.ms);
          if (values.has(res.body.value)) duplicates++;
          values.add(res.body.value);
          continue;
        }
        if (res.status === 409 && res.body?.code === 'ids.pool_exhausted') {
          // early only if the pool could not be full yet: not even with every request still in
          // flight (answers not read yet) holding a value
          if (values.size + inFlight < size) exhaustedEarly++;
          return;
        }
        other++;
        return;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const costs = await watching?.stop(values.size);
  latencies.sort((a, b) => a - b);
  return {
    size,
    strategy,
    allocations: values.size,
    seconds: round1(seconds),
    allocationsPerSecond: round1(values.size / seconds),
    latencyMs: { p50: round1(percentile(latencies, 50)), p99: round1(percentile(latencies, 99)), max: round1(latencies[latencies.length - 1] ?? 0) },
    exact: duplicates === 0 && exhaustedEarly === 0 && other === 0 && values.size === size,
    ...(duplicates || exhaustedEarly || other ? { duplicates, exhaustedEarly, otherAnswers: other } : {}),
    ...(costs ? { costs } : {}),
  };
}

/** --trace: what a row's allocations cost (statements, lock waiters, CPU). */
interface Watch {
  start(): { stop(allocations: number): Promise<Record<string, unknown>> };
}

function watcher(traceFiles: string[], roots: () => number[], dbUrl: string | null): Watch {
  return {
    start() {
      const before = traced(traceFiles);
      const meter = cpuMeter(roots);
      const lockWaiters = dbUrl ? sampleLockWaiters(dbUrl) : null;
      return {
        async stop(allocations) {
          const cpu = meter.per(allocations);
          const meanLockWaiters = await lockWaiters?.stop();
          return {
            cpu,
            ...(meanLockWaiters !== undefined ? { meanLockWaiters: round2(meanLockWaiters) } : {}),
            ...perAllocation(await before, await traced(traceFiles), allocations),
          };
        },
      };
    },
  };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-hot-pools-'));
const postgres = DIALECTS.includes('postgres') && !process.env.DATABASE_URL ? await startEmbeddedPostgres() : null;
const pgAdmin = process.env.DATABASE_URL ?? postgres?.adminUrl;
const results: Array<Record<string, unknown>> = [];
try {
  for (const dialect of DIALECTS) {
    // SQLite is one writer: one process (several would queue on its file lock, not on allot)
    const processes = dialect === 'sqlite' ? 1 : Number(values.processes);
    const db = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'hot.db')}` : await createTestDatabase(pgAdmin!, 'allot_bench');
    const servers: Target[] = [];
    const bases: string[] = [];
    const traceFiles: string[] = [];
    try {
      for (let i = 0; i < processes; i++) {
        const port = await freePort();
        const trace = values.trace
          ? {
              nodeArgs: ['--import', counter],
              env: {
                ALLOT_BENCH_QUERY_COUNT_FILE: path.join(dir, `count-${i}.json`),
                ALLOT_BENCH_QUERY_TRACE_FILE: path.join(dir, `trace-${dialect}-${i}.json`),
              },
            }
          : null;
        if (trace) traceFiles.push(trace.env.ALLOT_BENCH_QUERY_TRACE_FILE);
        servers.push(
          await startAllot({
            name: `allot-${dialect}-${i}`,
            root: path.resolve(values.root!),
            db,
            logDir: dir,
            mainPort: port,
            nodeArgs: [
              ...(trace?.nodeArgs ?? []),
              ...(values['allot-cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['allot-cpu-prof'])}`] : []),
            ],
            ...(trace ? { env: trace.env } : {}),
          }),
        );
        bases.push(`http://127.0.0.1:${port}/ids/v1`);
      }
      // warm-up (V8's JIT, the connections' prepared statements), not measured; a random fill too:
      // its last requests take the locked path, which opens each process's connections (a first
      // random row on cold ones ran at half the rate: docs/performance.md, "Hot pools")
      await fill(bases, 'warmup', 2000, 'lowest');
      await fill(bases, 'warmup-random', 200, 'random');
      const roots = () => [...servers.map((s) => s.pid), ...(dialect === 'postgres' ? ownPostgresPids() : [])];
      const watch = values.trace ? watcher(traceFiles, roots, dialect === 'postgres' ? db : null) : undefined;
      for (const size of SIZES) {
        for (const strategy of STRATEGIES) {
          const r = { db: dialect, processes, clients: CLIENTS, ...(await fill(bases, `hot-${size}-${strategy}`, size, strategy, watch)) };
          results.push(r);
          process.stderr.write(`${JSON.stringify(r)}\n`);
        }
      }
    } finally {
      for (const s of servers) await s.stop();
    }
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const document = {
  benchmark: 'hot-pools',
  what: `${CLIENTS} clients over ${values.processes} allot serve processes (SQLite: 1) fill one integer pool of each size with one strategy until it is full, then each is refused once; allocations/s of the pool's values, latency of the successful allocations, exact = every value once and no exhaustion before full`,
  loadAverage: os.loadavg().map(round1),
  machine: { cpus: os.cpus().length, node: process.version },
  results,
};
if (values.out) writeFileSync(values.out, `${JSON.stringify(document, null, 2)}\n`);
console.log(JSON.stringify(document, null, 2));
