// On PostgreSQL a scheduler's writes — a claim for new consumers, a move between consumers at known
// generations, a delete — are one statement each (src/placement/store/one-statement-writes.ts).
// These tests call them directly on a running server's database and look at the outcome over HTTP:
// what they accept is written whole, what they refuse leaves nothing behind (the general write then
// decides and answers), a consumer that changes under the statement makes it step aside, and they
// do not attempt the writes they were not made for. The HTTP behaviour of the same writes, on both
// databases, is in allocations.test.ts, concurrency.test.ts and multi-process.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { Tx } from '../../src/db/database.js';
import { transaction } from '../../src/db/transaction.js';
import type { PlacementContext } from '../../src/placement/context.js';
import type { ConsumerAllocations } from '../../src/placement/store/allocations.js';
import { oneStatementDelete, oneStatementWrite } from '../../src/placement/store/one-statement-writes.js';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';

const write = (consumer: string, allocations: Record<string, Record<string, number>>, extra: Partial<ConsumerAllocations> = {}): ConsumerAllocations => ({
  consumerUuid: consumer,
  allocations: new Map(Object.entries(allocations).map(([rp, resources]) => [rp, new Map(Object.entries(resources))])),
  projectId: 'proj',
  userId: 'user',
  generation: null,
  consumerType: 'INSTANCE',
  ...extra,
});

/** Run a one-statement write as the allocation service does: true when it committed. */
async function inOneStatement(ctx: PlacementContext, statement: ((tx: Tx) => Promise<void>) | null): Promise<boolean> {
  if (!statement) return false;
  try {
    await transaction(ctx.database, statement, { oneStatement: true, maxAttempts: 1 });
    return true;
  } catch {
    return false;
  }
}
const writeInOne = async (ctx: PlacementContext, writes: ConsumerAllocations[]) =>
  inOneStatement(ctx, await oneStatementWrite(ctx.database, ctx.names, writes));
const deleteInOne = (ctx: PlacementContext, consumer: string) => inOneStatement(ctx, oneStatementDelete(ctx.database, consumer));

