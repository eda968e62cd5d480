// Opens the database named by a URL (`sqlite:PATH`, `sqlite::memory:`, `postgres://…`) and
// builds the one handle (db/database.ts) for both dialects: SQLite with its statement cache, WAL
// flusher and group committer; PostgreSQL with its guarded pool and LISTEN connection.
import { type FileHandle, open, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type net from 'node:net';
import pg from 'pg';
import { systemClock } from '../core/clock.js';
import { DatabaseClock } from './database-clock.js';
import { DATABASE_TIMEOUT_DEFAULTS, type Database, type DatabaseOptions, dialectOf, maskUrl } from './database.js';
import { currentDeadline, deadlinePassed, msLeft, untilDeadline } from './deadline.js';
import { DatabaseFault, classifyFault } from './faults.js';
import { sqliteAccessProblem } from './sqlite-access.js';
import type { Schema } from './schema.js';
import { openThreadReader } from './thread-reader.js';
import { IGNORE_WRITES, directWriter, groupCommitter } from './transaction.js';

// PostgreSQL returns int8 (COUNT, SUM) as strings to avoid precision loss; every count and
// amount in allot fits in a double exactly (Placement caps amounts at 2^31-1), so parse them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export async function openDatabase(url: string, options: DatabaseOptions = {}): Promise<Database> {
  const dialect = dialectOf(url);
  if (dialect === 'sqlite') return openSqlite(url.slice('sqlite:'.length), options);
  return openPostgres(url, options);
}

function openSqlite(path: string, options: DatabaseOptions): Database {
  const file = path === '' ? ':memory:' : path;
  const problem = file === ':memory:' ? null : sqliteAccessProblem(file);
  if (problem) throw new Error(`cannot open the SQLite database ${file}: ${problem}`);
  const busyTimeoutMs = options.busyTimeoutMs ?? DATABASE_TIMEOUT_DEFAULTS.busyTimeoutMs;
  const sync = options.sqliteSync ?? 'full';
  let raw: BetterSqlite3.Database | undefined;
  try {
    raw = new BetterSqlite3(file);
    raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (file !== ':memory:') raw.pragma('journal_mode = WAL');
  } catch (err) {
    raw?.close();
    throw new Error(`cannot open the SQLite database ${file}: ${(err as Error).message}`, { cause: err });
  }
  // 'full' is NORMAL plus our own fsync of the WAL after each commit, off the event loop.
  const flusher = sync === 'full' && file !== ':memory:' ? walFlusher(`${file}-wal`) : null;
  raw.pragma(`synchronous = ${flusher ? 'NORMAL' : sync.toUpperCase()}`);
  raw.pragma('foreign_keys = ON');
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  const database: Database = {
    db,
    dialect: 'sqlite',
    clock: options.clock ?? systemClock,
    maxAttempts: attemptsOf(options),
    writer: groupCommitter(() => database),
    observer: IGNORE_WRITES,
    preparedNames: new Map(),
    commitListeners: new Map(),
    displayUrl: `sqlite:${file}`,
    connectTimeoutMs: busyTimeoutMs,
    ...(flusher && { flushCommits: flusher.flush }),
    ...(file !== ':memory:' && {
      openThreadReader: () => openThreadReader(file, busyTimeoutMs),
      freeBytes: async () => {
        const fs = await statfs(dirname(file));
        return fs.bavail * fs.bsize;
      },
    }),
    close: async () => {
      await db.destroy();
      await flusher?.close();
    },
  };
  return database;
}

function attemptsOf(options: DatabaseOptions): number {
  return Math.max(1, Math.floor(options.maxAttempts ?? 10));
}

/**
 * With synchronous=FULL, SQLite fsyncs the WAL inside COMMIT, and better-sqlite3 runs COMMIT on
 * the event loop: the whole server stalls for the fsync (about a millisecond) on every commit.
 * Instead the connection runs at NORMAL — in WAL mode that syncs at checkpoints only — and the
 * transaction helper calls `flush` after each COMMIT: an fdatasync of the WAL on libuv's thread
 * pool, which the replies wait for. An acknowledged write is then exactly as durable as with
 * FULL, and the server keeps working during the sync. Calls coalesce: a call made while a sync is
 * running waits for the next one, which covers every commit made before it started.
 */
function walFlusher(walPath: string) {
  let handle: Promise<FileHandle> | null = null;
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const syncOnce = async () => {
    handle ??= open(walPath, 'r+');
    try {
      await (await handle).datasync();
    } catch (err) {
      handle = null; // open again next time
      throw err;
    }
  };
  const flush = (): Promise<void> => {
    if (!running) {
      running = syncOnce().finally(() => (running = null));
      return running;
    }
    next ??= running
      .catch(() => {})
      .then(() => {
        next = null;
        return flush();
      });
    return next;
  };
  return {
    flush,
    close: async () => {
      await running?.catch(() => {});
      await (await handle?.catch(() => null))?.close();
    },
  };
}

