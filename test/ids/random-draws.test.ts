// Random automatic allocations on PostgreSQL (store/one-statement-allocate.ts randomClaims): the
// draws of a batch are taken by one statement in which each probed free span is a compare-and-set
// of its own. A span another writer changed between the probe and the write keeps its values and
// only the draws in it are asked again; the others are taken. An allocation that conflicts (the
// owner got one meanwhile) refuses the whole statement. Either way nothing is half taken: the free
// spans and the allocations still tile the pool, and the pool's counters say what is held.
// (PostgreSQL only: SQLite takes the locked path.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { BatchesByKey } from '../../src/core/serial.js';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { transaction } from '../../src/db/transaction.js';
import type { IdsContext } from '../../src/ids/context.js';
import { EVERY_POOL } from '../../src/ids/core/scope.js';
import { fromKey } from '../../src/ids/core/values.js';
import { allocate, allocateInTx } from '../../src/ids/services/allocations.js';
import { allocateWithoutLock } from '../../src/ids/services/automatic-allocations.js';
import { createPool } from '../../src/ids/services/pools.js';
import { lostTheBlock, randomClaims } from '../../src/ids/store/one-statement-allocate.js';
import { readPool } from '../../src/ids/store/pools.js';
import { freshDatabaseUrl } from '../helpers/databases.js';

const SIZE = 1000;

