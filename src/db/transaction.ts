// The one transaction helper. Every write in allot goes through `transaction()`.
//
// PostgreSQL: one transaction per call, READ COMMITTED, with explicit row locks / compare-and-set
// updates in the code that writes; concurrent commits share WAL flushes inside PostgreSQL.
//
// SQLite: one writer at a time anyway, and each commit must reach the disk (an fsync, about a
// millisecond), which would cap a process at ~1 000 writes/s. So calls that arrive while a write
// is in progress are grouped: the next batch runs them one after another inside one
// `BEGIN IMMEDIATE … COMMIT`, each in its own SAVEPOINT, so one failing call rolls back only its
// own changes. Every call's result is released only once the COMMIT that made it is on disk
// (Database.flushCommits: the fsync runs off the event loop while the next batch gathers).
//
// A call that loses a race it could not have known about (a RetryableConflict from a
// compare-and-set, a PostgreSQL deadlock or serialization failure) is rolled back and run again,
// up to the database's `maxAttempts` times in all.
//
// The handle outside a transaction reads only (db/database.ts); the `Tx` handed to the work is the
// one place with Kysely's write builders.
//
// Database faults (db/faults.ts): a transaction whose connection failed, or that met a read-only
// server, BEFORE its COMMIT was sent changed nothing, and runs again on a new connection with
// backoff, for at most the connect timeout and never past the request's deadline (db/deadline.ts).
// Once COMMIT is sent, a lost connection leaves the outcome unknown: that is reported
// (DatabaseFault 'commit_unknown'), never repeated blindly.
import { CompiledQuery, type Kysely } from 'kysely';
import { backoffDelay, sleep } from '../core/backoff.js';
import { RetryableConflict, concurrentUpdate } from '../core/errors.js';
import { type CommitTopic, type Database, type TransactionOptions, type Tx, type WriteObserver, type Writer, kyselyOf } from './database.js';
import { msLeft } from './deadline.js';
import { DatabaseFault, classifyFault, isRetryableFault } from './faults.js';
import type { Schema } from './schema.js';
import { isAssertRefusal, isLostRace, isUniqueViolation } from './sql-helpers.js';

/** Call `listener` with the record of every committed transaction that recorded under `topic`. */
export function onCommit<T>(database: Database, topic: CommitTopic<T>, listener: (record: T) => void): () => void {
  const listeners = database.commitListeners;
  const list = listeners.get(topic) ?? [];
  listeners.set(topic, [...list, listener as (record: unknown) => void]);
  return () =>
    listeners.set(
      topic,
      (listeners.get(topic) ?? []).filter((l) => l !== listener),
    );
}

/** A Tx for one attempt of one unit of work, collecting its commit hooks. */
function newTx(database: Database, conn: Kysely<Schema>) {
  const after: Array<() => void> = [];
  const records = new Map<CommitTopic<unknown>, unknown>();
  const tx = {
    db: conn,
    dialect: database.dialect,
    clock: database.clock,
    database,
    afterCommit: (fn: () => void) => void after.push(fn),
    record: <T>(topic: CommitTopic<T>): T => {
      let r = records.get(topic as CommitTopic<unknown>) as T | undefined;
      if (r === undefined) records.set(topic as CommitTopic<unknown>, (r = topic.create()));
      return r;
    },
  } as unknown as Tx;
  return {
    tx,
    runAfter: () => {
      for (const [topic, record] of records) for (const listener of database.commitListeners.get(topic) ?? []) listener(record);
      for (const fn of after) fn();
    },
  };
}

/** Tells nobody: a database's observer until the process's metrics replace it. */
export const IGNORE_WRITES: WriteObserver = { retried: () => {}, batchCommitted: () => {} };

/** Most calls one SQLite batch may hold; bounds the latency a batch adds to its last call. */
const MAX_BATCH = 64;

// Transaction control, compiled once (these run several times per write).
const BEGIN = CompiledQuery.raw('BEGIN');
const BEGIN_IMMEDIATE = CompiledQuery.raw('BEGIN IMMEDIATE');
const COMMIT = CompiledQuery.raw('COMMIT');
const ROLLBACK = CompiledQuery.raw('ROLLBACK');
const SAVEPOINT = CompiledQuery.raw('SAVEPOINT job');
const RELEASE = CompiledQuery.raw('RELEASE job');
const ROLLBACK_TO = CompiledQuery.raw('ROLLBACK TO job');
const ATTEMPT = CompiledQuery.raw('SAVEPOINT attempt');
const RELEASE_ATTEMPT = CompiledQuery.raw('RELEASE SAVEPOINT attempt');
const ROLLBACK_TO_ATTEMPT = CompiledQuery.raw('ROLLBACK TO SAVEPOINT attempt');

