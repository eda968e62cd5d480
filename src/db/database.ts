// Opens the database named by a URL (`sqlite:PATH`, `sqlite::memory:`, `postgres://…`) and hands
// back one Kysely instance for both dialects, plus what the rest of the code needs to know about
// the dialect (SQLite has one writer at a time; PostgreSQL has row locks).
import { type FileHandle, open } from 'node:fs/promises';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Schema } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

/** `full` survives a power cut (fsync on every commit); `normal` may lose the last commits then. */
export type SqliteSync = 'full' | 'normal' | 'off';

export interface DatabaseOptions {
  sqliteSync?: SqliteSync;
  /** PostgreSQL connections per process */
  poolSize?: number;
  /** how long a SQLite writer waits for another process's write lock, ms */
  busyTimeoutMs?: number;
}

/** What a query needs: the Kysely handle and which SQL dialect is behind it. */
export interface Db {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
}

export interface Database extends Db {
  /** the URL with any password masked, for logs */
  readonly displayUrl: string;
  /**
   * PostgreSQL only: call `onMessage` for every NOTIFY on `channel`, on a connection of its own.
   * `onReset` is called each time that connection is (re)established: notifications sent while it
   * was down are lost, so the listener must assume anything may have changed. Ends with close().
   */
  listen?(channel: string, onMessage: (payload: string) => void, onReset: () => void): void;
  /**
   * SQLite with sqliteSync 'full': resolves once every commit made before the call is on disk.
   * The transaction helper waits for it before it reports a write as done.
   */
  flushCommits?(): Promise<void>;
  /** PostgreSQL only: NOTIFY `channel` with `payload`, outside any transaction. */
  notify?(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

// PostgreSQL returns int8 (COUNT, SUM) as strings to avoid precision loss; every count and
// amount in allot fits in a double exactly (Placement caps amounts at 2^31-1), so parse them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export function dialectOf(url: string): DialectName {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres';
  throw new Error(`unsupported database URL ${JSON.stringify(url)}: use sqlite:PATH, sqlite::memory: or postgres://…`);
}

export function maskUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

export async function openDatabase(url: string, options: DatabaseOptions = {}): Promise<Database> {
  const dialect = dialectOf(url);
  if (dialect === 'sqlite') return openSqlite(url.slice('sqlite:'.length), options);
  return openPostgres(url, options);
}

function openSqlite(path: string, options: DatabaseOptions): Database {
  const file = path === '' ? ':memory:' : path;
  const raw = new BetterSqlite3(file);
  raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 30_000}`);
  if (file !== ':memory:') raw.pragma('journal_mode = WAL');
  const sync = options.sqliteSync ?? 'full';
  // 'full' is NORMAL plus our own fsync of the WAL after each commit, off the event loop.
  const flusher = sync === 'full' && file !== ':memory:' ? walFlusher(`${file}-wal`) : null;
  raw.pragma(`synchronous = ${flusher ? 'NORMAL' : sync.toUpperCase()}`);
  raw.pragma('foreign_keys = ON');
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  return {
    db,
    dialect: 'sqlite',
    displayUrl: `sqlite:${file}`,
    ...(flusher && { flushCommits: flusher.flush }),
    close: async () => {
      await db.destroy();
      await flusher?.close();
    },
  };
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
const statementNames = new Map<string, string>();
export function preparedOnPostgres(text: string): void {
  if (!statementNames.has(text) && statementNames.size < MAX_NAMED_STATEMENTS) statementNames.set(text, `allot_${statementNames.size + 1}`);
}

/** Make a pool client run the registered texts as named (prepared) statements. */
function prepareNamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' && callback === undefined ? statementNames.get(text) : undefined;
    return name ? query({ name, text, values }) : query(text, values, callback);
  };
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  pool.on('connect', prepareNamedStatements);
  // An idle client that loses its server (restart, network) emits 'error'; without a listener
  // that would crash the process. The pool drops the client and makes a new one on demand.
  pool.on('error', () => {});
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  await sql`select 1`.execute(db); // fail fast on a bad URL
  const listeners: Array<{ stop(): Promise<void> }> = [];
  return {
    db,
    dialect: 'postgres',
    displayUrl: maskUrl(url),
    listen: (channel, onMessage, onReset) => void listeners.push(listenForever(url, channel, onMessage, onReset)),
    notify: async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    close: async () => {
      await Promise.all(listeners.map((l) => l.stop()));
      await db.destroy();
    },
  };
}

/** LISTEN on a dedicated connection, reconnecting (with backoff) until stopped. */
function listenForever(url: string, channel: string, onMessage: (payload: string) => void, onReset: () => void) {
  let stopped = false;
  let client: pg.Client | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let delay = 100;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: url });
    client = c;
    const retry = () => {
      if (stopped || client !== c) return;
      client = null;
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
      await client?.end().catch(() => {});
    },
  };
}
