// Bare-metal allocation throughput, end to end: clients POST /v1/allocations and poll until the
// allocation is active; allocations per second = allocations / wall time. One `allot serve`
// process (built from `--root`, default this tree) per database × backend × concurrency, with
// fresh nodes each round and no simulated delays, measured as the Placement bench measures claims:
// a server of its own (not sharing the bench's event loop) and the lean keep-alive client. With
// --vs-real the same workload also runs against the real Ironic (Debian's python3-ironic, started
// by the launcher --real-ironic or ALLOT_REAL_IRONIC names: API and conductor in one process, fake
// hardware, SQLite). Prints one JSON document (and writes it to --out).
//
//   npm run bench:baremetal
//   npm run bench:baremetal -- --allocations 300 --concurrency 1,8,32 --dialects sqlite --backends database --sqlite-sync normal
//   npm run bench:baremetal -- --vs-real --real-ironic ../shared/reference/ironic/real_ironic.py --real-allocations 40
//   npm run build && npx tsx bench/baremetal.ts --root /path/to/other/tree   # another build, same bench
//
// PostgreSQL: DATABASE_URL (must allow CREATE DATABASE), else a throwaway embedded server.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { referenceFile } from '../scripts/references.js';
import { createTestDatabase, freePort, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { jsonCaller, makeNodes, percentile, round1 } from './lib/api-calls.js';
import { statementsSent } from './lib/count-queries.mjs';
import { cpuMeter } from './lib/procfs.js';
import { ownPostgresPids, startAllot } from './lib/targets.js';

const { values } = parseArgs({
  options: {
    allocations: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '1,4,16,64' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
    backends: { type: 'string', default: 'database,placement' },
    'sqlite-sync': { type: 'string', default: 'full' },
    'vs-real': { type: 'boolean', default: false },
    /** the real Ironic allocates a few per second: fewer allocations keep its rounds short */
    'real-allocations': { type: 'string', default: '40' },
    /** one client's allocation latency among this many matching available nodes (empty: skip) */
    'pool-sizes': { type: 'string', default: '10,10000' },
    /** allocations per pool size (each released again, so the pool keeps its size) */
    'pool-allocations': { type: 'string', default: '50' },
    /** the real Ironic's launcher real_ironic.py (or ALLOT_REAL_IRONIC); with --vs-real */
    'real-ironic': { type: 'string' },
    /** the allot tree whose dist/ is served (`npm run build` there first) */
    root: { type: 'string', default: fileURLToPath(new URL('..', import.meta.url)) },
    out: { type: 'string' },
  },
});
const ALLOCATIONS = Number(values.allocations);
const CONCURRENCY = values.concurrency!.split(',').map(Number);
const DIALECTS = values.dialects!.split(',') as Array<'sqlite' | 'postgres'>;
const BACKENDS = values.backends!.split(',') as Array<'database' | 'placement'>;
const SQLITE_SYNC = values['sqlite-sync'] as 'full' | 'normal' | 'off';

/** how often the poller asks which allocations are done (the granularity of the client-side latency) */
const POLL_MS = 5;

const call = jsonCaller({ 'x-openstack-ironic-api-version': '1.82' });

/** A bare-metal API to measure: started fresh for each round, stopped after it. */
interface Target {
  name: string;
  db: string;
  backend: string;
  allocations: number;
  /**
   * `statements`: what the server has sent so far (null: not counted); `roots`: the server's
   * process and its PostgreSQL's, whose CPU is measured (empty: not measured)
   */
  start(concurrency: number): Promise<{ base: string; statements(): Promise<number | null>; roots(): number[]; close(): Promise<void> }>;
}

const counter = pathToFileURL(path.join(import.meta.dirname, 'lib/count-queries.mjs')).href;

function allotTarget(dialect: 'sqlite' | 'postgres', backend: 'database' | 'placement', database: () => Promise<string>, workDir: string): Target {
  let round = 0;
  return {
    name: 'allot',
    db: dialect,
    backend,
    allocations: ALLOCATIONS,
    async start(concurrency) {
      const name = `allot-${dialect}-${backend}-${++round}`;
      // the count-queries preload writes the server's statement totals here
      const countFile = path.join(workDir, `${name}.statements.json`);
      const port = await freePort();
      const workers = Math.max(8, Math.min(concurrency, 64));
      const served = await startAllot({
        name,
        root: path.resolve(values.root!),
        db: await database(),
        logDir: workDir,
        mainPort: port,
        nodeArgs: ['--import', counter],
        env: { ALLOT_BENCH_QUERY_COUNT_FILE: countFile },
        extraArgs: [
          ...['--baremetal-backend', backend, '--sqlite-sync', SQLITE_SYNC, '--transition-time', '0', '--allocation-delay', '0'],
          ...['--conductor-id', `bench-${process.pid}-${round}`, '--allocation-workers', String(workers), '--pool-size', String(workers + 8)],
        ],
      });
      return {
        base: `http://127.0.0.1:${port}/baremetal`,
        statements: () => statementsSent(countFile),
        roots: () => [served.pid, ...(dialect === 'postgres' ? ownPostgresPids() : [])],
        close: served.stop,
      };
    },
  };
}

const execFileP = promisify(execFile);

function realIronicTarget(script: string): Target {
  return {
    name: 'real-ironic',
    db: 'sqlite',
    backend: 'ironic',
    allocations: Number(values['real-allocations']),
    async start() {
      const stateDir = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-ironic-'));
      const port = await freePort();
      await execFileP('/usr/bin/python3', [script, 'start', '--state-dir', stateDir, '--port', String(port)], { timeout: 180_000 });
      return {
        base: `http://127.0.0.1:${port}`,
        statements: async () => null,
        roots: () => [],
        close: async () => {
          await execFileP('/usr/bin/python3', [script, 'stop', '--state-dir', stateDir], { timeout: 60_000 }).catch(() => {});
          rmSync(stateDir, { recursive: true, force: true });
        },
      };
    },
  };
}

async function measure(target: Target, concurrency: number) {
  const ALLOCATIONS = target.allocations;
  const running = await target.start(concurrency);
  const base = running.base;
  try {
    const rc = `bench-${concurrency}`;
    await makeNodes(call, base, rc, ALLOCATIONS);
    const latencies: number[] = [];
    const serverSide: number[] = [];
    // One poller for all clients, so that watching costs the same at every concurrency: it lists
    // the allocations still `allocating`; a client's allocation missing from that list is done.
    const waiting = new Map<string, () => void>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        if (waiting.size) {
          const res = await call(base, 'GET', `/v1/allocations?state=allocating&resource_class=${rc}&fields=uuid`);
          const still = new Set((res.body.allocations as Array<{ uuid: string }>).map((a) => a.uuid));
          for (const [uuid, resolve] of waiting) if (!still.has(uuid)) resolve();
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })();
    let started = 0;
    const sent0 = await running.statements();
    const meter = running.roots().length ? cpuMeter(running.roots) : null;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (started < ALLOCATIONS) {
          started++;
          const t = performance.now();
          const created = await call(base, 'POST', '/v1/allocations', { resource_class: rc });
          if (created.status !== 201) throw new Error(`POST failed: ${JSON.stringify(created.body)}`);
          // Ironic's answer is the allocation as created; should a server answer it settled, no wait
          if (created.body.state === 'allocating') {
            await new Promise<void>((resolve) => waiting.set(created.body.uuid, resolve));
            waiting.delete(created.body.uuid);
          }
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = meter?.per(ALLOCATIONS) ?? null;
    polling = false;
    await poller;
    const sentAfter = await running.statements();
    const sent = sent0 === null || sentAfter === null ? null : sentAfter - sent0;
    const all: Array<{ state: string; created_at: string; updated_at: string }> = [];
    for (let url: string | undefined = `/v1/allocations?resource_class=${rc}&fields=state,created_at,updated_at`; url; ) {
      const page: { allocations: typeof all; next?: string } = (await call(base, 'GET', url)).body;
      all.push(...page.allocations);
      url = page.next?.slice(base.length);
    }
    const failed = all.filter((a) => a.state !== 'active').length;
    for (const a of all) serverSide.push(Date.parse(a.updated_at) - Date.parse(a.created_at));
    latencies.sort((a, b) => a - b);
    serverSide.sort((a, b) => a - b);
    return {
      target: target.name,
      db: target.db,
      backend: target.backend,
      concurrency,
      allocations: ALLOCATIONS,
      failed,
      seconds: round1(seconds),
      allocationsPerSecond: round1(ALLOCATIONS / seconds),
      /** SQL statements allot sent per allocation while they ran (BEGIN/COMMIT, the worker and the poller's reads included; none for the real Ironic) */
      statementsPerAllocation: sent === null ? null : round1(sent / ALLOCATIONS),
      /** CPU per allocation of the server (its poller's answers included), its PostgreSQL and this client (null for the real Ironic) */
      cpu,
      /** POST sent → client saw `active` (includes up to POLL_MS of polling) */
      latencyMs: { p50: round1(percentile(latencies, 50)), p95: round1(percentile(latencies, 95)), max: round1(latencies[latencies.length - 1]!) },
      /** created_at → updated_at of the allocation: the server's own time from accept to active */
      serverLatencyMs: { p50: percentile(serverSide, 50), p95: percentile(serverSide, 95) },
    };
  } finally {
    await running.close();
  }
}

/**
 * One client, among `size` matching available nodes: POST, wait until active, release it again
 * (the pool keeps its size); the latency should not grow with the size.
 */
async function measurePool(target: Target, size: number) {
  const running = await target.start(1);
  try {
    const rc = `pool-${size}`;
    await makeNodes(call, running.base, rc, size);
    const latencies: number[] = [];
    for (let i = 0; i < Number(values['pool-allocations']); i++) {
      const t = performance.now();
      let allocation = (await call(running.base, 'POST', '/v1/allocations', { resource_class: rc })).body;
      while (allocation.state === 'allocating') {
        await new Promise((r) => setTimeout(r, POLL_MS));
        allocation = (await call(running.base, 'GET', `/v1/allocations/${allocation.uuid}`)).body;
      }
      latencies.push(performance.now() - t);
      if (allocation.state !== 'active') throw new Error(`allocation failed: ${allocation.last_error}`);
      await call(running.base, 'DELETE', `/v1/allocations/${allocation.uuid}`);
    }
    latencies.sort((a, b) => a - b);
    return {
      target: target.name,
      db: target.db,
      backend: target.backend,
      poolSize: size,
      latencyMs: { p50: round1(percentile(latencies, 50)), p95: round1(percentile(latencies, 95)) },
    };
  } finally {
    await running.close();
  }
}

const results = [];
const pools = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-'));
// asked before anything starts: a missing launcher must not leave a PostgreSQL behind
const realIronic = values['vs-real'] ? referenceFile('real-ironic', 'bench:baremetal --vs-real', values['real-ironic']) : null;
const postgres = DIALECTS.includes('postgres') && !process.env.DATABASE_URL ? await startEmbeddedPostgres() : null;
const pgAdmin = process.env.DATABASE_URL ?? postgres?.adminUrl;
const targets: Target[] = [];
for (const dialect of DIALECTS)
  for (const backend of BACKENDS) {
    let round = 0;
    const database = async () =>
      dialect === 'sqlite' ? `sqlite:${path.join(dir, `${backend}-${++round}.db`)}` : await createTestDatabase(pgAdmin!, 'allot_bench');
    targets.push(allotTarget(dialect, backend, database, dir));
  }
if (realIronic) targets.push(realIronicTarget(realIronic));
try {
  for (const target of targets) {
    for (const concurrency of CONCURRENCY) {
      const result = await measure(target, concurrency);
      results.push(result);
      process.stderr.write(`${JSON.stringify(result)}\n`);
    }
    // the real Ironic takes minutes per thousand nodes: pool sizes are allot's question
    if (target.name !== 'allot') continue;
    for (const size of values['pool-sizes'] ? values['pool-sizes'].split(',').map(Number) : []) {
      const result = await measurePool(target, size);
      pools.push(result);
      process.stderr.write(`${JSON.stringify(result)}\n`);
    }
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const document = {
  benchmark: 'baremetal-allocations',
  what: `each client: POST /v1/allocations, wait until it is active (one shared poller lists the allocating ones every ${POLL_MS} ms), repeat; one allot serve process of its own (${path.resolve(values.root!)}), lean keep-alive client; SQLite synchronous=${SQLITE_SYNC.toUpperCase()}; pools: one client among N matching nodes`,
  loadAverage: os.loadavg().map(round1),
  machine: { cpus: os.cpus().length, node: process.version },
  results,
  pools,
};
if (values.out) writeFileSync(values.out, `${JSON.stringify(document, null, 2)}\n`);
console.log(JSON.stringify(document, null, 2));
