// `npm run bench:candidates [-- options]`: latency of GET /allocation_candidates at 1 000 and
// 10 000 providers, on SQLite and PostgreSQL, printed as JSON.
//
// For each database and size: fill a fresh database directly (bench/lib/fill-candidates.ts: N root
// providers with VCPU, MEMORY_MB and DISK_GB, a trait on every 4th, half of them partly used), start a real
// `allot serve` process on it (optionally under `node --cpu-prof`), and time three queries over
// HTTP one at a time: limit=50, a required trait with limit=50, and no limit. Each result has
// client-side percentiles, the server's own Server-Timing phases (parse, load, search,
// render) as medians, the response size, and with --profile the top self-time functions and a
// breakdown by module of the server's CPU profile. `inProcess` repeats the two halves of the work
// in this process without HTTP: loading the provider model (wall ms, SQL bound) and the pure
// search over it (CPU ms), so a busy machine distorts the search figure less.
//
//   npm run bench:candidates -- --sizes 1000,10000 --dialects sqlite,postgres --requests 100 --profile
//
// PostgreSQL: DATABASE_URL (a server that allows CREATE DATABASE) or a throwaway embedded one.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { send } from '../src/client/http.js';
import { defaultConfig } from '../src/config.js';
import { dialectOf } from '../src/db/database.js';
import { openDatabase } from '../src/db/open.js';
import type { CandidateRequest } from '../src/placement/candidates/model.js';
import { searchCandidates } from '../src/placement/candidates/search.js';
import { NameCache } from '../src/placement/store/names.js';
import { ProviderIndex } from '../src/placement/store/provider-index.js';
import { createTestDatabase, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { fillCandidateProviders } from './lib/fill-candidates.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
    requests: { type: 'string', default: '100' },
    'unlimited-requests': { type: 'string', default: '20' },
    profile: { type: 'boolean', default: false },
    /** measure on these databases as they are (filled before, e.g. by an earlier --keep run) instead of filling new ones */
    db: { type: 'string', multiple: true },
    /** serve from this tree's dist/ (to measure another build against the same databases) */
    root: { type: 'string' },
    /** full index loads timed in this process per query (inProcess); 0 skips them */
    'in-process-runs': { type: 'string', default: '10' },
    /** seconds a started server has to answer /readyz 200 (a 1 000 000-provider index load takes tens of seconds) */
    'ready-timeout': { type: 'string', default: '600' },
    /** keep the databases and profiles (their directory is printed on stderr) */
    keep: { type: 'boolean', default: false },
  },
});
const sizes = args.sizes!.split(',').map(Number);
const serveRoot = path.resolve(args.root ?? root);
const dialects = args.dialects!.split(',') as Array<'sqlite' | 'postgres'>;

const QUERIES = {
  limit50: 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:10&limit=50',
  requiredTrait: 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:10&required=HW_CPU_X86_AVX2&limit=50',
  noLimit: 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:10',
} as const;

interface Server {
  url: string;
  proc: ChildProcess;
  /** from spawn to listening, and to /readyz answering 200, ms */
  listeningMs: number;
  readyMs: number;
  /** what the server logged as its first full provider index load ('placement provider index loaded'), ms */
  indexLoadMs(): number | null;
  stop(): Promise<void>;
}

