// Configuration: command-line flags win over environment variables, which win over a YAML
// configuration file (--config / ALLOT_CONFIG), which wins over defaults. Every option is listed
// once here, with its environment variable and its key in the file (the flag without `--`), so
// README/docs can be checked against one table.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { DATABASE_TIMEOUT_DEFAULTS, type DatabaseOptions, type SqliteSync, dialectOf, maskUrl } from './db/database.js';
import { STRATEGIES, type Strategy } from './placement/candidates/search.js';

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
  /** browser origins allowed to call the APIs (CORS), as `new URL(v).origin` writes them (lower case, no default port); empty: CORS off */
  corsAllowedOrigins: string[];
  /** most allocation candidates one GET /allocation_candidates generates (Placement: unbounded) */
  maxCandidates: number;
  /** order candidates are generated in when the request does not say (`allot_strategy`) */
  candidateStrategy: Strategy;
  /** the candidates index re-reads every provider at least this often (a safety net), ms; at most 30× the time a reload takes */
  candidateIndexReload: number;
  /** bare-metal allocation backend: `database` (the spec's nodes table) or `placement` (claims in allot's Placement) */
  baremetalBackend: BaremetalBackendName;
  /** how often this conductor writes its heartbeat, ms */
  heartbeatInterval: number;
  /** a conductor whose heartbeat is older than this is dead and its work is taken over, ms */
  heartbeatTimeout: number;
  /** how often to look for allocations and nodes of dead conductors, ms; 0 disables take-over */
  takeoverInterval: number;
  /** simulated duration of a fake-hardware provision or power transition, ms */
  transitionTime: number;
  /** simulated time an allocation stays `allocating` before the worker picks a node, ms */
  allocationDelay: number;
  /** allocations this process works on at once */
  allocationWorkers: number;
  /** identifier API: JSON file naming the external inventories (and plugin modules) */
  idsConfig: string | null;
  /** identifier API: YAML (or JSON) file of service-instance lifecycle definitions, besides the built-in ones */
  idsLifecycles: string | null;
  /** identifier API: bound of the first retry delay of an undelivered external deallocation, ms (doubles up to idsRetryMaxMs; each wait is random below it) */
  idsRetryBaseMs: number;
  /** identifier API: longest delay between two delivery attempts, ms */
  idsRetryMaxMs: number;
  /** identifier API: how often the outbox and lease workers look for work, ms */
  idsWorkerIntervalMs: number;
  /** PostgreSQL: how often to look for tables that outgrew their planner statistics (and analyze them), ms */
  statisticsInterval: number;
  /** PostgreSQL: longest wait for a connection (new or pooled); also how long a write retries a lost one, ms */
  dbConnectTimeout: number;
  /** PostgreSQL: longest a statement may run (server-side statement_timeout; the client gives up shortly after), ms */
  dbStatementTimeout: number;
  /** PostgreSQL: the server ends a session idle inside a transaction this long, ms */
  dbIdleInTransactionTimeout: number;
  /** PostgreSQL: TCP keepalive probes start after this much silence on a connection, ms */
  dbKeepalive: number;
  /** SQLite: how long a write waits for another process's write lock, ms */
  sqliteBusyTimeout: number;
  /** /healthz and /readyz answer 503 when the database does not answer within this, ms */
  healthTimeout: number;
  /** a request that arrives while the process starts (database, provider index) waits at most this long for it, then 503, ms */
  readyWait: number;
  /** HTTP: a client must send its request headers within this, ms */
  httpHeadersTimeout: number;
  /** HTTP: a client must send its whole request (headers and body) within this, ms */
  httpRequestTimeout: number;
  /** HTTP: an idle keep-alive connection is closed after this, ms */
  httpKeepaliveTimeout: number;
  /** HTTP: a connection with no traffic either way for this long is closed, ms */
  httpIdleTimeout: number;
  /** HTTP: most client connections at once per listener; more are refused */
  maxConnections: number;
  /** who callers are: `noauth` (development: nobody is verified; loopback only) or `keystone` (tokens) */
  auth: AuthMode;
  /** serve noauth on a non-loopback address anyway (anyone who reaches the port is an administrator) */
  insecureNoauth: boolean;
  /** serve GET /metrics to anyone who reaches the main port (default: administrators under keystone, loopback under noauth) */
  metricsPublic: boolean;
  /** noauth: host names (besides the loopback ones) that requests may be addressed to (`Host`) */
  allowedHosts: string[];
  /** Keystone's URL, with or without `/v3` */
  keystoneUrl: string | null;
  /** allot's own service user in Keystone, for validating tokens */
  keystoneUsername: string | null;
  keystonePassword: string | null;
  /** the project allot's service user's token is scoped to */
  keystoneProject: string | null;
  keystoneUserDomain: string;
  keystoneProjectDomain: string;
  /** longest wait for an answer from Keystone, ms */
  keystoneTimeout: number;
  /** how long a token's validation is reused before Keystone is asked again (never past its expiry), ms */
  keystoneTokenCacheTime: number;
  /** most token validations kept */
  keystoneTokenCacheSize: number;
  /** operator policy file (YAML: rule name → check string) over the default rules */
  policyFile: string | null;
  /** off: rules whose defaults changed also allow what their deprecated (legacy) defaults allowed */
  enforceNewDefaults: boolean;
  /** off: a rule's token scopes (system, project) are not checked */
  enforceScope: boolean;
  /** log lines: `json`, `pretty` (for people), or `auto` (pretty when stdout is a terminal) */
  logFormat: LogFormat;
}

