// Real allot servers for tests: in this process (fast, one per test file) or as separate
// `allot serve` processes (for claims about several processes, restarts and signals).
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Config, defaultConfig } from '../../src/config.js';
import { type Dependencies, type RunningAllot, startAllot } from '../../src/server/start.js';
import { type TestDialect, freshDatabaseUrl } from './databases.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface TestServer {
  /** main port base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** where the Placement API is (main port + /placement) */
  placementUrl: string;
  running: RunningAllot;
  close(): Promise<void>;
}

export async function startServer(overrides: Partial<Config> & { db: string }, dependencies: Dependencies = {}): Promise<TestServer> {
  const config: Config = { ...defaultConfig(), port: 0, logLevel: (process.env.ALLOT_TEST_LOG ?? 'silent') as Config['logLevel'], ...overrides };
  const running = await startAllot(config, dependencies);
  await running.ready;
  const url = running.urls.main!;
  return { url, placementUrl: `${url}/placement`, running, close: () => running.close() };
}

/** For the enclosing describe: a server on a fresh database of this dialect, started before its tests. */
export function serverFor(dialect: TestDialect, started: (server: TestServer) => void): void {
  let server: TestServer | undefined;
  before(async () => {
    server = await startServer({ db: await freshDatabaseUrl(dialect) });
    started(server);
  });
  after(() => server?.close());
}

export interface SpawnedServer {
  url: string;
  placementUrl: string;
  process: ChildProcess;
  /** everything the process wrote, for failure messages */
  output(): string;
  /** SIGTERM and wait for exit; resolves to the exit code */
  stop(): Promise<number | null>;
  /** SIGKILL, no goodbye */
  kill(): Promise<void>;
}

/**
 * Start `allot serve` (the built dist/) as its own process and wait until it is ready (its database
 * migrated), or with `{ waitFor: 'listening' }` only until it listens.
 */
export async function spawnServer(args: string[], env: NodeJS.ProcessEnv = {}, options: { waitFor?: 'ready' | 'listening' } = {}): Promise<SpawnedServer> {
  const waitFor = options.waitFor ?? 'ready';
  const proc = spawn(process.execPath, [path.join(root, 'dist/cli/main.js'), 'serve', '--port', '0', '--log-level', 'info', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL'); // a server that never got ready is nobody's to stop: it would outlive the run
      reject(new Error(`server did not start:\n${out}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      let port: number | undefined;
      let ready = false;
      for (const line of out.split('\n')) {
        try {
          const entry = JSON.parse(line) as { api?: string; port?: number; msg?: string };
          if (entry.api === 'main' && entry.port) port = entry.port;
          if (entry.msg === 'allot ready') ready = true;
        } catch {
          /* not a JSON log line */
        }
      }
      if (port !== undefined && (ready || waitFor === 'listening')) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${port}`);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    url,
    placementUrl: `${url}/placement`,
    process: proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
