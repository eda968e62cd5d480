// PostgreSQL: wait until every commit this process made so far is durable. For a statement that
// commits without waiting for its WAL flush (it sets synchronous_commit off for its own
// transaction) so that the row locks it holds are released before the flush instead of after it:
// PostgreSQL releases a transaction's locks only once its commit record is flushed, and the hot
// pool's row lock was held through an fdatasync of ~4 ms per batch (issue 32, docs/performance.md).
// The caller answers only once this resolves — as SQLite's path waits for its WAL's fsync after
// COMMIT (db/open.ts walFlusher).
//
// The flush is one transactional WAL message committed synchronously: its commit record comes
// after every commit made before it, and committing it flushes the WAL up to it (and waits for
// synchronous standbys, as any commit does). Calls coalesce: a call made while a flush runs waits
// for the next one, which covers every commit made before it started.
import type { Database } from './database.js';
import { writeStatement } from './statement.js';
import { transaction } from './transaction.js';

const FLUSH = writeStatement(`select pg_logical_emit_message(true, 'allot', '') as lsn`);

const flushers = new WeakMap<Database, () => Promise<void>>();

/** Resolves once every commit this process made before the call is durable (PostgreSQL). */
export function commitsFlushed(database: Database): Promise<void> {
  let flush = flushers.get(database);
  if (!flush) flushers.set(database, (flush = coalescing(() => transaction(database, (tx) => FLUSH.run(tx, []), { oneStatement: true, maxAttempts: 1 }))));
  return flush();
}

function coalescing(once: () => Promise<unknown>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = () => {
    running = once()
      .then(() => {})
      .finally(() => (running = null));
    return running;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => {})
      .then(() => {
        next = null;
        return start();
      });
    return next;
  };
}