/**
 * Kysely prepares every query anew; preparing costs about as much as running a small statement.
 * Our queries come from a fixed set of shapes, so keep the prepared statements (bounded).
 */
function withStatementCache(raw: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        stmt = raw.prepare(sqlText);
        if (cache.size >= 2000) cache.delete(cache.keys().next().value!);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
    close: () => raw.close(),
  };
}

/**
 * PostgreSQL parses and plans an unnamed statement every time it runs. The hot-path statements
 * (db/statement.ts) are a small fixed set of texts, so each gets a name and is prepared once per
 * connection; past this many texts, new ones run unnamed (the set should never get there).
 */
const MAX_NAMED_STATEMENTS = 1000;
export function prepareOnPostgres(database: Database, text: string): void {
  const names = database.preparedNames;
  if (!names.has(text) && names.size < MAX_NAMED_STATEMENTS) names.set(text, `allot_${names.size + 1}`);
}

/** Server-side limits every allot connection runs with, and TCP keepalives to notice a dead peer. */
function connectionConfig(url: string, options: DatabaseOptions): pg.ClientConfig {
  const t = { ...DATABASE_TIMEOUT_DEFAULTS, ...definedOnly(options) };
  return {
    connectionString: url,
    application_name: 'allot',
    connectionTimeoutMillis: t.connectTimeoutMs,
    statement_timeout: t.statementTimeoutMs,
    idle_in_transaction_session_timeout: t.idleInTransactionTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: t.keepAliveMs,
  };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** How long after statement_timeout the client stops waiting for a server that does not answer. */
const CLIENT_GRACE_MS = 2_000;

/**
 * Make a pooled connection safe to lose at any moment, and fast:
 * - it always has an 'error' listener: node-postgres emits 'error' on a client whose socket dies
 *   (a restart, a failover, pg_terminate_backend) even while it is checked out, and an 'error'
 *   event without a listener ends the process. The query in flight fails on its own; the pool
 *   drops the dead client when it comes back.
 * - every query has a time limit: a server that stops answering (frozen host, lost packets) would
 *   otherwise hold the request forever. Past the statement timeout and its grace, or the request's
 *   deadline (db/deadline.ts) if that comes first, the connection is dropped (dropConnection), so
 *   the pool never hands it out again.
 * - a query failing with a fault that condemns the connection (read-only server, shutdown) drops
 *   it too: the next transaction gets a fresh connection, through the load balancer to the
 *   current primary.
 * - registered hot-path texts run as named (prepared) statements.
 */
function guardConnection(client: pg.PoolClient, statementTimeoutMs: number, names: Map<string, string>): void {
  client.on('error', () => {});
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const retire = () => dropConnection(client);
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    if (callback !== undefined || typeof text !== 'string') return query(text, values, callback);
    // A request out of time sends nothing more; its connection may be inside a transaction that
    // this cannot roll back, so it is dropped (the server rolls back).
    const deadline = currentDeadline();
    if (msLeft(deadline) <= 0) {
      retire();
      return Promise.reject(deadlinePassed());
    }
    const name = names.get(text);
    const running = name ? query({ name, text, values }) : query(text, values);
    let timer: NodeJS.Timeout | undefined;
    const tooSlow = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        retire();
        reject(new DatabaseFault('timeout', 'The database did not answer in time.'));
      }, statementTimeoutMs + CLIENT_GRACE_MS);
    });
    running.catch(() => {}); // its failure after a deadline has nobody left to hear it
    return untilDeadline(Promise.race([running, tooSlow]), deadline, retire).then(
      (result) => {
        clearTimeout(timer);
        return result;
      },
      (err: unknown) => {
        clearTimeout(timer);
        const fault = classifyFault(err);
        if (fault && fault.kind !== 'storage_full') retire();
        throw err;
      },
    );
  };
}

/**
 * Drop a connection whose statement was given up on, with a reset (RST), not a close (FIN): a
 * close leaves what the kernel has not yet delivered — a statement sent into a network partition —
 * to be delivered when the partition heals, and run then, long after its client was answered
 * `commit_unknown` and went on (found by the chaos run: a DELETE so answered applied 8 s later,
 * after two acknowledged moves of the same consumer). A reset drops it. The server rolls back an
 * open transaction when it learns the connection is gone.
 */
function dropConnection(client: pg.PoolClient): void {
  const socket = (client as unknown as { connection?: { stream?: net.Socket } }).connection?.stream;
  try {
    if (socket && !socket.destroyed) socket.resetAndDestroy();
  } catch {
    socket?.destroy(); // a stream that cannot reset (TLS before its handshake): closed instead
  }
  void client.end().catch(() => {});
}

