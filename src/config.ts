// Configuration: command-line flags win over environment variables, which win over defaults.
// Every option is listed once here, with its environment variable, so README/docs can be checked
// against one table.
import os from 'node:os';
import type { SqliteSync } from './db/database.js';

export interface Config {
  /** `sqlite:PATH`, `sqlite::memory:` or `postgres://…` */
  db: string;
  host: string;
  /** main port: every API under its prefix (/placement, /baremetal, /ids); 0 picks a free port */
  port: number;
  /** optional dedicated port serving the Placement API at `/` */
  placementPort: number | null;
  /** optional dedicated port serving the Ironic-compatible API at `/` */
  baremetalPort: number | null;
  logLevel: string;
  /** SQLite durability: `full` (default) fsyncs every commit */
  sqliteSync: SqliteSync;
  /** PostgreSQL connections per process */
  poolSize: number;
  /** attempts for a transaction that loses a race against another writer */
  maxAttempts: number;
  /** largest accepted request body, bytes */
  bodyLimit: number;
  /** this process's name as a conductor (bare-metal workers) */
  conductorId: string;
  /** identifier API: JSON file naming the external inventories (and plugin modules) */
  idsConfig: string | null;
  /** identifier API: first retry delay of an undelivered external deallocation, ms (doubles up to idsRetryMaxMs) */
  idsRetryBaseMs: number;
  /** identifier API: longest delay between two delivery attempts, ms */
  idsRetryMaxMs: number;
  /** identifier API: how often the outbox and lease workers look for work, ms */
  idsWorkerIntervalMs: number;
}

export interface OptionSpec {
  key: keyof Config;
  flag: string;
  env: string;
  description: string;
  parse: (raw: string) => unknown;
}

const int = (name: string, min: number, max: number) => (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
};
const port = (name: string) => int(name, 0, 65535);
const oneOf =
  <T extends string>(name: string, values: readonly T[]) =>
  (raw: string) => {
    if (!values.includes(raw as T)) throw new Error(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw as T;
  };

export const OPTIONS: OptionSpec[] = [
  { key: 'db', flag: '--db <url>', env: 'ALLOT_DB', description: 'database: sqlite:PATH, sqlite::memory: or postgres://…', parse: String },
  { key: 'host', flag: '--host <address>', env: 'ALLOT_HOST', description: 'address to listen on', parse: String },
  { key: 'port', flag: '--port <n>', env: 'ALLOT_PORT', description: 'main port (all APIs under /placement, /baremetal, /ids); 0 = any free port', parse: port('port') },
  { key: 'placementPort', flag: '--placement-port <n>', env: 'ALLOT_PLACEMENT_PORT', description: 'also serve the Placement API at / on this port', parse: port('placement port') },
  { key: 'baremetalPort', flag: '--baremetal-port <n>', env: 'ALLOT_BAREMETAL_PORT', description: 'also serve the Ironic-compatible API at / on this port', parse: port('baremetal port') },
  { key: 'logLevel', flag: '--log-level <level>', env: 'ALLOT_LOG_LEVEL', description: 'fatal, error, warn, info, debug or trace', parse: oneOf('log level', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) },
  { key: 'sqliteSync', flag: '--sqlite-sync <mode>', env: 'ALLOT_SQLITE_SYNC', description: 'full (durable across power loss) or normal (faster; may lose the last commits on power loss)', parse: oneOf('sqlite sync', ['full', 'normal', 'off']) },
  { key: 'poolSize', flag: '--pool-size <n>', env: 'ALLOT_POOL_SIZE', description: 'PostgreSQL connections per process', parse: int('pool size', 1, 1000) },
  { key: 'maxAttempts', flag: '--max-attempts <n>', env: 'ALLOT_MAX_ATTEMPTS', description: 'tries for a write that races another writer before answering 409', parse: int('max attempts', 1, 1000) },
  { key: 'bodyLimit', flag: '--body-limit <bytes>', env: 'ALLOT_BODY_LIMIT', description: 'largest accepted request body', parse: int('body limit', 1024, 1 << 30) },
  { key: 'conductorId', flag: '--conductor-id <name>', env: 'ALLOT_CONDUCTOR_ID', description: 'name of this process among the conductors (default: hostname-pid)', parse: String },
  { key: 'idsConfig', flag: '--ids-config <file>', env: 'ALLOT_IDS_CONFIG', description: 'identifier API: JSON file naming external inventories and plugin modules', parse: String },
  { key: 'idsRetryBaseMs', flag: '--ids-retry-base-ms <ms>', env: 'ALLOT_IDS_RETRY_BASE_MS', description: 'identifier API: first retry delay of an external deallocation (doubles each time)', parse: int('ids retry base', 1, 3_600_000) },
  { key: 'idsRetryMaxMs', flag: '--ids-retry-max-ms <ms>', env: 'ALLOT_IDS_RETRY_MAX_MS', description: 'identifier API: longest delay between two delivery attempts', parse: int('ids retry max', 1, 86_400_000) },
  { key: 'idsWorkerIntervalMs', flag: '--ids-worker-interval-ms <ms>', env: 'ALLOT_IDS_WORKER_INTERVAL_MS', description: 'identifier API: how often the outbox and lease-expiry workers look for work', parse: int('ids worker interval', 10, 3_600_000) },
];

export function defaultConfig(): Config {
  return {
    db: 'sqlite:./allot.db',
    host: '127.0.0.1',
    port: 8778,
    placementPort: null,
    baremetalPort: null,
    logLevel: 'info',
    sqliteSync: 'full',
    poolSize: 10,
    maxAttempts: 10,
    bodyLimit: 1 << 20,
    conductorId: `${os.hostname()}-${process.pid}`,
    idsConfig: null,
    idsRetryBaseMs: 1000,
    idsRetryMaxMs: 300_000,
    idsWorkerIntervalMs: 1000,
  };
}

/** Merge defaults, environment and parsed flags (flags already strings from the CLI parser). */
export function loadConfig(flags: Record<string, string | undefined>, env: NodeJS.ProcessEnv = process.env): Config {
  const config = defaultConfig() as unknown as Record<string, unknown>;
  for (const spec of OPTIONS) {
    const raw = flags[spec.key] ?? env[spec.env];
    if (raw !== undefined && raw !== '') config[spec.key] = spec.parse(raw);
  }
  return config as unknown as Config;
}