describe('random draws of a batch, taken by one statement on PostgreSQL', () => {
  let database: Database;
  let ctx: IdsContext;
  let poolNo = 0;

  before(async () => {
    database = await openDatabase(await freshDatabaseUrl('postgres'), { poolSize: 4 });
    await database.measureClock?.();
    await migrate(database);
    ctx = { database, log: pino({ level: 'silent' }), poolClaims: new BatchesByKey() } as unknown as IdsContext;
  });
  after(() => database?.close());

  /** A random pool of 1..SIZE whose free space is ten spans: 100, 200, … 900 are held by `wall`. */
  async function tenSpans(): Promise<string> {
    const name = `p${++poolNo}`;
    await createPool(ctx, { name, kind: 'integer', ranges: [`1-${SIZE}`], strategy: 'random' });
    await transaction(database, (tx) =>
      allocateInTx(
        tx,
        Array.from({ length: 9 }, (_, i) => ({ pool: name, owner: 'wall', purpose: String(i), value: (i + 1) * 100 })),
      ),
    );
    return name;
  }

  /** An explicit value for `owner`, written by the locked path as another process would. */
  const take = (pool: string, owner: string, value: number) => transaction(database, (tx) => allocateInTx(tx, [{ pool, owner, value }]));

  /** The free spans and the allocations tile 1..SIZE exactly, and the pool's counters say so. */
  async function assertTiled(pool: string): Promise<Map<string, number>> {
    const row = await database.db.selectFrom('ids_pools').selectAll().where('name', '=', pool).executeTakeFirstOrThrow();
    const free = await database.db.selectFrom('ids_free_ranges').select(['first_key', 'last_key']).where('pool_id', '=', row.id).execute();
    const held = await database.db.selectFrom('ids_allocations').select(['owner', 'purpose', 'first_key', 'last_key']).where('pool_id', '=', row.id).execute();
    const pieces = [...free, ...held].map((r) => [fromKey(r.first_key), fromKey(r.last_key)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let next = 1n;
    for (const [first, last] of pieces) {
      assert.equal(first, next, `the pool's values are free or held once each: a piece starts at ${first}, ${next} expected`);
      next = last + 1n;
    }
    assert.equal(next, BigInt(SIZE) + 1n, 'free spans and allocations cover the pool');
    assert.equal(BigInt(row.used_count), BigInt(held.length), "the pool's used count is what is held");
    assert.equal(row.allocation_count, held.length, "the pool's allocation count is what is held");
    return new Map(held.filter((h) => h.owner !== 'wall').map((h) => [h.owner, Number(fromKey(h.first_key))]));
  }

  test('a span another writer changed after the probe loses only its own draws; the rest are taken', async () => {
    const name = await tenSpans();
    const pool = (await readPool(database, name))!;
    const owners = Array.from({ length: 30 }, (_, i) => `r${i}`);
    const { decisions, claim } = await randomClaims(
      database,
      pool,
      owners.map((owner) => ({ pool: name, owner })),
      1n,
    );
    assert.ok(claim);
    assert.ok(
      decisions.every((d) => d.kind === 'new'),
      'every request drew a block',
    );
    const values = claim.rows.map((r) => Number(fromKey(r.first_key)));
    assert.equal(new Set(values).size, values.length, 'no two draws of a batch are the same value');
    // another writer takes a value of the first draw's span (ten spans: hundreds 0..9) that no draw chose
    const spanOf = (v: number) => Math.floor((v - 1) / 100);
    const overtaken = spanOf(values[0]!);
    const spare = Array.from({ length: 99 }, (_, i) => overtaken * 100 + 1 + i).find((v) => v <= SIZE && !values.includes(v))!;
    await take(name, 'other-writer', spare);

    const kept = await transaction(database, claim.write, { oneStatement: true, maxAttempts: 1 });
    const expected = claim.rows.filter((_, i) => spanOf(values[i]!) !== overtaken).map((r) => r.id);
    assert.ok(expected.length > 0 && expected.length < claim.rows.length, 'the draws fell in the overtaken span and in others');
    assert.deepEqual([...kept].sort(), expected.sort(), 'exactly the draws outside the overtaken span were taken');

    const held = await assertTiled(name);
    for (const [i, owner] of owners.entries()) {
      const took = kept.has(claim.rows[i]!.id);
      assert.equal(held.get(owner), took ? values[i] : undefined, `${owner}: held exactly when its draw was taken`);
    }
    assert.equal(held.get('other-writer'), spare);

    // the ones not taken ask again (as a process's next batch does) and get values of their own
    const again = owners.filter((owner) => !held.has(owner));
    const answers = await Promise.all(again.map((owner) => allocateWithoutLock(ctx, { pool: name, owner }, EVERY_POOL)));
    for (const a of answers) assert.ok(a?.created, 'asked again, it got a value');
    const after = await assertTiled(name);
    for (const owner of owners) assert.ok(after.has(owner), `${owner} holds a value`);
  });

  test('an owner of the batch given a value meanwhile refuses the whole statement, and nothing is half taken', async () => {
    const name = await tenSpans();
    const pool = (await readPool(database, name))!;
    const owners = Array.from({ length: 12 }, (_, i) => `q${i}`);
    const { claim } = await randomClaims(
      database,
      pool,
      owners.map((owner) => ({ pool: name, owner })),
      1n,
    );
    assert.ok(claim);
    const drawn = claim.rows.map((r) => Number(fromKey(r.first_key)));
    // q5 gets a value of its own meanwhile (a request in another process), outside the span of
    // its draw, so that its draw's span is still as probed and its allocation conflicts
    const spanOf = (v: number) => Math.floor((v - 1) / 100);
    const spare = Array.from({ length: SIZE }, (_, i) => i + 1).find((v) => v % 100 !== 0 && !drawn.includes(v) && spanOf(v) !== spanOf(drawn[5]!))!;
    await take(name, 'q5', spare);

    await assert.rejects(transaction(database, claim.write, { oneStatement: true, maxAttempts: 1 }), (err) => lostTheBlock(err));
    const held = await assertTiled(name);
    assert.deepEqual([...held.keys()], ['q5'], 'only what the other writer took is held');
  });

  test('free values none of which can hold an aligned block of the size asked: the pool is exhausted for it, at once', async () => {
    const name = `p${++poolNo}`;
    await createPool(ctx, { name, kind: 'integer', ranges: ['1-8'], strategy: 'random' });
    // 3 and 6 stay free: blocks of two are aligned ({2,3}, {4,5}, {6,7}), so none of them is free
    await transaction(database, (tx) =>
      allocateInTx(
        tx,
        [1, 2, 4, 5, 7, 8].map((value) => ({ pool: name, owner: `v${value}`, value })),
      ),
    );
    assert.equal(await allocateWithoutLock(ctx, { pool: name, owner: 'pair', count: 2 }, EVERY_POOL), null, 'the locked path decides');
    await assert.rejects(allocate(ctx, [{ pool: name, owner: 'pair', count: 2 }]), (err: Error & { code?: string }) => {
      assert.match(JSON.stringify(err), /pool_exhausted/);
      return true;
    });
    assert.ok((await allocate(ctx, [{ pool: name, owner: 'one' }]))[0]?.created, 'a single value still fits');
  });
});