/**
 * Have the server check, every `intervalMs` while a statement of this connection runs, that the
 * connection is still there (`client_connection_check_interval`, PostgreSQL 14+), and cancel the
 * statement when it is not. When allot gives a statement up (the request's deadline, the statement
 * timeout and its grace) it resets the connection (dropConnection), but a backend learns that only
 * when it next reads or writes the socket: a statement waiting for a row lock would still run once
 * the lock frees — a one-statement write (its own transaction) then commits, long after its client
 * was told `commit_unknown` and went on. Sent as the connection's first statement (queued before any
 * other); an older server skips it (the `where`), and a failure here leaves the connection as it
 * was. Not a startup parameter: node-postgres passes only `options` for that, which a URL's own
 * `options` would replace.
 */
function checkConnectionWhileRunning(client: pg.PoolClient, intervalMs: number): void {
  if (intervalMs <= 0) return;
  void client
    .query("select set_config('client_connection_check_interval', $1, false) where current_setting('server_version_num')::int >= 140000", [String(intervalMs)])
    .catch(() => {});
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const config = connectionConfig(url, options);
  const statementTimeoutMs = Number(config.statement_timeout);
  // Two waits, two bounds: making a connection is bounded by the connect timeout (a server that
  // does not answer), waiting for a busy pool to free one by the statement timeout (load: the
  // connections are in use by statements that are themselves bounded so).
  const connectTimeoutMs = Number(config.connectionTimeoutMillis);
  class BoundedClient extends pg.Client {
    constructor(c?: pg.ClientConfig) {
      super({ ...c, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const pool = new pg.Pool({
    ...config,
    Client: BoundedClient,
    connectionTimeoutMillis: statementTimeoutMs,
    max: options.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
  });
  const preparedNames = new Map<string, string>();
  const checkIntervalMs = options.connectionCheckIntervalMs ?? DATABASE_TIMEOUT_DEFAULTS.connectionCheckIntervalMs;
  pool.on('connect', (client) => {
    checkConnectionWhileRunning(client, checkIntervalMs);
    guardConnection(client, statementTimeoutMs, preparedNames);
  });
  // An idle client that loses its server emits 'error' on the pool; the pool drops it.
  pool.on('error', () => {});
  // A request waits for a pooled (or new) connection until its deadline at most.
  const connect = async () => {
    const deadline = currentDeadline();
    if (msLeft(deadline) <= 0) throw deadlinePassed();
    const pending = pool.connect();
    return untilDeadline(
      pending,
      deadline,
      () =>
        void pending.then(
          (c) => c.release(),
          () => {},
        ),
    );
  };
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }) });
  const listeners: Array<{ stop(): Promise<void> }> = [];
  const databaseClock = options.clock
    ? null
    : new DatabaseClock(async () => {
        const { rows } = await sql<{ now_ms: number }>`select extract(epoch from clock_timestamp()) * 1000 as now_ms`.execute(db);
        return Number(rows[0]!.now_ms);
      });
  return {
    db,
    dialect: 'postgres',
    clock: options.clock ?? databaseClock!,
    ...(databaseClock && { measureClock: () => databaseClock.measure() }),
    maxAttempts: attemptsOf(options),
    writer: directWriter,
    observer: IGNORE_WRITES,
    preparedNames,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    commitListeners: new Map(),
    displayUrl: maskUrl(url),
    connectTimeoutMs: Number(config.connectionTimeoutMillis),
    listen: (channel, onMessage, onReset) => void listeners.push(listenForever(config, channel, onMessage, onReset)),
    notify: async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    close: async () => {
      await Promise.all(listeners.map((l) => l.stop()));
      await db.destroy();
    },
  };
}

/** How often an idle LISTEN connection is checked: a silently dead one would lose every notification. */
const LISTEN_PING_MS = 15_000;

/** LISTEN on a dedicated connection, reconnecting (with backoff) until stopped. */
function listenForever(config: pg.ClientConfig, channel: string, onMessage: (payload: string) => void, onReset: () => void) {
  let stopped = false;
  let client: pg.Client | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let pingTimer: NodeJS.Timeout | null = null;
  let delay = 100;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client(config);
    client = c;
    const retry = () => {
      if (stopped || client !== c) return;
      client = null;
      if (pingTimer) clearInterval(pingTimer);
      c.end().catch(() => {});
      retryTimer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 5_000);
    };
    c.on('error', retry);
    c.on('end', retry);
    c.on('notification', (n) => {
      if (n.channel === channel) onMessage(n.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
      delay = 100;
      // A ping that does not come back in time means the peer is gone: start over.
      pingTimer = setInterval(() => {
        const timeout = setTimeout(retry, Number(config.connectionTimeoutMillis ?? 5_000));
        c.query('select 1').then(
          () => clearTimeout(timeout),
          () => {
            clearTimeout(timeout);
            retry();
          },
        );
      }, LISTEN_PING_MS);
      onReset();
    } catch {
      retry();
    }
  };
  void connect();
  return {
    stop: async () => {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (pingTimer) clearInterval(pingTimer);
      await client?.end().catch(() => {});
    },
  };
}
