// Hand-written hot-path reads and writes run as named prepared statements on PostgreSQL (one
// parse and plan per connection). A newer process's migration in a rolling upgrade can change a
// table's shape under them: PostgreSQL then refuses a statement whose result columns would change
// ("cached plan must not change result type", SQLSTATE 0A000). That is a stale connection, not
// the request's fault and not a bug: the transaction runs again on a new connection, which
// prepares the statement afresh. (PostgreSQL only: SQLite prepares in the process.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { classifyFault } from '../../src/db/faults.js';
import { openDatabase } from '../../src/db/open.js';
import { rawRead } from '../../src/db/statement.js';
import { transaction } from '../../src/db/transaction.js';
import { freshDatabaseUrl } from '../helpers/databases.js';

describe('a prepared statement whose table changed shape', () => {
  let database: Database;
  let other: Database;
  before(async () => {
    const url = await freshDatabaseUrl('postgres');
    // one connection: the statement is prepared on the connection the next read gets
    database = await openDatabase(url, { poolSize: 1 });
    other = await openDatabase(url, { poolSize: 1 });
    await transaction(database, (tx) => sql`create table shaped (a integer not null)`.execute(tx.db));
    await transaction(database, (tx) => sql`insert into shaped (a) values (1)`.execute(tx.db));
  });
  after(async () => {
    await database?.close();
    await other?.close();
  });

  const read = (db: Parameters<typeof rawRead>[0]) => rawRead(db, sql<Record<string, unknown>>`select w.* from (select * from shaped) as w where w.a = ${1}`);

  test('is refused by PostgreSQL, and that refusal is a retryable database fault', async () => {
    assert.deepEqual(await read(database), [{ a: 1 }]);
    await transaction(other, (tx) => sql`alter table shaped add column b integer`.execute(tx.db));
    const refused = await read(database).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(refused, 'the statement prepared before the change was refused');
    assert.equal((refused as { code?: string }).code, '0A000', String(refused));
    assert.equal(classifyFault(refused)?.kind, 'unavailable');
    // the connection that held the stale statement was given up: the next read prepares afresh
    assert.deepEqual(await read(database), [{ a: 1, b: null }]);
  });

  test('inside a transaction, the transaction runs again on a new connection', async () => {
    await transaction(database, (tx) => read(tx)); // prepared with columns a, b
    await transaction(other, (tx) => sql`alter table shaped add column c integer`.execute(tx.db));
    let attempts = 0;
    const rows = await transaction(database, async (tx) => {
      attempts++;
      return read(tx);
    });
    assert.deepEqual(rows, [{ a: 1, b: null, c: null }]);
    assert.equal(attempts, 2);
  });
});