export type AuthMode = 'noauth' | 'keystone';
export type LogFormat = 'auto' | 'json' | 'pretty';

export type BaremetalBackendName = 'database' | 'placement';

export interface OptionSpec {
  key: keyof Config;
  /** `--name <value>`, or `--name` alone for a switch (which also gets `--no-name`) */
  flag: string;
  env: string;
  description: string;
  parse: (raw: string) => unknown;
  /** the value is a list: the configuration file may give it as a YAML sequence */
  list?: boolean;
  /** `allot config` masks the value */
  secret?: boolean;
}

const int = (name: string, min: number, max: number) => (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
};
const port = (name: string) => int(name, 0, 65535);
/** seconds (fractions allowed) on the command line, milliseconds in the config */
const seconds = (name: string, min: number, max: number) => (raw: string) => {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new Error(`${name} must be a number of seconds from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return Math.round(n * 1000);
};
const oneOf =
  <T extends string>(name: string, values: readonly T[]) =>
  (raw: string) => {
    if (!values.includes(raw as T)) throw new Error(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw as T;
  };

/** A switch: `--x` / `--no-x` on the command line, true/false (1/0, yes/no, on/off) in the environment. */
const bool = (name: string) => (raw: string) => {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new Error(`${name} must be true or false, got ${JSON.stringify(raw)}`);
};
const names = (raw: string) =>
  raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);

/**
 * Browser origins (CORS), each `scheme://host[:port]` with scheme http or https: no path (not even
 * "/"), query, fragment or user. Kept as `new URL(v).origin` gives them back (lower case, a default
 * port left out), which is how a browser writes its `Origin` header, so the CORS middleware can
 * compare strings. An entry that is not exactly an origin is refused rather than kept: it would
 * never match, and CORS would be silently off for it.
 */
const origins = (name: string) => (raw: string) =>
  names(raw).map((entry) => {
    const example = 'scheme://host[:port], e.g. https://dash.example.com';
    if (entry === '*') throw new Error(`${name} must list the origins allowed (${example}), got "*": a wildcard is not offered`);
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`${name} must be browser origins (${example}), got ${JSON.stringify(entry)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`${name} must be http or https origins (${example}), got ${JSON.stringify(entry)}`);
    // not echoed: the entry holds a password perhaps
    if (url.username || url.password) throw new Error(`${name} must be origins without a user or password (${example}): did you mean ${url.origin}?`);
    const written = entry.toLowerCase();
    const defaultPort = url.protocol === 'https:' ? '443' : '80';
    if (written !== url.origin && written !== `${url.origin}:${defaultPort}`) {
      throw new Error(
        `${name} must be origins only, with no path (not even "/"), query or user (${example}), got ${JSON.stringify(entry)} (did you mean ${url.origin}?)`,
      );
    }
    return url.origin;
  });

export const OPTIONS: OptionSpec[] = [
  {
    key: 'db',
    flag: '--db <url>',
    env: 'ALLOT_DB',
    description: 'database: sqlite:PATH, sqlite::memory: or postgres://…',
    // a URL no driver takes is refused with the rest of the configuration (exit 2, the file and key named)
    parse: (v) => {
      dialectOf(v);
      return v;
    },
  },
  { key: 'host', flag: '--host <address>', env: 'ALLOT_HOST', description: 'address to listen on', parse: String },
  {
    key: 'port',
    flag: '--port <n>',
    env: 'ALLOT_PORT',
    description: 'main port (all APIs under /placement, /baremetal, /ids); 0 = any free port',
    parse: port('port'),
  },
  {
    key: 'placementPort',
    flag: '--placement-port <n>',
    env: 'ALLOT_PLACEMENT_PORT',
    description: 'also serve the Placement API at / on this port',
    parse: port('placement port'),
  },
  {
    key: 'baremetalPort',
    flag: '--baremetal-port <n>',
    env: 'ALLOT_BAREMETAL_PORT',
    description: 'also serve the Ironic-compatible API at / on this port',
    parse: port('baremetal port'),
  },
  {
    key: 'logLevel',
    flag: '--log-level <level>',
    env: 'ALLOT_LOG_LEVEL',
    description: 'fatal, error, warn, info, debug or trace',
    parse: oneOf('log level', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  },
  {
    key: 'sqliteSync',
    flag: '--sqlite-sync <mode>',
    env: 'ALLOT_SQLITE_SYNC',
    description: 'full (durable across power loss) or normal (faster; may lose the last commits on power loss)',
    parse: oneOf('sqlite sync', ['full', 'normal', 'off']),
  },
  { key: 'poolSize', flag: '--pool-size <n>', env: 'ALLOT_POOL_SIZE', description: 'PostgreSQL connections per process', parse: int('pool size', 1, 1000) },
  {
    key: 'maxAttempts',
    flag: '--max-attempts <n>',
    env: 'ALLOT_MAX_ATTEMPTS',
    description: 'tries for a write that races another writer before answering 409',
    parse: int('max attempts', 1, 1000),
  },
  {
    key: 'bodyLimit',
    flag: '--body-limit <bytes>',
    env: 'ALLOT_BODY_LIMIT',
    description: 'largest accepted request body',
    parse: int('body limit', 1024, 1 << 30),
  },
  {
    key: 'conductorId',
    flag: '--conductor-id <name>',
    env: 'ALLOT_CONDUCTOR_ID',
    description: 'name of this process among the conductors (default: hostname-pid)',
    parse: String,
  },
  {
    key: 'corsAllowedOrigins',
    flag: '--cors-allowed-origins <origins>',
    env: 'ALLOT_CORS_ALLOWED_ORIGINS',
    description: 'comma-separated browser origins (scheme://host[:port], http or https, no path) allowed to call the APIs (CORS); unset: CORS off',
    parse: origins('cors allowed origins'),
    list: true,
  },
  {
    key: 'maxCandidates',
    flag: '--max-candidates <n>',
    env: 'ALLOT_MAX_CANDIDATES',
    description: 'most allocation candidates one GET /allocation_candidates generates',
    parse: int('max candidates', 1, 1_000_000),
  },
  {
    key: 'candidateStrategy',
    flag: '--candidate-strategy <name>',
    env: 'ALLOT_CANDIDATE_STRATEGY',
    description: 'order of allocation candidates when a request does not choose: stable, pack, spread or random',
    parse: oneOf('candidate strategy', STRATEGIES),
  },
  {
    key: 'candidateIndexReload',
    flag: '--candidate-index-reload <seconds>',
    env: 'ALLOT_CANDIDATE_INDEX_RELOAD',
    description:
      'the candidates index re-reads every provider in the background this often, a safety net behind the changes it follows as they commit (stretched to 30× the time a reload takes)',
    parse: seconds('candidate index reload', 0.01, 86400),
  },
  {
    key: 'baremetalBackend',
    flag: '--baremetal-backend <name>',
    env: 'ALLOT_BAREMETAL_BACKEND',
    description: 'bare-metal allocation backend: database or placement',
    parse: oneOf('baremetal backend', ['database', 'placement']),
  },
  {
    key: 'heartbeatInterval',
    flag: '--heartbeat-interval <seconds>',
    env: 'ALLOT_HEARTBEAT_INTERVAL',
    description: 'how often this conductor writes its heartbeat',
    parse: seconds('heartbeat interval', 0.01, 3600),
  },
  {
    key: 'heartbeatTimeout',
    flag: '--heartbeat-timeout <seconds>',
    env: 'ALLOT_HEARTBEAT_TIMEOUT',
    description: 'a conductor silent this long is dead and its work is taken over',
    parse: seconds('heartbeat timeout', 0.05, 86400),
  },
  {
    key: 'takeoverInterval',
    flag: '--takeover-interval <seconds>',
    env: 'ALLOT_TAKEOVER_INTERVAL',
    description: 'how often to take over work of dead conductors; 0 disables',
    parse: seconds('takeover interval', 0, 86400),
  },
  {
    key: 'transitionTime',
    flag: '--transition-time <seconds>',
    env: 'ALLOT_TRANSITION_TIME',
    description: 'simulated duration of a fake-hardware provision or power transition (default 0.01; raise it to watch nodes in their transitional states)',
    parse: seconds('transition time', 0, 3600),
  },
  {
    key: 'allocationDelay',
    flag: '--allocation-delay <seconds>',
    env: 'ALLOT_ALLOCATION_DELAY',
    description: 'simulated time an allocation stays allocating before a node is picked',
    parse: seconds('allocation delay', 0, 3600),
  },
  {
    key: 'allocationWorkers',
    flag: '--allocation-workers <n>',
    env: 'ALLOT_ALLOCATION_WORKERS',
    description: 'allocations this process works on at once',
    parse: int('allocation workers', 1, 1000),
  },
  {
    key: 'idsConfig',
    flag: '--ids-config <file>',
    env: 'ALLOT_IDS_CONFIG',
    description: 'identifier API: JSON file naming external inventories and plugin modules',
    parse: String,
  },
  {
    key: 'idsLifecycles',
    flag: '--ids-lifecycles <file>',
    env: 'ALLOT_IDS_LIFECYCLES',
    description:
      'identifier API: YAML file of service-instance lifecycles (states and transitions) besides simple and simple_with_deallocation; checked at start',
    parse: String,
  },
  {
    key: 'idsRetryBaseMs',
    flag: '--ids-retry-base-ms <ms>',
    env: 'ALLOT_IDS_RETRY_BASE_MS',
    description: 'identifier API: bound of the first retry delay of an external deallocation (doubles each time; waits are random below it)',
    parse: int('ids retry base', 1, 3_600_000),
  },
  {
    key: 'idsRetryMaxMs',
    flag: '--ids-retry-max-ms <ms>',
    env: 'ALLOT_IDS_RETRY_MAX_MS',
    description: 'identifier API: longest delay between two delivery attempts',
    parse: int('ids retry max', 1, 86_400_000),
  },
  {
    key: 'idsWorkerIntervalMs',
    flag: '--ids-worker-interval-ms <ms>',
    env: 'ALLOT_IDS_WORKER_INTERVAL_MS',
    description: 'identifier API: how often the outbox and lease-expiry workers look for work',
    parse: int('ids worker interval', 10, 3_600_000),
  },
  {
    key: 'statisticsInterval',
    flag: '--statistics-interval <seconds>',
    env: 'ALLOT_STATISTICS_INTERVAL',
    description:
      'PostgreSQL: how often to look for tables that changed by more rows than they held when last analyzed, and analyze them (autovacuum waits a minute and more)',
    parse: seconds('statistics interval', 0.01, 3600),
  },
  {
    key: 'dbConnectTimeout',
    flag: '--db-connect-timeout <seconds>',
    env: 'ALLOT_DB_CONNECT_TIMEOUT',
    description: 'PostgreSQL: longest wait for a connection; a write retries a lost connection for as long',
    parse: seconds('db connect timeout', 0.1, 600),
  },
  {
    key: 'dbStatementTimeout',
    flag: '--db-statement-timeout <seconds>',
    env: 'ALLOT_DB_STATEMENT_TIMEOUT',
    description: 'PostgreSQL: longest a statement may run',
    parse: seconds('db statement timeout', 0.1, 3600),
  },
  {
    key: 'dbIdleInTransactionTimeout',
    flag: '--db-idle-in-transaction-timeout <seconds>',
    env: 'ALLOT_DB_IDLE_IN_TRANSACTION_TIMEOUT',
    description: 'PostgreSQL: the server ends a session idle inside a transaction this long',
    parse: seconds('db idle-in-transaction timeout', 1, 86400),
  },
  {
    key: 'dbKeepalive',
    flag: '--db-keepalive <seconds>',
    env: 'ALLOT_DB_KEEPALIVE',
    description: 'PostgreSQL: TCP keepalive probes start after this much silence',
    parse: seconds('db keepalive', 1, 7200),
  },
  {
    key: 'sqliteBusyTimeout',
    flag: '--sqlite-busy-timeout <seconds>',
    env: 'ALLOT_SQLITE_BUSY_TIMEOUT',
    description: "SQLite: how long a write waits for another process's write lock",
    parse: seconds('sqlite busy timeout', 0, 600),
  },
  {
    key: 'healthTimeout',
    flag: '--health-timeout <seconds>',
    env: 'ALLOT_HEALTH_TIMEOUT',
    description: '/healthz and /readyz are 503 when the database does not answer within this',
    parse: seconds('health timeout', 0.05, 600),
  },
  {
    key: 'readyWait',
    flag: '--ready-wait <seconds>',
    env: 'ALLOT_READY_WAIT',
    description:
      'a request that arrives while this process starts (waiting for its database, loading the provider index) waits at most this long for it, then is answered 503',
    parse: seconds('ready wait', 0, 600),
  },
  {
    key: 'httpHeadersTimeout',
    flag: '--http-headers-timeout <seconds>',
    env: 'ALLOT_HTTP_HEADERS_TIMEOUT',
    description: 'a client must send its request headers within this',
    parse: seconds('http headers timeout', 0.1, 3600),
  },
  {
    key: 'httpRequestTimeout',
    flag: '--http-request-timeout <seconds>',
    env: 'ALLOT_HTTP_REQUEST_TIMEOUT',
    description: 'a client must send its whole request within this',
    parse: seconds('http request timeout', 0.1, 3600),
  },
  {
    key: 'httpKeepaliveTimeout',
    flag: '--http-keepalive-timeout <seconds>',
    env: 'ALLOT_HTTP_KEEPALIVE_TIMEOUT',
    description: 'an idle keep-alive connection is closed after this',
    parse: seconds('http keep-alive timeout', 0.1, 3600),
  },
  {
    key: 'httpIdleTimeout',
    flag: '--http-idle-timeout <seconds>',
    env: 'ALLOT_HTTP_IDLE_TIMEOUT',
    description: 'a connection with no traffic either way for this long is closed',
    parse: seconds('http idle timeout', 0.1, 86400),
  },
  {
    key: 'maxConnections',
    flag: '--max-connections <n>',
    env: 'ALLOT_MAX_CONNECTIONS',
    description: 'most client connections at once per listener',
    parse: int('max connections', 1, 1_000_000),
  },
  {
    key: 'auth',
    flag: '--auth <mode>',
    env: 'ALLOT_AUTH',
    description: 'authentication: noauth (development, loopback only) or keystone (validate X-Auth-Token with Keystone)',
    parse: oneOf('auth', ['noauth', 'keystone']),
  },
  {
    key: 'insecureNoauth',
    flag: '--insecure-noauth',
    env: 'ALLOT_INSECURE_NOAUTH',
    description: 'allow noauth on a non-loopback --host (anyone reaching the port is an administrator)',
    parse: bool('insecure noauth'),
  },
  {
    key: 'metricsPublic',
    flag: '--metrics-public',
    env: 'ALLOT_METRICS_PUBLIC',
    description: 'serve GET /metrics without authentication (default: a token with the admin role under --auth keystone)',
    parse: bool('metrics public'),
  },
  {
    key: 'allowedHosts',
    flag: '--allowed-hosts <names>',
    env: 'ALLOT_ALLOWED_HOSTS',
    description: 'noauth: comma-separated host names requests may be addressed to besides localhost, 127.0.0.1 and [::1]',
    parse: names,
    list: true,
  },
  { key: 'keystoneUrl', flag: '--keystone-url <url>', env: 'ALLOT_KEYSTONE_URL', description: "Keystone's URL, with or without /v3", parse: String },
  {
    key: 'keystoneUsername',
    flag: '--keystone-username <name>',
    env: 'ALLOT_KEYSTONE_USERNAME',
    description: "allot's service user in Keystone (validates tokens)",
    parse: String,
  },
  {
    key: 'keystonePassword',
    flag: '--keystone-password <password>',
    env: 'ALLOT_KEYSTONE_PASSWORD',
    description: "the service user's password (prefer the environment: a command line is visible to other users)",
    parse: String,
    secret: true,
  },
  {
    key: 'keystoneProject',
    flag: '--keystone-project <name>',
    env: 'ALLOT_KEYSTONE_PROJECT',
    description: "the project of the service user's token",
    parse: String,
  },
  {
    key: 'keystoneUserDomain',
    flag: '--keystone-user-domain <name>',
    env: 'ALLOT_KEYSTONE_USER_DOMAIN',
    description: "the service user's domain (name)",
    parse: String,
  },
  {
    key: 'keystoneProjectDomain',
    flag: '--keystone-project-domain <name>',
    env: 'ALLOT_KEYSTONE_PROJECT_DOMAIN',
    description: "the service project's domain (name)",
    parse: String,
  },
  {
    key: 'keystoneTimeout',
    flag: '--keystone-timeout <seconds>',
    env: 'ALLOT_KEYSTONE_TIMEOUT',
    description: 'longest wait for Keystone; no answer in time is a 503',
    parse: seconds('keystone timeout', 0.1, 600),
  },
  {
    key: 'keystoneTokenCacheTime',
    flag: '--keystone-token-cache-time <seconds>',
    env: 'ALLOT_KEYSTONE_TOKEN_CACHE_TIME',
    description: "how long a token's validation is reused (never past the token's expiry); a revoked token is refused at the latest this long after",
    parse: seconds('keystone token cache time', 0, 86400),
  },
  {
    key: 'keystoneTokenCacheSize',
    flag: '--keystone-token-cache-size <n>',
    env: 'ALLOT_KEYSTONE_TOKEN_CACHE_SIZE',
    description: 'most token validations kept',
    parse: int('keystone token cache size', 1, 10_000_000),
  },
  {
    key: 'policyFile',
    flag: '--policy-file <path>',
    env: 'ALLOT_POLICY_FILE',
    description: 'policy file (YAML: "rule name": "check string") over the default rules',
    parse: String,
  },
  {
    key: 'enforceNewDefaults',
    flag: '--enforce-new-defaults',
    env: 'ALLOT_ENFORCE_NEW_DEFAULTS',
    description: 'use only the current default rules (--no-enforce-new-defaults: also allow what the legacy defaults allowed)',
    parse: bool('enforce new defaults'),
  },
  {
    key: 'enforceScope',
    flag: '--enforce-scope',
    env: 'ALLOT_ENFORCE_SCOPE',
    description: "refuse a token whose scope (system, project) a rule is not for (--no-enforce-scope: don't check)",
    parse: bool('enforce scope'),
  },
  {
    key: 'logFormat',
    flag: '--log-format <format>',
    env: 'ALLOT_LOG_FORMAT',
    description: 'json, pretty, or auto (pretty when stdout is a terminal, JSON otherwise)',
    parse: oneOf('log format', ['auto', 'json', 'pretty']),
  },
];

/** Is this option a switch (`--x` / `--no-x`) rather than `--x <value>`? */
export const isSwitch = (spec: OptionSpec) => !spec.flag.includes('<');

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
    corsAllowedOrigins: [],
    maxCandidates: 10_000,
    candidateStrategy: 'stable',
    candidateIndexReload: 60_000,
    baremetalBackend: 'database',
    heartbeatInterval: 10_000,
    heartbeatTimeout: 60_000,
    takeoverInterval: 60_000,
    // Ironic's fake hardware settles a power or provision change within milliseconds; clients
    // (openstacksdk) power a node off and allocate it at once. Slower simulation: --transition-time.
    transitionTime: 10,
    allocationDelay: 0,
    allocationWorkers: 8,
    idsConfig: null,
    idsLifecycles: null,
    idsRetryBaseMs: 1000,
    idsRetryMaxMs: 300_000,
    idsWorkerIntervalMs: 1000,
    statisticsInterval: 1000,
    dbConnectTimeout: DATABASE_TIMEOUT_DEFAULTS.connectTimeoutMs,
    dbStatementTimeout: DATABASE_TIMEOUT_DEFAULTS.statementTimeoutMs,
    dbIdleInTransactionTimeout: DATABASE_TIMEOUT_DEFAULTS.idleInTransactionTimeoutMs,
    dbKeepalive: DATABASE_TIMEOUT_DEFAULTS.keepAliveMs,
    sqliteBusyTimeout: DATABASE_TIMEOUT_DEFAULTS.busyTimeoutMs,
    healthTimeout: 2_000,
    readyWait: 5_000,
    httpHeadersTimeout: 10_000,
    httpRequestTimeout: 30_000,
    httpKeepaliveTimeout: 5_000,
    httpIdleTimeout: 60_000,
    maxConnections: 1_000,
    auth: 'noauth',
    insecureNoauth: false,
    metricsPublic: false,
    allowedHosts: [],
    keystoneUrl: null,
    keystoneUsername: null,
    keystonePassword: null,
    keystoneProject: null,
    keystoneUserDomain: 'Default',
    keystoneProjectDomain: 'Default',
    keystoneTimeout: 5_000,
    // keystonemiddleware's token_cache_time
    keystoneTokenCacheTime: 300_000,
    keystoneTokenCacheSize: 10_000,
    policyFile: null,
    enforceNewDefaults: true,
    enforceScope: true,
    logFormat: 'auto',
  };
}

/** Merge defaults, the configuration file, environment and parsed flags (strings from the CLI parser; switches are booleans). */
export function loadConfig(flags: Flags, env: NodeJS.ProcessEnv = process.env): Config {
  return resolveConfig(flags, env).config;
}

/** Flags as the CLI parser gives them: strings, and booleans for switches. */
export type Flags = Record<string, string | boolean | undefined>;

/** Where a value of the effective configuration came from. */
export type ConfigSource = { from: 'default' } | { from: 'file'; path: string } | { from: 'env'; name: string } | { from: 'flag'; flag: string };

export interface ResolvedConfig {
  config: Config;
  sources: Record<keyof Config, ConfigSource>;
  /** the configuration file read, if any */
  file: string | null;
}

/** An option's key in the configuration file: its flag without dashes and placeholder (`--keystone-url <url>` → `keystone-url`). */
export const fileKey = (spec: OptionSpec): string => spec.flag.replace(/^--/, '').split(' ')[0]!;

/** The environment variable naming the configuration file (the flag is `--config`). */
export const CONFIG_ENV = 'ALLOT_CONFIG';

/** A configuration that cannot be used; the message names the key (and the file). */
export class ConfigError extends Error {}

/**
 * The effective configuration and where each value came from: flags > environment > the file
 * (`flags.config` or ALLOT_CONFIG) > defaults. Throws ConfigError naming the key at fault.
 */
export function resolveConfig(flags: Flags, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const config = defaultConfig() as unknown as Record<string, unknown>;
  const sources = {} as Record<keyof Config, ConfigSource>;
  const filePath = (typeof flags.config === 'string' ? flags.config : undefined) ?? (env[CONFIG_ENV] || undefined) ?? null;
  const fileValues = filePath ? readConfigFile(filePath) : new Map<keyof Config, string>();
  for (const spec of OPTIONS) {
    sources[spec.key] = { from: 'default' };
    let raw: string | undefined;
    let source: ConfigSource | undefined;
    let where: string;
    const flag = flags[spec.key];
    if (flag !== undefined && flag !== '') {
      raw = String(flag); // a switch (--x / --no-x) comes as a boolean
      source = { from: 'flag', flag: spec.flag.split(' ')[0]! };
      where = source.flag;
    } else if (env[spec.env] !== undefined && env[spec.env] !== '') {
      raw = env[spec.env];
      source = { from: 'env', name: spec.env };
      where = spec.env;
    } else if (fileValues.has(spec.key)) {
      raw = fileValues.get(spec.key);
      source = { from: 'file', path: filePath! };
      where = `${filePath}: ${fileKey(spec)}`;
    } else continue;
    try {
      config[spec.key] = spec.parse(raw!);
    } catch (err) {
      throw new ConfigError(source.from === 'file' ? `${where}: ${(err as Error).message}` : (err as Error).message);
    }
    sources[spec.key] = source;
  }
  const result = config as unknown as Config;
  // A conductor must beat more often than the others give up on it, or it is taken over alive.
  if (result.heartbeatTimeout <= result.heartbeatInterval) {
    throw new ConfigError(
      `heartbeat timeout (${result.heartbeatTimeout / 1000}s) must be longer than the heartbeat interval (${result.heartbeatInterval / 1000}s)`,
    );
  }
  if (result.httpHeadersTimeout > result.httpRequestTimeout) {
    throw new ConfigError(
      `http headers timeout (${result.httpHeadersTimeout / 1000}s) must not be longer than the http request timeout (${result.httpRequestTimeout / 1000}s)`,
    );
  }
  return { config: result, sources, file: filePath };
}

/**
 * Read a YAML configuration file: a mapping of file keys (see `fileKey`) to scalars (lists for
 * list options). Values come back as the strings a flag would carry, for the option's parser.
 */
export function readConfigFile(path: string): Map<keyof Config, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const at = err instanceof YAMLParseError && err.linePos ? ` (line ${err.linePos[0].line})` : '';
    throw new ConfigError(`${path}: not valid YAML${at}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return new Map();
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(`${path}: must be a mapping of option names to values (e.g. "port: 8778")`);
  const byKey = new Map(OPTIONS.map((spec) => [fileKey(spec), spec]));
  const out = new Map<keyof Config, string>();
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    const spec = byKey.get(key);
    if (!spec) {
      const near = closest(key, [...byKey.keys()]);
      throw new ConfigError(`${path}: unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ''}`);
    }
    if (value === null || value === undefined) continue; // `key:` with no value leaves the default
    if (Array.isArray(value)) {
      if (!spec.list) throw new ConfigError(`${path}: ${key}: expected a single value, got a list`);
      const notString = value.find((v) => typeof v !== 'string');
      if (notString !== undefined) throw new ConfigError(`${path}: ${key}: expected a list of strings, got ${JSON.stringify(notString)}`);
      out.set(spec.key, value.join(','));
    } else if (typeof value === 'object') {
      throw new ConfigError(`${path}: ${key}: expected a single value, got a mapping`);
    } else {
      out.set(spec.key, String(value));
    }
  }
  return out;
}

/** The candidate closest to `word` by edit distance, if it is close enough to be a typo. */
function closest(word: string, candidates: string[]): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** The unit a flag takes its value in, read from its placeholder (`<seconds>`: the config holds ms). */
export function displayValue(spec: OptionSpec, value: unknown): string | number | string[] | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'number' && spec.flag.includes('<seconds>')) return value / 1000;
  if (typeof value === 'number') return value;
  return String(value);
}

/** A value with its secret parts hidden: passwords in URLs, and the options marked secret. */
export function maskedValue(spec: OptionSpec, value: string | number | string[] | null): string | number | string[] | null {
  if (value === null) return null;
  if (spec.secret) return '********';
  if (Array.isArray(value)) return value.map(maskUrl);
  return typeof value === 'string' ? maskUrl(value) : value;
}

/** The database options of a configuration. */
export function databaseOptions(config: Config): DatabaseOptions {
  return {
    sqliteSync: config.sqliteSync,
    poolSize: config.poolSize,
    busyTimeoutMs: config.sqliteBusyTimeout,
    connectTimeoutMs: config.dbConnectTimeout,
    statementTimeoutMs: config.dbStatementTimeout,
    idleInTransactionTimeoutMs: config.dbIdleInTransactionTimeout,
    keepAliveMs: config.dbKeepalive,
    maxAttempts: config.maxAttempts,
  };
}