async function serve(dbUrl: string, profileDir: string | null): Promise<Server> {
  const spawned = performance.now();
  const node = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const proc = spawn(
    process.execPath,
    [...node, path.join(serveRoot, 'dist/cli/main.js'), 'serve', '--db', dbUrl, '--port', '0', '--log-level', 'info', '--sqlite-sync', 'normal'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  const main = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"api":"main".*?"port":(\d+)/.exec(out);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    proc.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void exited.then(() => reject(new Error(`server exited:\n${out}`)));
  });
  const listeningMs = Math.round(performance.now() - spawned);
  // ready: as a load balancer sees it (a build that loads its index on first use says so at once);
  // a server that exits meanwhile ends the wait, one that never gets ready is stopped
  let exitedEarly = false;
  void exited.then(() => (exitedEarly = true));
  const readyBy = performance.now() + Number(args['ready-timeout']) * 1000;
  while ((await send(fetch, { method: 'GET', url: `${main}/readyz`, headers: {} }).catch(() => null))?.status !== 200) {
    if (exitedEarly) throw new Error(`server exited before it was ready:\n${out}`);
    if (performance.now() > readyBy) {
      proc.kill('SIGKILL');
      await exited;
      throw new Error(`server not ready within ${args['ready-timeout']} s:\n${out.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url: `${main}/placement`,
    proc,
    listeningMs,
    readyMs: Math.round(performance.now() - spawned),
    indexLoadMs: () => {
      const m = /"ms":(\d+)[^\n]*placement provider index loaded/.exec(out);
      return m ? Number(m[1]) : null;
    },
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (n: number) => Math.round(n * 100) / 100;

async function measure(url: string, query: string, count: number) {
  const latencies: number[] = [];
  const phases = new Map<string, number[]>();
  let bytes = 0;
  let candidates = 0;
  const once = async () => {
    const t0 = performance.now();
    const res = await send(fetch, {
      method: 'GET',
      url: `${url}/allocation_candidates?${query}`,
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
    });
    const body = res.text;
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${res.status} ${body.slice(0, 300)}`);
    for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
      const m = /^\s*(\w+);dur=([\d.]+)/.exec(part);
      if (m) phases.set(m[1]!, [...(phases.get(m[1]!) ?? []), Number(m[2])]);
    }
    bytes = body.length;
    candidates = (JSON.parse(body) as { allocation_requests: unknown[] }).allocation_requests.length;
    return ms;
  };
  for (let i = 0; i < Math.min(5, count); i++) await once(); // warm up (JIT, caches)
  phases.clear();
  const started = performance.now();
  for (let i = 0; i < count; i++) latencies.push(await once());
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  return {
    requests: count,
    candidates,
    responseBytes: bytes,
    ms: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1]!),
      mean: round(latencies.reduce((a, b) => a + b, 0) / count),
    },
    perSecond: round((count / elapsed) * 1000),
    serverMedianMs: Object.fromEntries([...phases].map(([name, xs]) => [name, median(xs)])),
  };
}

