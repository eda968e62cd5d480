// A PostgreSQL server of a test's own, for fault tests: it can be stopped and started again on the
// same data, frozen (every process of the cluster SIGSTOPped, as a hung host would be), and have its
// backends terminated. The shared server of the run (test/helpers/postgres.ts) is never touched.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { EmbeddedPostgres, freePort, startOrCleanUp } from './postgres.js';

export interface ControlledPostgres {
  /** URL of a database on this server */
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** fast shutdown (connections are closed), data kept */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP (true) or SIGCONT (false) every process of the cluster */
  freeze(frozen: boolean): void;
  /** pg_terminate_backend every session of `database`; resolves to how many */
  terminateBackends(database: string): Promise<number>;
  /** stop and delete everything */
  destroy(): Promise<void>;
}

export async function startControlledPostgres(): Promise<ControlledPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-faults-pg-'));
  chmodSync(dir, 0o777);
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  mkdirSync(socketDir, { mode: 0o777 });
  chmodSync(socketDir, 0o777);
  const port = await freePort();
  let log = '';
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=200', '-c', `unix_socket_directories=${socketDir}`, '-c', 'fsync=off'],
    onLog: (message) => (log = (log + message).slice(-4_000)),
    onError: () => {},
  });
  await startOrCleanUp(server, dir, dataDir, () => log);
  let running = true;
  const url = (database: string) => `postgres://postgres:postgres@127.0.0.1:${port}/${database}`;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url('postgres') });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const postmasterPid = () => Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    url,
    createDatabase: async (name) => {
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      return url(name);
    },
    stop: async () => {
      if (!running) return;
      running = false;
      await server.stop();
    },
    start: async () => {
      if (running) return;
      await server.start();
      running = true;
    },
    freeze: (frozen) => {
      const root = postmasterPid();
      for (const pid of [root, ...childrenOf(root)]) {
        try {
          process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
        } catch {
          /* exited meanwhile */
        }
      }
    },
    terminateBackends: (database) =>
      admin(async (c) => {
        const r = await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
        return r.rowCount ?? 0;
      }),
    destroy: async () => {
      if (running) await server.stop().catch(() => {});
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Direct children of a process, from /proc. */
function childrenOf(parent: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}
