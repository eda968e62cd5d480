// Opens the database named by a URL (`sqlite:PATH`, `sqlite::memory:`, `postgres://…`) and hands
// back one handle for both dialects, plus what the rest of the code needs to know about the
// dialect (SQLite has one writer at a time; PostgreSQL has row locks).
//
// Outside a transaction the handle reads only: its `db` has Kysely's select builders and nothing
// that writes, so every write has to go through `transaction()` (db/transaction.ts), which hands
// the work a `Tx` with the full builder. Everything a process keeps per database — the SQLite
// group committer, the names of prepared statements, the retry policy, the clock — lives on this
// handle, made once at start, not in module-level variables.
import type { ThreadReader } from './thread-reader.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.js';
import type { ClockMeasurement } from './database-clock.js';
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
  /** PostgreSQL: longest wait for a new connection or a free pooled one, ms */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: longest a statement may run, ms. The server cancels it (statement_timeout) and,
   * should the server not answer at all (a frozen host), the client gives the connection up a
   * little later.
   */
  statementTimeoutMs?: number;
  /** PostgreSQL: the server ends a session left idle inside a transaction this long, ms */
  idleInTransactionTimeoutMs?: number;
  /** PostgreSQL: TCP keepalive probes start after this much silence on a connection, ms */
  keepAliveMs?: number;
  /**
   * PostgreSQL 14+: how often the server checks, while a statement runs, that the connection is
   * still there (`client_connection_check_interval`), ms; 0: never
   */
  connectionCheckIntervalMs?: number;
  /** tries for a write that loses a race to another writer (including the first); default 10 */
  maxAttempts?: number;
  /**
   * where "now" comes from (tests move a ManualClock); by default the database's own clock on
   * PostgreSQL (db/database-clock.ts), the system clock on SQLite
   */
  clock?: Clock;
}

/** Defaults of the bounded waits (the README's option table lists them). */
export const DATABASE_TIMEOUT_DEFAULTS = {
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
  keepAliveMs: 10_000,
  connectionCheckIntervalMs: 1_000,
  busyTimeoutMs: 5_000,
} as const;

/** Kysely's reading half: what a handle outside a transaction offers. */
export type ReadOnlyKysely = Pick<Kysely<Schema>, 'selectFrom' | 'selectNoFrom' | 'fn' | 'dynamic'>;

/** What a read needs: the read-only builder, which SQL dialect is behind it, and the clock. */
export interface Db {
  readonly db: ReadOnlyKysely;
  readonly dialect: DialectName;
  readonly clock: Clock;
}

/** For db/ only: the full builder behind a handle (statements run through it). */
export const kyselyOf = (db: Db): Kysely<Schema> => db.db as Kysely<Schema>;

export interface Database extends Db {
  /** tries for a write that loses a race to another writer, including the first */
  readonly maxAttempts: number;
  /** how writes reach the database (db/transaction.ts): one at a time, or grouped per commit */
  readonly writer: Writer;
  /** PostgreSQL: names of the statements prepared on every connection (db/statement.ts) */
  readonly preparedNames: Map<string, string>;
  /** who follows committed changes, per topic (db/transaction.ts onCommit) */
  readonly commitListeners: Map<CommitTopic<unknown>, Array<(record: unknown) => void>>;
  /** the URL with any password masked, for logs */
  readonly displayUrl: string;
  /** longest a write waits for the database (a connection, a lock) before it is a fault, ms */
  readonly connectTimeoutMs: number;
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
  /**
   * SQLite in a file: bytes free on the filesystem holding it. (A write may still fit in space
   * the file already has while every other write fails; readiness looks at this too.)
   */
  freeBytes?(): Promise<number>;
  /**
   * SQLite in a file: a read-only connection on a worker thread (db/thread-reader.ts), for reads
   * long enough to hold the event loop; the caller closes it.
   */
  openThreadReader?(): ThreadReader;
  /** who hears of retries and group commits (the process's metrics, set once at start; nothing by default) */
  observer: WriteObserver;
  /** PostgreSQL only: the connection pool's counts, read when metrics are scraped */
  poolStats?(): { total: number; idle: number; waiting: number };
  /**
   * PostgreSQL on the database's clock (no clock handed in): measure how far it is from this
   * process's clock, before the first use of `clock` and then now and then (db/database-clock.ts).
   */
  measureClock?(): Promise<ClockMeasurement>;
  /** PostgreSQL only: NOTIFY `channel` with `payload`, outside any transaction. */
  notify?(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

declare const inTransaction: unique symbol;
/** A handle bound to one connection inside an open transaction: writes and locking reads demand one. */
export interface Tx extends Db {
  readonly [inTransaction]: true;
  /** the full builder, writes included */
  readonly db: Kysely<Schema>;
  /** the database this transaction belongs to (for per-database caches and notifications) */
  readonly database: Database;
  /** run `fn` once the transaction has committed (not when it rolls back) */
  afterCommit(fn: () => void): void;
  /** this transaction's record under `topic`, made on first use; its listeners get it after the commit */
  record<T>(topic: CommitTopic<T>): T;
}

/**
 * What a transaction says it changed, for whoever keeps a picture of the database that must
 * follow it (the candidates' provider index). Stores record facts on the Tx; the listeners
 * registered with `onCommit` get the record once the transaction has committed — a store needs
 * no reference to the caches, and a rolled-back change reaches nobody.
 */
export interface CommitTopic<T> {
  readonly name: string;
  create(): T;
}

export interface TransactionOptions {
  /** total attempts including the first (default: the database's maxAttempts) */
  maxAttempts?: number;
  /**
   * PostgreSQL: the work sends exactly one statement, which PostgreSQL runs as a transaction of
   * its own; no BEGIN or COMMIT is sent, saving two round trips. (SQLite: no difference.)
   */
  oneStatement?: boolean;
  /** called each time this work is run again (a lost race or a fault), for the caller's metrics */
  onRetry?: () => void;
}

/** What the transaction helper tells the process's metrics (the handle's `observer`). */
export interface WriteObserver {
  /** a transaction is run again: it lost a race (`conflict`) or met a database fault before its commit (`fault`) */
  retried(reason: 'conflict' | 'fault' | 'step_aside'): void;
  /** SQLite: one group commit made `size` writes durable */
  batchCommitted(size: number): void;
}

/** How a database's writes are run: each on its own connection, or grouped into shared commits. */
export interface Writer {
  run<T>(database: Database, work: (tx: Tx) => Promise<T>, options: TransactionOptions): Promise<T>;
  /** stop taking work once what was submitted has run */
  drain?(): Promise<void>;
}

export function dialectOf(url: string): DialectName {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres';
  throw new Error(`unsupported database URL ${JSON.stringify(url)}: use sqlite:PATH, sqlite::memory: or postgres://…`);
}

/**
 * A URL with its passwords hidden, for logs and `allot config`: the user part's, and any query
 * parameter naming one (node-postgres reads `?password=` and `?sslpassword=`).
 */
export function maskUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1****@').replace(/([?&][^=&#]*password[^=&#]*=)[^&#]*/gi, '$1****');
}