/** Top self-time functions and a per-module breakdown of a .cpuprofile. */
function summarizeProfile(dir: string) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return null;
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }>;
    samples: number[];
    timeDeltas: number[];
  };
  const selfUs = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (!us) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^file:\/\//, '').replace(`${root}/`, '');
    const module =
      url === ''
        ? functionName.startsWith('(')
          ? functionName
          : 'node (native)'
        : file.includes('node_modules/')
          ? file
              .split('node_modules/')[1]!
              .split('/')
              .slice(0, file.split('node_modules/')[1]!.startsWith('@') ? 2 : 1)
              .join('/')
          : file.startsWith('node:')
            ? 'node:internal'
            : file.startsWith('dist/')
              ? file.split('/').slice(0, 3).join('/')
              : file;
    if (module === '(idle)') continue;
    total += us;
    const key = `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), pct: round((us / total) * 100) }));
  return { busyMs: Math.round(total / 1000), byModule: top(byModule, 12), topFunctions: top(byFunction, 15) };
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | null {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Load the provider index and run the search in this process, for each query: medians of `count` runs. */
async function inProcess(dbUrl: string, count: number) {
  const database = await openDatabase(dbUrl);
  try {
    const index = new ProviderIndex(database, new NameCache(), { reloadMs: defaultConfig().candidateIndexReload });
    const request = (required: string[][]): CandidateRequest => ({
      groups: [
        {
          suffix: '',
          resources: new Map([
            ['VCPU', 1],
            ['MEMORY_MB', 1024],
            ['DISK_GB', 10],
          ]),
          requiredTraits: required,
          forbiddenTraits: new Set(),
          memberOf: [],
          forbiddenAggregates: new Set(),
          inTreeRoot: null,
        },
      ],
      isolate: false,
      rootRequired: new Set(),
      rootForbidden: new Set(),
      sameSubtrees: [],
      nestedAware: true,
    });
    const cases = {
      limit50: { request: request([]), max: 50 },
      requiredTrait: { request: request([['HW_CPU_X86_AVX2']]), max: 50 },
      noLimit: { request: request([]), max: 10_000 },
    };
    const out: Record<string, unknown> = {};
    const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
    for (const [name, c] of Object.entries(cases)) {
      const loadMs: number[] = [];
      const searchCpuMs: number[] = [];
      let candidates = 0;
      for (let i = 0; i < count + 2; i++) {
        // loadMs: a full (re)load of the provider index, which a server does once, not per request
        const t0 = performance.now();
        index.invalidate('all');
        const model = await index.current();
        const t1 = performance.now();
        const cpu0 = process.cpuUsage();
        candidates = searchCandidates(model, c.request, { maxCandidates: c.max, strategy: 'stable' }).candidates.length;
        const cpu = process.cpuUsage(cpu0);
        if (i >= 2) {
          loadMs.push(t1 - t0);
          searchCpuMs.push((cpu.user + cpu.system) / 1000);
        }
      }
      out[name] = { candidates, loadMs: median(loadMs), searchCpuMs: median(searchCpuMs) };
    }
    return out;
  } finally {
    await database.close();
  }
}

const results: unknown[] = [];
let embedded: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-candidates-'));
try {
  if (args.db) {
    for (const dbUrl of args.db) await measureServing(dbUrl, null);
  } else {
    for (const dialect of dialects) {
      for (const n of sizes) {
        let dbUrl: string;
        if (dialect === 'sqlite') dbUrl = `sqlite:${path.join(tmp, `bench-${n}.db`)}`;
        else {
          let admin = process.env.DATABASE_URL;
          if (!admin) {
            embedded ??= await startEmbeddedPostgres();
            admin = embedded.adminUrl;
          }
          dbUrl = await createTestDatabase(admin, 'allot_bench');
        }
        const t0 = performance.now();
        await fillCandidateProviders(dbUrl, dialect, n);
        await measureServing(dbUrl, Math.round(performance.now() - t0));
        if (args.keep) console.error(`# kept ${dbUrl}`);
      }
    }
  }
} finally {
  if (embedded) await embedded.stop();
  if (args.keep) console.error(`# kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}

/**
 * Start a server on a filled database and measure: the time to ready (spawn → /readyz 200) and to
 * the first candidates answer, the three queries, the server's memory; and the load and search in
 * this process.
 */
async function measureServing(dbUrl: string, setupMs: number | null): Promise<void> {
  const dialect = dialectOf(dbUrl);
  const providers = await countProviders(dbUrl);
  const runs = Number(args['in-process-runs']);
  const local = runs > 0 && !args.root ? await inProcess(dbUrl, Math.min(runs, Number(args['unlimited-requests']))) : undefined;
  const profileDir = args.profile ? mkdtempSync(path.join(tmp, 'prof-')) : null;
  const server = await serve(dbUrl, profileDir);
  // stopped however the measuring ends: a failed first request leaves no server behind
  try {
    const t2 = performance.now();
    const first = await send(fetch, {
      method: 'GET',
      url: `${server.url}/allocation_candidates?${QUERIES.limit50}`,
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
    });
    if (first.status !== 200) throw new Error(`first request: ${first.status} ${first.text.slice(0, 300)}`);
    const firstRequestMs = Math.round(performance.now() - t2);
    const rssAtReady = rssMb(server.proc.pid!);
    const queries: Record<string, unknown> = {};
    queries.limit50 = await measure(server.url, QUERIES.limit50, Number(args.requests));
    queries.requiredTrait = await measure(server.url, QUERIES.requiredTrait, Number(args.requests));
    queries.noLimit = await measure(server.url, QUERIES.noLimit, Number(args['unlimited-requests']));
    const rss = rssMb(server.proc.pid!);
    const peak = rssMb(server.proc.pid!, 'VmHWM');
    await server.stop(); // before the profile is read: the server writes it as it exits
    results.push({
      dialect,
      providers,
      served: serveRoot,
      setupMs,
      // spawn → listening; → /readyz 200; the first candidates request after that; the sum: how long a restarted process cannot answer
      startMs: server.listeningMs,
      readyMs: server.readyMs,
      indexLoadMs: server.indexLoadMs(),
      firstRequestMs,
      untilFirstAnswerMs: server.readyMs + firstRequestMs,
      serverRssAtReadyMb: rssAtReady,
      serverRssMb: rss,
      serverPeakRssMb: peak,
      queries,
      inProcess: local,
      profile: profileDir ? summarizeProfile(profileDir) : undefined,
    });
  } finally {
    await server.stop();
  }
  // each result as it is made: a later failure (or a long run stopped) keeps the earlier ones
  console.error(`# done: ${JSON.stringify(results.at(-1))}`);
}

async function countProviders(dbUrl: string): Promise<number> {
  const database = await openDatabase(dbUrl);
  try {
    const row = await database.db
      .selectFrom('resource_providers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  } finally {
    await database.close();
  }
}

// Other work on the machine shows in every latency: say how busy it was.
console.log(
  JSON.stringify(
    { bench: 'allocation_candidates', node: process.version, cpus: os.cpus().length, loadAverage: os.loadavg().map(round), queries: QUERIES, results },
    null,
    2,
  ),
);