function isRetryable(err: unknown): boolean {
  if (err instanceof RetryableConflict) return true;
  if (isLostRace(err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT';
}

function exhausted(err: unknown): Error {
  if (err instanceof RetryableConflict) return err.exhausted();
  return concurrentUpdate();
}

/** The one door every write goes through. */
export function transaction<T>(database: Database, work: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  return database.writer.run(database, work, options);
}

/**
 * Try `work` inside the caller's transaction so that its failure takes back only its own writes
 * (a SAVEPOINT): the transaction goes on, e.g. to try the next candidate when one is refused.
 * Commit hooks the failed work recorded are not taken back, so work tried this way must fail
 * before it records any (the allocation writes check everything before they note a change).
 */
export async function savepoint<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
  // One name for every level: both databases roll back to, and release, the latest of a name.
  await tx.db.executeQuery(ATTEMPT);
  try {
    const value = await work();
    await tx.db.executeQuery(RELEASE_ATTEMPT);
    return value;
  } catch (err) {
    await tx.db.executeQuery(ROLLBACK_TO_ATTEMPT);
    await tx.db.executeQuery(RELEASE_ATTEMPT);
    throw err;
  }
}

/**
 * A fast path that may step aside for the general one: `work` in a transaction of its own, tried
 * once (with `oneStatement`, as PostgreSQL's implicit transaction of that one statement). Its
 * result, or undefined when the general path is to decide and word the answer: the work refused
 * (allot_assert, a unique index, anything it throws), lost a race (deadlock, serialization
 * failure), or no connection was made (nothing was sent; the general path retries it) —
 * `onStepAside` hears of the last two, for the caller's retry metrics. A database fault after
 * the commit was sent (commit_unknown: it may have committed), or one the general path could not
 * wait out either (a timeout, a full disk), is the answer: stepping aside then would report a
 * write that may be in place as not done (the general path would meet the outage and answer a
 * plain 503, or find the row and answer 409).
 */
export async function tryFastPath<T>(
  database: Database,
  work: (tx: Tx) => Promise<T>,
  options: { oneStatement?: boolean; onStepAside?: () => void } = {},
): Promise<{ value: T } | undefined> {
  try {
    return { value: await transaction(database, work, { oneStatement: options.oneStatement, maxAttempts: 1 }) };
  } catch (err) {
    const fault = classifyFault(err);
    if (fault && !isRetryableFault(fault)) throw fault;
    if (fault || isLostRace(err)) options.onStepAside?.();
    return undefined;
  }
}

/**
 * A transaction some of whose steps are single statements that may refuse (allot_assert, a unique
 * index: store/one-statement-*.ts) where the general path would decide again and word the answer.
 * On PostgreSQL a refused statement aborts the transaction, and a savepoint around each such step
 * would cost two more round trips while the transaction may hold rows others wait for. So a
 * refused step throws StepAside (`fastStep`), and the whole transaction runs again with `fast`
 * false: its steps then take the general path (counted as a retry, reason `step_aside`). `run`
 * must begin its own transaction.
 */
export async function withFastSteps<T>(database: Database, run: (fast: boolean) => Promise<T>): Promise<T> {
  try {
    return await run(true);
  } catch (err) {
    if (!(err instanceof StepAside)) throw err;
    database.observer.retried('step_aside');
    return run(false);
  }
}

/** A step of withFastSteps's transaction that a single statement took and refused. */
export class StepAside extends Error {
  constructor() {
    super('a one-statement step was refused: the transaction runs again the general way');
  }
}

/** Run a one-statement step of a withFastSteps transaction: its refusal becomes StepAside. */
export async function fastStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isAssertRefusal(err) || isUniqueViolation(err)) throw new StepAside();
    throw err;
  }
}

/** PostgreSQL: one transaction per call on a pooled connection; PostgreSQL shares WAL flushes. */
export const directWriter: Writer = { run: runOnConnection };

async function runOnConnection<T>(database: Database, work: (tx: Tx) => Promise<T>, options: TransactionOptions): Promise<T> {
  const maxAttempts = options.maxAttempts ?? database.maxAttempts;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    // set once the statement that commits is on its way: from then on a lost connection is ambiguous
    let committing = false;
    try {
      // Never call transaction() inside one: it would wait for itself (SQLite) or escape it
      // (PostgreSQL). Functions that write inside a caller's transaction take the Tx instead.
      const { result, runAfter } = await kyselyOf(database)
        .connection()
        .execute(async (conn) => {
          const attempt = newTx(database, conn);
          if (options.oneStatement) {
            committing = true;
            return { result: await work(attempt.tx), runAfter: attempt.runAfter };
          }
          await conn.executeQuery(BEGIN);
          try {
            const value = await work(attempt.tx);
            committing = true;
            await conn.executeQuery(COMMIT);
            return { result: value, runAfter: attempt.runAfter };
          } catch (err) {
            if (!committing) await conn.executeQuery(ROLLBACK).catch(() => {});
            throw err;
          }
        });
      runAfter();
      return result;
    } catch (err) {
      const fault = classifyFault(err);
      if (fault) {
        // A statement refused by a read-only server did nothing, even the one that commits (a
        // oneStatement write): that is not ambiguous, and runs again like any other.
        if (committing && fault.kind !== 'storage_full' && fault.kind !== 'read_only') throw commitUnknown(fault);
        // retried for the connect timeout, and never past the request's deadline (db/deadline.ts)
        const left = Math.min(database.connectTimeoutMs - (Date.now() - started), msLeft());
        if (!isRetryableFault(fault) || attempt >= maxAttempts || left <= 0) throw fault;
        database.observer.retried('fault');
        options.onRetry?.();
        await sleep(Math.min(backoffDelay(attempt, FAULT_BACKOFF), left));
        continue;
      }
      if (!isRetryable(err)) throw err;
      if (attempt >= maxAttempts) throw exhausted(err);
      database.observer.retried('conflict');
      options.onRetry?.();
      // Back off a little, with jitter, so the racers do not collide again in lock step.
      await sleep(backoffDelay(attempt, RACE_BACKOFF));
    }
  }
}

