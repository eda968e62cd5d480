// Configuration: command-line flags win over environment variables, which win over a YAML
// configuration file (--config / ALLOT_CONFIG), which wins over defaults.
//
// Each option is ONE entry of the table below: its flag (whose name, without `--`, is also its key
// in the file), environment variable, parser, default, and the line README.md's option table gives
// it. The `Config` type, the defaults, the flags of `allot serve`, the rows of `allot config` and
// README.md's option table (written by `npx tsx scripts/options-table.ts`; test/docs.test.ts fails
// when it is stale) all come from it, so adding an option is adding an entry and running that.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { CANDIDATE_STRATEGIES } from './core/candidate-strategies.js';
import { DATABASE_TIMEOUT_DEFAULTS, type DatabaseOptions, type SqliteSync, dialectOf, maskUrl } from './db/database.js';

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
  <const T extends string>(name: string, values: readonly T[]) =>
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

/** A URL no driver takes is refused with the rest of the configuration (exit 2, the file and key named). */
const databaseUrl = (raw: string) => {
  dialectOf(raw);
  return raw;
};

/** What every option declares. */
interface Declared<T> {
  /** `--name <unit>`, or `--name` alone for a switch (which also gets `--no-name`); `<seconds>`: the config holds ms */
  flag: string;
  env: string;
  /** a flag's, variable's or file's text → the value; throws a message naming the option */
  parse: (raw: string) => T;
  /** README.md's line for the option (markdown); `--help` shows it as plain text */
  doc: string;
  /** the value is a list: the configuration file may give it as a YAML sequence */
  list?: true;
  /** `allot config` masks the value */
  secret?: true;
  /** how README.md writes the default when not as `allot config` shows it: one computed at start, or `off` for a feature off by default */
  documentedDefault?: string;
}

/**
 * One option: the value's type comes from its parser, and a default of `null` (unset) adds null
 * to it. A default of another type does not compile.
 */
function option<T>(spec: Declared<T> & { default: NoInfer<T> }): Declared<T> & { default: T };
function option<T>(spec: Declared<T> & { default: null }): Declared<T> & { default: T | null };
function option<T>(spec: Declared<T> & { default: T | null }) {
  return spec;
}

