// The one transaction helper. Every write in allot goes through `transaction()`:
//  - SQLite: `BEGIN IMMEDIATE`, so the write lock is taken up front and two writers never
//    deadlock upgrading read locks; other processes wait up to busy_timeout.
//  - PostgreSQL: READ COMMITTED plus explicit row locks / compare-and-set updates in the code
//    that writes.
// A transaction that loses a race it could not have known about (a RetryableConflict from a
// compare-and-set, a PostgreSQL deadlock or serialization failure) is rolled back and run again,
// up to `maxAttempts` times in all.
import { sql } from 'kysely';
import { AllotError, RetryableConflict } from '../core/errors.js';
import type { Database, Db } from './database.js';

declare const inTransaction: unique symbol;
/** A handle bound to one connection inside an open transaction; locking reads demand one. */
export interface Tx extends Db {
  readonly [inTransaction]: true;
}

export interface TransactionOptions {
  /** total attempts including the first (default: the process-wide setting) */
  maxAttempts?: number;
}

let defaultMaxAttempts = 10;
/** Set from configuration (`--max-retries`) at start-up. */
export function setDefaultMaxAttempts(n: number): void {
  defaultMaxAttempts = Math.max(1, Math.floor(n));
}

const PG_RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

function isRetryable(err: unknown): boolean {
  if (err instanceof RetryableConflict) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (PG_RETRYABLE.has(code) || code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT');
}

export async function transaction<T>(database: Database, work: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const maxAttempts = options.maxAttempts ?? defaultMaxAttempts;
  const begin = database.dialect === 'sqlite' ? sql`BEGIN IMMEDIATE` : sql`BEGIN`;
  for (let attempt = 1; ; attempt++) {
    try {
      return await database.db.connection().execute(async (conn) => {
        await begin.execute(conn);
        try {
          const result = await work({ db: conn, dialect: database.dialect } as Tx);
          await sql`COMMIT`.execute(conn);
          return result;
        } catch (err) {
          await sql`ROLLBACK`.execute(conn).catch(() => {});
          throw err;
        }
      });
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (attempt >= maxAttempts) {
        if (err instanceof RetryableConflict) throw err.exhausted();
        throw new AllotError(409, 'allot.concurrent_update', 'The database reported a conflict with a concurrent writer; retry the request.');
      }
      // Back off a little, with jitter, so the racers do not collide again in lock step.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
    }
  }
}