describe('one-statement writes (postgres)', () => {
  let api: PlacementClient;
  let database: PlacementContext;
  let server: TestServer;
  /** a connection of its own, to hold a lock while a statement runs */
  let other: pg.Client;
  before(async () => {
    const url = await freshDatabaseUrl('postgres');
    server = await startServer({ db: url });
    api = new PlacementClient(server.placementUrl);
    database = server.running.context.placement;
    other = new pg.Client({ connectionString: url });
    await other.connect();
  });
  after(async () => {
    await other?.end();
    await server?.close();
  });

  // Consumer types are created by the general path (the statement only uses known ones).
  before(async () => {
    const rp = await provider({ VCPU: { total: 2 } });
    for (const consumerType of ['INSTANCE', 'MIGRATION']) {
      const res = await api.put(`/allocations/${randomUUID()}`, {
        allocations: { [rp]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: consumerType,
      });
      assert.equal(res.status, 204, res.text);
    }
  });

  async function provider(inventories: Record<string, Record<string, number>>): Promise<string> {
    const uuid = (await api.post('/resource_providers', { name: `rp-${randomUUID()}` })).body.uuid as string;
    assert.equal((await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories })).status, 200);
    return uuid;
  }
  const state = async (rp: string) => ({
    generation: (await api.get(`/resource_providers/${rp}`)).body.generation,
    usages: (await api.get(`/resource_providers/${rp}/usages`)).body.usages,
  });

  test('a claim for a new consumer is written whole: consumer, allocations, usage, provider generation', async () => {
    const rp = await provider({ VCPU: { total: 4 }, MEMORY_MB: { total: 1024 } });
    const before = await state(rp);
    const consumer = randomUUID();
    assert.equal(await writeInOne(database, [write(consumer, { [rp]: { VCPU: 3, MEMORY_MB: 512 } })]), true);

    const held = await api.get(`/allocations/${consumer}`);
    assert.deepEqual(held.body, {
      allocations: { [rp]: { generation: before.generation + 1, resources: { VCPU: 3, MEMORY_MB: 512 } } },
      project_id: 'proj',
      user_id: 'user',
      consumer_generation: 1,
      consumer_type: 'INSTANCE',
    });
    assert.deepEqual(await state(rp), { generation: before.generation + 1, usages: { VCPU: 3, MEMORY_MB: 512 } });
    // This process's candidates index took the new usage at once: one VCPU is left.
    assert.equal((await api.get('/allocation_candidates?resources=VCPU:2')).body.allocation_requests.length, 0);
    assert.equal((await api.get('/allocation_candidates?resources=VCPU:1')).body.allocation_requests.length, 1);
  });

  test('several new consumers on several providers in one statement (POST /allocations)', async () => {
    const a = await provider({ VCPU: { total: 8 } });
    const b = await provider({ VCPU: { total: 8 }, DISK_GB: { total: 100 } });
    const [c1, c2] = [randomUUID(), randomUUID()];
    assert.equal(await writeInOne(database, [write(c1, { [a]: { VCPU: 2 }, [b]: { DISK_GB: 10 } }), write(c2, { [b]: { VCPU: 5 } })]), true);
    assert.deepEqual((await state(a)).usages, { VCPU: 2 });
    assert.deepEqual((await state(b)).usages, { VCPU: 5, DISK_GB: 10 });
    assert.deepEqual(Object.keys((await api.get(`/allocations/${c1}`)).body.allocations).sort(), [a, b].sort());
    assert.equal((await api.get(`/allocations/${c2}`)).body.consumer_generation, 1);
  });

  test('every refusal leaves nothing behind', async () => {
    const rp = await provider({ VCPU: { total: 4, reserved: 1, allocation_ratio: 2, max_unit: 4 }, DISK_GB: { total: 100, min_unit: 5, step_size: 5 } });
    const taken = randomUUID();
    assert.equal(await writeInOne(database, [write(taken, { [rp]: { VCPU: 4 } })]), true);
    const before = await state(rp);
    const refused: Array<[string, ConsumerAllocations[]]> = [
      ['over capacity ((4 - 1) x 2 = 6, 4 held)', [write(randomUUID(), { [rp]: { VCPU: 3 } })]],
      ['above max_unit', [write(randomUUID(), { [rp]: { VCPU: 5 } })]],
      ['below min_unit', [write(randomUUID(), { [rp]: { DISK_GB: 1 } })]],
      ['off step_size', [write(randomUUID(), { [rp]: { DISK_GB: 7 } })]],
      ['a class the provider has no inventory of', [write(randomUUID(), { [rp]: { MEMORY_MB: 1 } })]],
      ['a provider that does not exist', [write(randomUUID(), { [rp]: { VCPU: 1 }, [randomUUID()]: { VCPU: 1 } })]],
      ['a consumer that exists', [write(taken, { [rp]: { VCPU: 1 } })]],
      ['one of two consumers does not fit', [write(randomUUID(), { [rp]: { VCPU: 1 } }), write(randomUUID(), { [rp]: { DISK_GB: 500 } })]],
    ];
    for (const [why, writes] of refused) {
      assert.equal(await writeInOne(database, writes), false, why);
      assert.deepEqual(await state(rp), before, `${why}: usage and generation unchanged`);
      for (const w of writes.filter((w) => w.consumerUuid !== taken)) {
        assert.deepEqual((await api.get(`/allocations/${w.consumerUuid}`)).body, { allocations: {} }, `${why}: no consumer written`);
      }
    }
    assert.equal((await api.get(`/allocations/${taken}`)).body.consumer_generation, 1, 'the existing consumer is untouched');
  });

  test('writes it is not made for are left to the general path untouched', async () => {
    const rp = await provider({ VCPU: { total: 8 } });
    const existing = randomUUID();
    assert.equal(await writeInOne(database, [write(existing, { [rp]: { VCPU: 1 } })]), true);
    const before = await state(rp);
    const other = randomUUID();
    const notForIt: Array<[string, ConsumerAllocations[]]> = [
      ['no generation at all (before 1.28)', [write(randomUUID(), { [rp]: { VCPU: 2 } }, { generation: undefined })]],
      ['no generation, removing allocations', [write(existing, {}, { generation: undefined })]],
      ['a new consumer without allocations', [write(randomUUID(), {})]],
      ['the same provider and class for two consumers', [write(randomUUID(), { [rp]: { VCPU: 1 } }), write(randomUUID(), { [rp]: { VCPU: 1 } })]],
      ['the same consumer twice', [write(other, { [rp]: { VCPU: 1 } }), write(other, { [rp]: { VCPU: 1 } })]],
      ['an unknown resource class', [write(randomUUID(), { [rp]: { CUSTOM_NOT_THERE: 1 } })]],
      ['a consumer type never seen', [write(randomUUID(), { [rp]: { VCPU: 1 } }, { consumerType: 'NEVER_SEEN_TYPE' })]],
      ['more than four consumers', Array.from({ length: 5 }, (_, i) => write(randomUUID(), { [rp]: { [i ? 'VCPU' : 'DISK_GB']: 1 } }))],
    ];
    for (const [why, writes] of notForIt) {
      assert.equal(await oneStatementWrite(database.database, database.names, writes), null, why);
      assert.equal(await writeInOne(database, writes), false, why);
      assert.deepEqual(await state(rp), before, `${why}: nothing written`);
    }
    assert.equal((await api.get(`/allocations/${existing}`)).body.consumer_generation, 1);
  });

  test("the migration swap: the instance's allocations go to a new consumer, the instance is removed", async () => {
    const rp = await provider({ VCPU: { total: 8 }, MEMORY_MB: { total: 4096 } });
    const instance = randomUUID();
    assert.equal(await writeInOne(database, [write(instance, { [rp]: { VCPU: 2, MEMORY_MB: 1024 } })]), true);
    const before = await state(rp);
    const migration = randomUUID();
    const swap = [write(migration, { [rp]: { VCPU: 2, MEMORY_MB: 1024 } }, { consumerType: 'MIGRATION' }), write(instance, {}, { generation: 1 })];
    assert.equal(await writeInOne(database, swap), true);
    assert.deepEqual((await api.get(`/allocations/${instance}`)).body, { allocations: {} }, 'the instance consumer is gone');
    assert.deepEqual((await api.get(`/allocations/${migration}`)).body, {
      allocations: { [rp]: { generation: before.generation + 1, resources: { VCPU: 2, MEMORY_MB: 1024 } } },
      project_id: 'proj',
      user_id: 'user',
      consumer_generation: 1,
      consumer_type: 'MIGRATION',
    });
    assert.deepEqual(await state(rp), { generation: before.generation + 1, usages: { VCPU: 2, MEMORY_MB: 1024 } }, 'usage unchanged, generation bumped once');
    // The candidates index knows: 2 VCPU used, not 0 or 4.
    const summaries = (await api.get('/allocation_candidates?resources=VCPU:1')).body.provider_summaries;
    assert.deepEqual(summaries[rp].resources.VCPU, { capacity: 8, used: 2 });
  });

  test('an existing consumer moves its allocations: given back on one provider, taken on another', async () => {
    const [from, to] = [await provider({ VCPU: { total: 4 } }), await provider({ VCPU: { total: 4 }, DISK_GB: { total: 100 } })];
    const consumer = randomUUID();
    assert.equal(await writeInOne(database, [write(consumer, { [from]: { VCPU: 3 } })]), true);
    const [beforeFrom, beforeTo] = [await state(from), await state(to)];
    const move = write(consumer, { [to]: { VCPU: 4, DISK_GB: 20 } }, { generation: 1, projectId: 'proj2', userId: 'user2' });
    assert.equal(await writeInOne(database, [move]), true);
    const held = (await api.get(`/allocations/${consumer}`)).body;
    assert.deepEqual(held.allocations, { [to]: { generation: beforeTo.generation + 1, resources: { VCPU: 4, DISK_GB: 20 } } });
    assert.deepEqual([held.consumer_generation, held.project_id, held.user_id, held.consumer_type], [2, 'proj2', 'user2', 'INSTANCE']);
    assert.deepEqual(await state(from), { generation: beforeFrom.generation, usages: { VCPU: 0 } }, 'a provider that only gives back is not bumped');
    assert.deepEqual(await state(to), { generation: beforeTo.generation + 1, usages: { VCPU: 4, DISK_GB: 20 } });
    // Both providers are right in the candidates index: `from` re-read, `to` taken as written.
    const found = (await api.get('/allocation_candidates?resources=VCPU:4')).body.provider_summaries;
    assert.ok(from in found && !(to in found));
  });

  test('a move that keeps a provider: the net change is checked against the capacity', async () => {
    const rp = await provider({ VCPU: { total: 4 } });
    const [a, b] = [randomUUID(), randomUUID()];
    assert.equal(await writeInOne(database, [write(a, { [rp]: { VCPU: 3 } })]), true);
    // 3 given back and 4 taken: fits a capacity of 4 only because the old amount is released.
    assert.equal(await writeInOne(database, [write(a, {}, { generation: 1 }), write(b, { [rp]: { VCPU: 4 } })]), true);
    assert.deepEqual((await state(rp)).usages, { VCPU: 4 });
    assert.equal(await writeInOne(database, [write(b, { [rp]: { VCPU: 1 } }, { generation: 1 })]), true);
    assert.deepEqual((await state(rp)).usages, { VCPU: 1 });
  });

  test('a refused move leaves everything as it was', async () => {
    const [rp, full] = [await provider({ VCPU: { total: 4 } }), await provider({ VCPU: { total: 2 } })];
    const [consumer, filler] = [randomUUID(), randomUUID()];
    assert.equal(await writeInOne(database, [write(consumer, { [rp]: { VCPU: 2 } }), write(filler, { [full]: { VCPU: 2 } })]), true);
    const before = [await state(rp), await state(full)];
    const refused: Array<[string, ConsumerAllocations[]]> = [
      ['a stale consumer generation', [write(consumer, { [rp]: { VCPU: 1 } }, { generation: 7 })]],
      ['a stale generation of the consumer being emptied', [write(randomUUID(), { [rp]: { VCPU: 1 } }), write(consumer, {}, { generation: 2 })]],
      ['a consumer that does not exist', [write(randomUUID(), { [rp]: { VCPU: 1 } }, { generation: 1 })]],
      ['a consumer that does not exist, emptied', [write(randomUUID(), {}, { generation: 1 })]],
      ['no room on the target', [write(consumer, { [full]: { VCPU: 1 } }, { generation: 1 })]],
      ['no room for the new consumer', [write(randomUUID(), { [full]: { VCPU: 1 } }), write(consumer, {}, { generation: 1 })]],
      ['a provider that does not exist', [write(consumer, { [randomUUID()]: { VCPU: 1 } }, { generation: 1 })]],
      ['the new consumer exists', [write(filler, { [rp]: { VCPU: 1 } }), write(consumer, {}, { generation: 1 })]],
    ];
    for (const [why, writes] of refused) {
      assert.equal(await writeInOne(database, writes), false, why);
      assert.deepEqual([await state(rp), await state(full)], before, `${why}: usage and generations unchanged`);
      assert.deepEqual(
        (await api.get(`/allocations/${consumer}`)).body.allocations,
        { [rp]: { generation: before[0]!.generation, resources: { VCPU: 2 } } },
        why,
      );
      assert.equal((await api.get(`/allocations/${consumer}`)).body.consumer_generation, 1, why);
    }
  });

  test('a delete removes the consumer and its allocations and gives the usage back, bumping no provider', async () => {
    const [a, b] = [await provider({ VCPU: { total: 4 } }), await provider({ VCPU: { total: 4 }, DISK_GB: { total: 100 } })];
    const [consumer, stays] = [randomUUID(), randomUUID()];
    assert.equal(await writeInOne(database, [write(consumer, { [a]: { VCPU: 3 }, [b]: { VCPU: 1, DISK_GB: 50 } })]), true);
    assert.equal(await writeInOne(database, [write(stays, { [b]: { DISK_GB: 10 } })]), true);
    const before = [await state(a), await state(b)];
    assert.equal(await deleteInOne(database, consumer), true);
    assert.deepEqual((await api.get(`/allocations/${consumer}`)).body, { allocations: {} });
    assert.deepEqual(await state(a), { generation: before[0]!.generation, usages: { VCPU: 0 } });
    assert.deepEqual(await state(b), { generation: before[1]!.generation, usages: { VCPU: 0, DISK_GB: 10 } });
    assert.equal((await api.get(`/allocations/${stays}`)).body.consumer_generation, 1, 'other consumers are untouched');
    // The index re-read both providers: 4 VCPU free on each again.
    assert.equal((await api.get('/allocation_candidates?resources=VCPU:4')).body.allocation_requests.length >= 2, true);
    assert.equal(await deleteInOne(database, consumer), false, 'a consumer that is gone: the general path answers 404');
    assert.equal(await deleteInOne(database, randomUUID()), false);
  });

  test('a consumer that changes while the statement waits for its lock makes the statement step aside', async () => {
    const rp = await provider({ VCPU: { total: 8 } });
    for (const kind of ['swap', 'delete'] as const) {
      const consumer = randomUUID();
      assert.equal(await writeInOne(database, [write(consumer, { [rp]: { VCPU: 1 } })]), true);
      const before = await state(rp);
      // Another writer holds the consumer and gives it one more VCPU, as the general path would.
      await other.query('begin');
      const { rows } = await other.query<{ id: number }>('update consumers set generation = generation + 1 where uuid = $1 returning id', [consumer]);
      await other.query('update allocations set used = used + 1 where consumer_id = $1', [rows[0]!.id]);
      await other.query(
        "update inventories set used = used + 1 where resource_provider_id = (select id from resource_providers where uuid = $1) and resource_class_id = (select id from resource_classes where name = 'VCPU')",
        [rp],
      );
      const statement =
        kind === 'swap'
          ? writeInOne(database, [write(randomUUID(), { [rp]: { VCPU: 1 } }), write(consumer, {}, { generation: 1 })])
          : deleteInOne(database, consumer);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the statement is waiting for the consumer's lock
      await other.query('commit');
      assert.equal(await statement, false, `${kind}: the statement sees the consumer moved on and steps aside`);
      assert.deepEqual((await state(rp)).usages, { VCPU: before.usages.VCPU + 1 }, `${kind}: nothing half-done`);
      assert.deepEqual((await api.get(`/allocations/${consumer}`)).body.consumer_generation, 2);
      assert.equal((await api.get(`/allocations/${consumer}`)).body.allocations[rp].resources.VCPU, 2);
    }
  });
});