const DECLARED = {
  db: option({
    flag: '--db <url>',
    env: 'ALLOT_DB',
    parse: databaseUrl,
    default: 'sqlite:./allot.db',
    doc: '`sqlite:PATH`, `sqlite::memory:` or `postgres://…`',
  }),
  host: option({
    flag: '--host <address>',
    env: 'ALLOT_HOST',
    parse: String,
    default: '127.0.0.1',
    doc: 'address to listen on',
  }),
  port: option({
    flag: '--port <n>',
    env: 'ALLOT_PORT',
    parse: port('port'),
    default: 8778,
    doc: 'main port; `0` picks a free one (the log says which)',
  }),
  placementPort: option({
    flag: '--placement-port <n>',
    env: 'ALLOT_PLACEMENT_PORT',
    parse: port('placement port'),
    default: null,
    documentedDefault: 'off',
    doc: 'also serve Placement at `/` on this port, one of its own (not `--port`)',
  }),
  baremetalPort: option({
    flag: '--baremetal-port <n>',
    env: 'ALLOT_BAREMETAL_PORT',
    parse: port('baremetal port'),
    default: null,
    documentedDefault: 'off',
    doc: "also serve the bare-metal API at `/` on this port (Ironic's is 6385)",
  }),
  logLevel: option({
    flag: '--log-level <level>',
    env: 'ALLOT_LOG_LEVEL',
    parse: oneOf('log level', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    doc: '`fatal` … `trace`, or `silent`',
  }),
  sqliteSync: option({
    flag: '--sqlite-sync <mode>',
    env: 'ALLOT_SQLITE_SYNC',
    parse: oneOf<SqliteSync>('sqlite sync', ['full', 'normal', 'off']),
    default: 'full',
    doc: '`full` fsyncs every commit, so an acknowledged allocation survives a power cut; `normal` is faster and may lose the last commits on power loss (never corrupts)',
  }),
  poolSize: option({
    flag: '--pool-size <n>',
    env: 'ALLOT_POOL_SIZE',
    parse: int('pool size', 1, 1000),
    default: 10,
    doc: 'PostgreSQL connections per process',
  }),
  maxAttempts: option({
    flag: '--max-attempts <n>',
    env: 'ALLOT_MAX_ATTEMPTS',
    parse: int('max attempts', 1, 1000),
    default: 10,
    doc: 'tries for a write that loses a race to another writer before answering 409',
  }),
  bodyLimit: option({
    flag: '--body-limit <bytes>',
    env: 'ALLOT_BODY_LIMIT',
    parse: int('body limit', 1024, 1 << 30),
    default: 1 << 20,
    doc: 'largest request body, bytes (larger: 413)',
  }),
  conductorId: option({
    flag: '--conductor-id <name>',
    env: 'ALLOT_CONDUCTOR_ID',
    parse: String,
    default: `${os.hostname()}-${process.pid}`,
    documentedDefault: '`hostname-pid`',
    doc: "this process's name among the workers",
  }),
  corsAllowedOrigins: option({
    flag: '--cors-allowed-origins <origins>',
    env: 'ALLOT_CORS_ALLOWED_ORIGINS',
    parse: origins('cors allowed origins'),
    default: [],
    documentedDefault: 'off',
    list: true,
    doc: 'comma-separated browser origins allowed to call the APIs (CORS), `http(s)://host[:port]` with no path (not even `/`), e.g. `https://dash.example.com`; case and a default port do not matter; `*` is refused',
  }),
  maxCandidates: option({
    flag: '--max-candidates <n>',
    env: 'ALLOT_MAX_CANDIDATES',
    parse: int('max candidates', 1, 1_000_000),
    default: 10_000,
    doc: 'most allocation candidates one `GET /allocation_candidates` generates (Placement: unbounded)',
  }),
  candidateStrategy: option({
    flag: '--candidate-strategy <name>',
    env: 'ALLOT_CANDIDATE_STRATEGY',
    parse: oneOf('candidate strategy', CANDIDATE_STRATEGIES),
    default: 'stable',
    doc: 'order of allocation candidates when a request does not choose: `stable`, `pack`, `spread` or `random`',
  }),
  candidateIndexReload: option({
    flag: '--candidate-index-reload <seconds>',
    env: 'ALLOT_CANDIDATE_INDEX_RELOAD',
    parse: seconds('candidate index reload', 0.01, 86400),
    default: 60_000,
    doc: "seconds between background re-reads of every provider by the candidates index, a safety net behind the changes it follows as they commit (stretched to 30× a reload's time)",
  }),
  baremetalBackend: option({
    flag: '--baremetal-backend <name>',
    env: 'ALLOT_BAREMETAL_BACKEND',
    parse: oneOf('baremetal backend', ['database', 'placement']),
    default: 'database',
    doc: 'where node allocations are claimed: `database` or `placement`',
  }),
  heartbeatInterval: option({
    flag: '--heartbeat-interval <seconds>',
    env: 'ALLOT_HEARTBEAT_INTERVAL',
    parse: seconds('heartbeat interval', 0.01, 3600),
    default: 10_000,
    doc: "seconds between this conductor's heartbeats",
  }),
  heartbeatTimeout: option({
    flag: '--heartbeat-timeout <seconds>',
    env: 'ALLOT_HEARTBEAT_TIMEOUT',
    parse: seconds('heartbeat timeout', 0.05, 86400),
    default: 60_000,
    doc: 'seconds of silence after which a conductor is dead and its work is taken over',
  }),
  takeoverInterval: option({
    flag: '--takeover-interval <seconds>',
    env: 'ALLOT_TAKEOVER_INTERVAL',
    parse: seconds('takeover interval', 0, 86400),
    default: 60_000,
    doc: 'seconds between take-over passes; `0` disables take-over',
  }),
  transitionTime: option({
    flag: '--transition-time <seconds>',
    env: 'ALLOT_TRANSITION_TIME',
    parse: seconds('transition time', 0, 3600),
    // Ironic's fake hardware settles a power or provision change within milliseconds; clients
    // (openstacksdk) power a node off and allocate it at once.
    default: 10,
    doc: "simulated seconds a fake-hardware provision or power transition takes (Ironic's fake hardware settles within milliseconds; raise it for slower simulated provisioning)",
  }),
  allocationDelay: option({
    flag: '--allocation-delay <seconds>',
    env: 'ALLOT_ALLOCATION_DELAY',
    parse: seconds('allocation delay', 0, 3600),
    default: 0,
    doc: 'simulated seconds an allocation stays `allocating` before a node is picked',
  }),
  allocationWorkers: option({
    flag: '--allocation-workers <n>',
    env: 'ALLOT_ALLOCATION_WORKERS',
    parse: int('allocation workers', 1, 1000),
    default: 8,
    doc: 'bare-metal allocations one process works at once',
  }),
  maxPreferWait: option({
    flag: '--max-prefer-wait <seconds>',
    env: 'ALLOT_MAX_PREFER_WAIT',
    // whole seconds, as the header's delta-seconds
    parse: (raw) => int('max prefer wait', 0, 3600)(raw) * 1000,
    default: 30_000,
    doc: 'longest, in whole seconds, a `POST /v1/allocations` with `Prefer: wait=N` waits for its allocation to finish (below `--http-idle-timeout`); `0` ignores the preference',
  }),
  nodeLockWait: option({
    flag: '--node-lock-wait <seconds>',
    env: 'ALLOT_NODE_LOCK_WAIT',
    parse: seconds('node lock wait', 0, 60),
    default: 2_000,
    doc: "seconds a change of a node waits for the node's lock (a transition holds it) before it is refused with 409, as Ironic's conductor retries the lock",
  }),
  idsConfig: option({
    flag: '--ids-config <file>',
    env: 'ALLOT_IDS_CONFIG',
    parse: String,
    default: null,
    doc: 'identifier API: JSON file naming external inventories (see docs/ids.md)',
  }),
  idsLifecycles: option({
    flag: '--ids-lifecycles <file>',
    env: 'ALLOT_IDS_LIFECYCLES',
    parse: String,
    default: null,
    doc: 'identifier API: YAML file of service-instance lifecycles besides the built-in ones, checked at start (see docs/ids.md)',
  }),
  idsRetryBaseMs: option({
    flag: '--ids-retry-base-ms <ms>',
    env: 'ALLOT_IDS_RETRY_BASE_MS',
    parse: int('ids retry base', 1, 3_600_000),
    default: 1000,
    doc: 'identifier API: bound of the first retry delay of an undelivered external deallocation (doubles with every attempt; each wait is random below it)',
  }),
  idsRetryMaxMs: option({
    flag: '--ids-retry-max-ms <ms>',
    env: 'ALLOT_IDS_RETRY_MAX_MS',
    parse: int('ids retry max', 1, 86_400_000),
    default: 300_000,
    doc: 'identifier API: longest delay between delivery attempts',
  }),
  idsWorkerIntervalMs: option({
    flag: '--ids-worker-interval-ms <ms>',
    env: 'ALLOT_IDS_WORKER_INTERVAL_MS',
    parse: int('ids worker interval', 10, 3_600_000),
    default: 1000,
    doc: 'identifier API: how often the outbox and lease-expiry workers look for work',
  }),
  statisticsInterval: option({
    flag: '--statistics-interval <seconds>',
    env: 'ALLOT_STATISTICS_INTERVAL',
    parse: seconds('statistics interval', 0.01, 3600),
    default: 1000,
    doc: 'PostgreSQL: seconds between looks for tables that outgrew their planner statistics (analyzed then: autovacuum waits a minute)',
  }),
  dbConnectTimeout: option({
    flag: '--db-connect-timeout <seconds>',
    env: 'ALLOT_DB_CONNECT_TIMEOUT',
    parse: seconds('db connect timeout', 0.1, 600),
    default: DATABASE_TIMEOUT_DEFAULTS.connectTimeoutMs,
    doc: 'PostgreSQL: seconds to make a connection; a write that lost its connection before COMMIT is retried on a new one for as long',
  }),
  dbStatementTimeout: option({
    flag: '--db-statement-timeout <seconds>',
    env: 'ALLOT_DB_STATEMENT_TIMEOUT',
    parse: seconds('db statement timeout', 0.1, 3600),
    default: DATABASE_TIMEOUT_DEFAULTS.statementTimeoutMs,
    doc: 'PostgreSQL: seconds a statement may run (server-side `statement_timeout`; the client gives the connection up 2 s later if the server does not answer at all), and the longest wait for a free pooled connection',
  }),
  dbIdleInTransactionTimeout: option({
    flag: '--db-idle-in-transaction-timeout <seconds>',
    env: 'ALLOT_DB_IDLE_IN_TRANSACTION_TIMEOUT',
    parse: seconds('db idle-in-transaction timeout', 1, 86400),
    default: DATABASE_TIMEOUT_DEFAULTS.idleInTransactionTimeoutMs,
    doc: 'PostgreSQL: the server ends a session left idle inside a transaction this long',
  }),
  dbKeepalive: option({
    flag: '--db-keepalive <seconds>',
    env: 'ALLOT_DB_KEEPALIVE',
    parse: seconds('db keepalive', 1, 7200),
    default: DATABASE_TIMEOUT_DEFAULTS.keepAliveMs,
    doc: 'PostgreSQL: seconds of silence after which TCP keepalive probes check the server is there',
  }),
  dbConnectionCheckInterval: option({
    flag: '--db-connection-check-interval <seconds>',
    env: 'ALLOT_DB_CONNECTION_CHECK_INTERVAL',
    parse: seconds('db connection check interval', 0, 3600),
    default: DATABASE_TIMEOUT_DEFAULTS.connectionCheckIntervalMs,
    doc: "PostgreSQL 14+: while a statement runs, seconds between the server's checks that its connection is still there (`client_connection_check_interval`), so a statement allot gave up on is cancelled; 0: never",
  }),
  requestDeadline: option({
    flag: '--request-deadline <seconds>',
    env: 'ALLOT_REQUEST_DEADLINE',
    parse: seconds('request deadline', 0.1, 3600),
    // under the 30 s a load balancer commonly waits, so the client hears allot's 503, not the balancer's
    default: 25_000,
    doc: 'PostgreSQL: seconds a request may wait on the database in all — a pooled or new connection, its statements, its retries — before it answers 503 (under the 30 s load balancers commonly wait)',
  }),
  sqliteBusyTimeout: option({
    flag: '--sqlite-busy-timeout <seconds>',
    env: 'ALLOT_SQLITE_BUSY_TIMEOUT',
    parse: seconds('sqlite busy timeout', 0, 600),
    default: DATABASE_TIMEOUT_DEFAULTS.busyTimeoutMs,
    doc: "SQLite: seconds a write waits for another process's write lock",
  }),
  healthTimeout: option({
    flag: '--health-timeout <seconds>',
    env: 'ALLOT_HEALTH_TIMEOUT',
    parse: seconds('health timeout', 0.05, 600),
    default: 2_000,
    doc: '`/healthz` and `/readyz` answer 503 when the database does not answer within this',
  }),
  readyWait: option({
    flag: '--ready-wait <seconds>',
    env: 'ALLOT_READY_WAIT',
    parse: seconds('ready wait', 0, 600),
    default: 5_000,
    doc: 'seconds a request that arrives while the process starts (waiting for its database, loading the provider index) waits for it; then 503 with `Retry-After`',
  }),
  httpHeadersTimeout: option({
    flag: '--http-headers-timeout <seconds>',
    env: 'ALLOT_HTTP_HEADERS_TIMEOUT',
    parse: seconds('http headers timeout', 0.1, 3600),
    default: 10_000,
    doc: 'seconds a client has to send its request headers',
  }),
  httpRequestTimeout: option({
    flag: '--http-request-timeout <seconds>',
    env: 'ALLOT_HTTP_REQUEST_TIMEOUT',
    parse: seconds('http request timeout', 0.1, 3600),
    default: 30_000,
    doc: 'seconds a client has to send its whole request (headers and body)',
  }),
  httpKeepaliveTimeout: option({
    flag: '--http-keepalive-timeout <seconds>',
    env: 'ALLOT_HTTP_KEEPALIVE_TIMEOUT',
    parse: seconds('http keep-alive timeout', 0.1, 3600),
    // Longer than the 60 s idle timeouts of load balancers and of clients' periodic calls, so that
    // the client closes an idle connection first: a request sent on a connection the server is
    // closing at that moment fails as a connection error that most clients do not retry.
    default: 65_000,
    doc: 'seconds an idle keep-alive connection stays open (longer than the clients and load balancers in front, so they close it first)',
  }),
  httpIdleTimeout: option({
    flag: '--http-idle-timeout <seconds>',
    env: 'ALLOT_HTTP_IDLE_TIMEOUT',
    parse: seconds('http idle timeout', 0.1, 86400),
    default: 60_000,
    doc: 'seconds a connection may pass with no traffic either way',
  }),
  maxConnections: option({
    flag: '--max-connections <n>',
    env: 'ALLOT_MAX_CONNECTIONS',
    parse: int('max connections', 1, 1_000_000),
    default: 1_000,
    doc: 'most client connections at once per listener',
  }),
  shutdownDelay: option({
    flag: '--shutdown-delay <seconds>',
    env: 'ALLOT_SHUTDOWN_DELAY',
    parse: seconds('shutdown delay', 0, 300),
    default: 0,
    doc: 'seconds to keep serving after SIGTERM while `/readyz` answers 503, so that a load balancer stops sending requests before the listener closes (see docs/operations.md)',
  }),
  auth: option({
    flag: '--auth <mode>',
    env: 'ALLOT_AUTH',
    parse: oneOf('auth', ['noauth', 'keystone']),
    default: 'noauth',
    doc: '`noauth` (development: nobody is verified; loopback only) or `keystone` (validate `X-Auth-Token` with Keystone); see [docs/auth.md](docs/auth.md)',
  }),
  insecureNoauth: option({
    flag: '--insecure-noauth',
    env: 'ALLOT_INSECURE_NOAUTH',
    parse: bool('insecure noauth'),
    default: false,
    doc: 'allow `noauth` on a `--host` other machines reach (anyone reaching the port is an administrator)',
  }),
  metricsPublic: option({
    flag: '--metrics-public',
    env: 'ALLOT_METRICS_PUBLIC',
    parse: bool('metrics public'),
    default: false,
    doc: 'serve `GET /metrics` to anyone who reaches the main port (off: under `keystone`, a token with the `admin` role; under `noauth`, loopback names only)',
  }),
  allowedHosts: option({
    flag: '--allowed-hosts <names>',
    env: 'ALLOT_ALLOWED_HOSTS',
    parse: names,
    default: [],
    list: true,
    doc: '`noauth`: comma-separated names requests may be addressed to (`Host`) besides `localhost`, `127.0.0.1`, `[::1]`',
  }),
  keystoneUrl: option({
    flag: '--keystone-url <url>',
    env: 'ALLOT_KEYSTONE_URL',
    parse: String,
    default: null,
    doc: "Keystone's URL, with or without `/v3`",
  }),
  keystoneUsername: option({
    flag: '--keystone-username <name>',
    env: 'ALLOT_KEYSTONE_USERNAME',
    parse: String,
    default: null,
    doc: "allot's service user in Keystone (validates tokens; needs the `service` or `admin` role)",
  }),
  keystonePassword: option({
    flag: '--keystone-password <password>',
    env: 'ALLOT_KEYSTONE_PASSWORD',
    parse: String,
    default: null,
    secret: true,
    doc: "the service user's password (prefer the environment: a command line is visible to other users; never logged)",
  }),
  keystoneProject: option({
    flag: '--keystone-project <name>',
    env: 'ALLOT_KEYSTONE_PROJECT',
    parse: String,
    default: null,
    doc: "the project of the service user's token",
  }),
  keystoneUserDomain: option({
    flag: '--keystone-user-domain <name>',
    env: 'ALLOT_KEYSTONE_USER_DOMAIN',
    parse: String,
    default: 'Default',
    doc: "the service user's domain (name)",
  }),
  keystoneProjectDomain: option({
    flag: '--keystone-project-domain <name>',
    env: 'ALLOT_KEYSTONE_PROJECT_DOMAIN',
    parse: String,
    default: 'Default',
    doc: "the service project's domain (name)",
  }),
  keystoneTimeout: option({
    flag: '--keystone-timeout <seconds>',
    env: 'ALLOT_KEYSTONE_TIMEOUT',
    parse: seconds('keystone timeout', 0.1, 600),
    default: 5_000,
    doc: 'seconds to wait for Keystone; no answer in time is a 503',
  }),
  keystoneTokenCacheTime: option({
    flag: '--keystone-token-cache-time <seconds>',
    env: 'ALLOT_KEYSTONE_TOKEN_CACHE_TIME',
    parse: seconds('keystone token cache time', 0, 86400),
    // keystonemiddleware's token_cache_time
    default: 300_000,
    doc: "seconds a token's validation is reused (never past its expiry); a revoked token is refused at the latest this long after; `0`: ask every time",
  }),
  keystoneTokenCacheSize: option({
    flag: '--keystone-token-cache-size <n>',
    env: 'ALLOT_KEYSTONE_TOKEN_CACHE_SIZE',
    parse: int('keystone token cache size', 1, 10_000_000),
    default: 10_000,
    doc: 'most token validations kept',
  }),
  policyFile: option({
    flag: '--policy-file <path>',
    env: 'ALLOT_POLICY_FILE',
    parse: String,
    default: null,
    doc: 'policy file (YAML: `"rule name": "check string"`) over the default rules',
  }),
  enforceNewDefaults: option({
    flag: '--enforce-new-defaults',
    env: 'ALLOT_ENFORCE_NEW_DEFAULTS',
    parse: bool('enforce new defaults'),
    default: true,
    doc: 'on: only the current default rules; off: rules also allow what their legacy (deprecated) defaults allowed',
  }),
  enforceScope: option({
    flag: '--enforce-scope',
    env: 'ALLOT_ENFORCE_SCOPE',
    parse: bool('enforce scope'),
    default: true,
    doc: 'refuse tokens whose scope (system, project) a rule is not for',
  }),
  logFormat: option({
    flag: '--log-format <format>',
    env: 'ALLOT_LOG_FORMAT',
    parse: oneOf('log format', ['auto', 'json', 'pretty']),
    default: 'auto',
    doc: '`json` (one JSON object per line), `pretty` (`12:04:05.123 INFO  allot ready db=…`), or `auto`: pretty when stdout is a terminal, JSON otherwise',
  }),
};

type Declarations = typeof DECLARED;

/** The effective configuration: each option's value, typed by its entry. */
export type Config = { [K in keyof Declarations]: Declarations[K]['default'] };

export type AuthMode = Config['auth'];
export type BaremetalBackendName = Config['baremetalBackend'];

/** An option of the table, with the key it fills in `Config` (commander's name for its flag). */
export type OptionSpec = Declared<unknown> & { key: keyof Config; default: unknown };

/** Every option, in the table's order (the order of `allot config`). */
export const OPTIONS: readonly OptionSpec[] = Object.entries(DECLARED).map(([key, spec]) => ({ ...spec, key: key as keyof Config }));

/** Is this option a switch (`--x` / `--no-x`) rather than `--x <value>`? */
export const isSwitch = (spec: OptionSpec) => !spec.flag.includes('<');

export function defaultConfig(): Config {
  // lists are copied: a caller may change its configuration's
  return Object.fromEntries(OPTIONS.map((spec) => [spec.key, Array.isArray(spec.default) ? [...spec.default] : spec.default])) as Config;
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

/** The configuration file's own option (README.md's first row): no key of the file, no default. */
export const CONFIG_FILE = { flag: '--config', env: CONFIG_ENV, doc: 'YAML configuration file (`serve`, `migrate`, `config`)' } as const;

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
  // a waiting request sends nothing: the idle timeout would close its connection first
  if (result.maxPreferWait >= result.httpIdleTimeout) {
    throw new ConfigError(`max prefer wait (${result.maxPreferWait / 1000}s) must be shorter than the http idle timeout (${result.httpIdleTimeout / 1000}s)`);
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
    throw new ConfigError(`${path}: ${yamlSyntaxProblem(text, err)}`);
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

/**
 * A YAML syntax error as one line: where, what the parser says, and a hint. Most come from a value
 * that needed quotes: `db: sqlite::memory:` is a mapping in YAML (a ":" ending a word opens one),
 * so when the line parses with its value quoted, that is the hint.
 */
function yamlSyntaxProblem(text: string, err: unknown): string {
  const what = (err as Error).message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  if (!(err instanceof YAMLParseError) || !err.linePos) return `not valid YAML: ${what}`;
  const { line, col } = err.linePos[0];
  const source = text.split(/\r?\n/)[line - 1] ?? '';
  const pair = /^([A-Za-z][\w-]*):\s+(.*?)(\s+#.*)?$/.exec(source.trim());
  const parses = (t: string) => {
    try {
      parseYaml(t);
      return true;
    } catch {
      return false;
    }
  };
  const quoted = pair && !/^["']/.test(pair[2]!) ? `${pair[1]}: ${JSON.stringify(pair[2])}` : null;
  const hint =
    quoted && !parses(source.trim()) && parses(quoted)
      ? `quote the value: ${quoted}`
      : 'indent with spaces only (every option at the start of its line), and quote a value that holds ": " or " #" or starts with one of [ ] { } , & * ! | > \' " % @ `';
  return `not valid YAML (line ${line}, column ${col}: ${JSON.stringify(source.trim())}): ${what}; ${hint}`;
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
export function displayValue(spec: OptionSpec, value: unknown): DisplayValue {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'number' && spec.flag.includes('<seconds>')) return value / 1000;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}

/** A value as `allot config` prints it: JSON's own types, seconds for durations. */
export type DisplayValue = string | number | boolean | string[] | null;

/** A value with its secret parts hidden: passwords in URLs, and the options marked secret. */
export function maskedValue(spec: OptionSpec, value: DisplayValue): DisplayValue {
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
    connectionCheckIntervalMs: config.dbConnectionCheckInterval,
    maxAttempts: config.maxAttempts,
  };
}
