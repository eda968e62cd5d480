// Infrastructure faults of the database, told apart from the errors of a request: a database that
// is unreachable, restarting, read-only (a demoted primary), too slow, or out of disk is not the
// client's mistake and not a bug. Each API answers them as 503 (507 for a full disk) in its own
// format, with Retry-After; nothing here is specific to one API.

export type FaultKind =
  /** the connection failed or could not be made; nothing was committed */
  | 'unavailable'
  /** the server is up but will not write (a standby, a demoted primary, recovery) */
  | 'read_only'
  /** no answer within the configured time; the connection was given up */
  | 'timeout'
  /** the connection failed after COMMIT was sent: the write may or may not have been applied */
  | 'commit_unknown'
  /** the disk holding the database is full */
  | 'storage_full';

/** A database fault, as the APIs report it. `cause` is the driver's error, for the log. */
export class DatabaseFault extends Error {
  constructor(
    readonly kind: FaultKind,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'DatabaseFault';
  }

  /** Seconds a client should wait before trying again. */
  get retryAfter(): number {
    return this.kind === 'storage_full' ? 30 : 2;
  }
}

// PostgreSQL SQLSTATEs (and classes) that mean "this connection or server cannot do the work now".
const PG_UNAVAILABLE_CLASSES = ['08']; // connection exception
const PG_UNAVAILABLE = new Set([
  '57P01', // admin_shutdown: the backend was terminated (restart, pg_terminate_backend, failover)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '57P05', // idle_session_timeout
  // the server ended a session left idle inside its transaction (--db-idle-in-transaction-timeout),
  // or a transaction past transaction_timeout (PostgreSQL 17): rolled back, like a lost connection.
  // Met by a process that stopped mid-transaction (a pause, a slow link) and then went on.
  '25P03', // idle_in_transaction_session_timeout
  '25P04', // transaction_timeout
  '53300', // too_many_connections
  '58030', // io_error
]);
const PG_READ_ONLY = new Set(['25006']); // read_only_sql_transaction: a standby or demoted primary
const PG_TIMEOUT = new Set(['57014']); // query_canceled: statement_timeout reached
const PG_STORAGE_FULL = new Set(['53100']); // disk_full
const PG_STALE_PREPARED = { code: '0A000', message: /cached plan must not change result type/ };
// Node's socket errors, and the texts node-postgres and its pool use for a dead or unreachable server.
// `timeout expired` is node-postgres's Client giving up a connection attempt after
// connectionTimeoutMillis (no code): what a client sees through a proxy such as HAProxy that
// accepts the TCP connection but cannot reach a server during a failover.
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
const NET_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error/,
  /^Client was closed/,
  /Cannot use a pool after calling end/,
  /^timeout expired$/,
];
/** node-postgres's pool: no connection was free within the wait allowed */
const POOL_WAIT_MESSAGE = /timeout exceeded when trying to connect/;

/** The fault `err` is, or null when it is an ordinary error of the request (or a bug). */
export function classifyFault(err: unknown): DatabaseFault | null {
  if (err instanceof DatabaseFault) return err;
  if (err === null || typeof err !== 'object') return null;
  const code = (err as { code?: unknown }).code;
  const message = String((err as { message?: unknown }).message ?? '');
  if (typeof code === 'string') {
    if (PG_READ_ONLY.has(code)) return new DatabaseFault('read_only', 'The database is read-only at the moment (a failover may be under way).', err);
    if (PG_TIMEOUT.has(code)) return new DatabaseFault('timeout', 'The database did not finish the statement in time.', err);
    // A prepared statement whose table changed shape since it was prepared (a newer process's
    // migration, in a rolling upgrade): this connection's statements are stale; a new one
    // prepares them again, so the transaction is retried there.
    if (code === PG_STALE_PREPARED.code && PG_STALE_PREPARED.message.test(message)) {
      return new DatabaseFault('unavailable', 'The database schema changed under a prepared statement.', err);
    }
    if (PG_STORAGE_FULL.has(code) || code === 'SQLITE_FULL') return new DatabaseFault('storage_full', 'The database cannot write: its disk is full.', err);
    if (PG_UNAVAILABLE.has(code) || PG_UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) || NET_CODES.has(code)) {
      return new DatabaseFault('unavailable', 'The database is unreachable at the moment.', err);
    }
    if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY') {
      return new DatabaseFault('unavailable', 'The database file cannot be read or written at the moment.', err);
    }
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_TIMEOUT')
      return new DatabaseFault('timeout', 'Another process held the database write lock too long.', err);
  }
  if (POOL_WAIT_MESSAGE.test(message)) return new DatabaseFault('timeout', 'No database connection became free in time; the service is overloaded.', err);
  if (NET_MESSAGES.some((re) => re.test(message))) return new DatabaseFault('unavailable', 'The database is unreachable at the moment.', err);
  return null;
}

/**
 * May a transaction that failed with this fault before its COMMIT was sent run again on a new
 * connection? Yes for a lost or refused connection and a read-only server (the pool replaces the
 * connection); not for a timeout, which already used up the time a request may wait, nor a full disk.
 */
export function isRetryableFault(fault: DatabaseFault): boolean {
  return fault.kind === 'unavailable' || fault.kind === 'read_only';
}
