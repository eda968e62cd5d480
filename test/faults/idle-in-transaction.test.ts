// A process that stops in the middle of a transaction (a pause, a slow link) for longer than
// --db-idle-in-transaction-timeout finds its session ended by PostgreSQL when it goes on (SQLSTATE
// 25P03, FATAL): the transaction was rolled back, like a lost connection. Found by the chaos run
// (npm run test:chaos: a paused allot answered a Placement write 500); it is a database fault —
// retried on a new connection while time allows, else a 503 — and the rolled-back attempt leaves
// nothing behind. (PostgreSQL only: SQLite has no sessions to end.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { DatabaseFault } from '../../src/db/faults.js';
import { openDatabase } from '../../src/db/open.js';
import { transaction } from '../../src/db/transaction.js';
import { freshDatabaseUrl } from '../helpers/databases.js';

const IDLE_TIMEOUT_MS = 1_000;
/**
 * Stop the whole process for `ms`, as SIGSTOP does: the event loop reads nothing meanwhile, so the
 * server's FATAL waits in the socket and comes back as the answer to the next statement. (Waiting
 * with a timer instead lets the driver see the connection end first, which it already reports
 * as a lost connection.)
 */
const freeze = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

describe('a transaction left idle past the idle-in-transaction timeout', () => {
  let database: Database;
  before(async () => {
    database = await openDatabase(await freshDatabaseUrl('postgres'), { idleInTransactionTimeoutMs: IDLE_TIMEOUT_MS, connectTimeoutMs: 3_000 });
    await transaction(database, (tx) => sql`create table idle_probe (attempt integer not null)`.execute(tx.db));
  });
  after(() => database?.close());

  const rows = async () => (await sql<{ n: number }>`select count(*)::int as n from idle_probe`.execute(database.db as never)).rows[0]!.n;

  test('is run again on a new connection, and the ended attempt left nothing', async () => {
    let attempts = 0;
    const result = await transaction(database, async (tx) => {
      attempts++;
      await sql`insert into idle_probe (attempt) values (${attempts})`.execute(tx.db);
      // the first attempt stops between two statements, longer than the server allows
      if (attempts === 1) freeze(IDLE_TIMEOUT_MS + 800);
      await sql`select 1`.execute(tx.db);
      return attempts;
    });
    assert.equal(result, 2);
    assert.equal(await rows(), 1, 'only the second attempt’s row is there');
  });

  test('that ends every attempt is a database fault (503), not an unexpected error (500)', async () => {
    await assert.rejects(
      transaction(database, async (tx) => {
        await sql`select 1`.execute(tx.db);
        freeze(IDLE_TIMEOUT_MS + 800);
        await sql`select 1`.execute(tx.db);
      }),
      (err) => err instanceof DatabaseFault && err.kind === 'unavailable',
    );
  });
});