/** Retries after a lost race: short, the other writer is done within milliseconds. */
const RACE_BACKOFF = { baseMs: 2, maxMs: 50 };
/** Retries after a database fault: a failover or restart takes seconds. */
const FAULT_BACKOFF = { baseMs: 50, maxMs: 1_000 };

function commitUnknown(fault: DatabaseFault): DatabaseFault {
  return new DatabaseFault(
    'commit_unknown',
    'The connection to the database was lost while the change was being committed; it may or may not have been applied. Read it back before retrying.',
    fault.cause ?? fault,
  );
}

interface Job {
  work: (tx: Tx) => Promise<unknown>;
  maxAttempts: number;
  onRetry: (() => void) | undefined;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** SQLite: writes that arrive together share one BEGIN IMMEDIATE … COMMIT and its fsync. */
export function groupCommitter(database: () => Database): Writer {
  let committer: GroupCommitter | null = null;
  return {
    run: (db, work, options) => (committer ??= new GroupCommitter(database())).submit(work, options.maxAttempts ?? db.maxAttempts, options.onRetry),
  };
}

class GroupCommitter {
  private queue: Job[] = [];
  private draining = false;

  constructor(private readonly database: Database) {}

  submit<T>(work: (tx: Tx) => Promise<T>, maxAttempts: number, onRetry?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, maxAttempts, onRetry, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * Start the next batch in the event loop's check phase, after every request that arrived in
   * this loop iteration has been read and queued its write: that is what makes batches grow
   * with the number of concurrent clients.
   */
  private schedule(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.runBatch(batch)
        .catch((err) => {
          for (const job of batch) job.reject(err);
        })
        .finally(() => {
          this.draining = false;
          if (this.queue.length) this.schedule();
        });
    });
  }

  /** Runs and commits one batch; its callers hear the outcome once the commit is on disk. */
  private async runBatch(batch: Job[]): Promise<void> {
    const outcomes = await kyselyOf(this.database)
      .connection()
      .execute(async (conn) => {
        await beginImmediate(conn);
        const results: Outcome[] = [];
        try {
          for (const job of batch) results.push(await runInSavepoint(this.database, conn, job));
          await conn.executeQuery(COMMIT);
        } catch (err) {
          await conn.executeQuery(ROLLBACK).catch(() => {});
          throw err;
        }
        return results;
      });
    // Off the event loop: requests keep being read meanwhile and make up the next batch.
    try {
      await this.database.flushCommits?.();
    } catch (err) {
      // Committed, but not known to be on disk: the callers must not take it as durable.
      throw new DatabaseFault('commit_unknown', 'The change was written but could not be confirmed on disk; read it back before retrying.', err);
    }
    this.database.observer.batchCommitted(batch.length);
    for (const [i, o] of outcomes.entries()) {
      if (o.ok) {
        o.runAfter();
        batch[i]!.resolve(o.value);
      } else {
        batch[i]!.reject(o.error);
      }
    }
  }
}

/** BEGIN IMMEDIATE: waits for another process's write lock up to SQLite's busy timeout. */
async function beginImmediate(conn: Kysely<Schema>): Promise<void> {
  await conn.executeQuery(BEGIN_IMMEDIATE);
}

type Outcome = { ok: true; value: unknown; runAfter: () => void } | { ok: false; error: unknown };

async function runInSavepoint(database: Database, conn: Kysely<Schema>, job: Job): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    const { tx, runAfter } = newTx(database, conn);
    await conn.executeQuery(SAVEPOINT);
    try {
      const value = await job.work(tx);
      await conn.executeQuery(RELEASE);
      return { ok: true, value, runAfter };
    } catch (error) {
      await conn.executeQuery(ROLLBACK_TO);
      await conn.executeQuery(RELEASE);
      if (!isRetryable(error)) return { ok: false, error };
      if (attempt >= job.maxAttempts) return { ok: false, error: exhausted(error) };
      database.observer.retried('conflict');
      job.onRetry?.();
    }
  }
}
