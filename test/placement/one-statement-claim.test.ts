// On PostgreSQL a scheduler's claim for new consumers is one statement
// (src/placement/store/one-statement-claim.ts). These tests call it directly on a running server's
// database and look at the outcome over HTTP: what it accepts is written whole, what it refuses
// leaves nothing behind (the general write then decides and answers), and it does not attempt the
// writes it was not made for. The HTTP behaviour of the same claims, on both databases, is in
// allocations.test.ts and concurrency.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { transaction } from '../../src/db/transaction.js';
import type { PlacementContext } from '../../src/placement/context.js';
import type { ConsumerAllocations } from '../../src/placement/store/allocations.js';
import { oneStatementClaim } from '../../src/placement/store/one-statement-claim.js';
import { PlacementClient } from '../helpers/http.js';
import { serverFor } from '../helpers/server.js';

const write = (consumer: string, allocations: Record<string, Record<string, number>>, extra: Partial<ConsumerAllocations> = {}): ConsumerAllocations => ({
  consumerUuid: consumer,
  allocations: new Map(Object.entries(allocations).map(([rp, resources]) => [rp, new Map(Object.entries(resources))])),
  projectId: 'proj',
  userId: 'user',
  generation: null,
  consumerType: 'INSTANCE',
  ...extra,
});

/** Run `writes` as the one statement, as the allocation service does: true when it committed. */
async function claimNewConsumers(ctx: PlacementContext, writes: ConsumerAllocations[]): Promise<boolean> {
  const claim = await oneStatementClaim(ctx.database, ctx.names, writes);
  if (!claim) return false;
  try {
    await transaction(ctx.database, claim, { oneStatement: true, maxAttempts: 1 });
    return true;
  } catch {
    return false;
  }
}

describe('one-statement claim (postgres)', () => {
  let api: PlacementClient;
  let database: PlacementContext;
  serverFor('postgres', (server) => {
    api = new PlacementClient(server.placementUrl);
    database = server.running.context.placement;
  });

  // Consumer types are created by the general path (the statement only uses known ones).
  before(async () => {
    const rp = await provider({ VCPU: { total: 1 } });
    const res = await api.put(`/allocations/${randomUUID()}`, {
      allocations: { [rp]: { resources: { VCPU: 1 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
    assert.equal(res.status, 204, res.text);
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
    assert.equal(await claimNewConsumers(database, [write(consumer, { [rp]: { VCPU: 3, MEMORY_MB: 512 } })]), true);

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
    assert.equal(await claimNewConsumers(database, [write(c1, { [a]: { VCPU: 2 }, [b]: { DISK_GB: 10 } }), write(c2, { [b]: { VCPU: 5 } })]), true);
    assert.deepEqual((await state(a)).usages, { VCPU: 2 });
    assert.deepEqual((await state(b)).usages, { VCPU: 5, DISK_GB: 10 });
    assert.deepEqual(Object.keys((await api.get(`/allocations/${c1}`)).body.allocations).sort(), [a, b].sort());
    assert.equal((await api.get(`/allocations/${c2}`)).body.consumer_generation, 1);
  });

  test('every refusal leaves nothing behind', async () => {
    const rp = await provider({ VCPU: { total: 4, reserved: 1, allocation_ratio: 2, max_unit: 4 }, DISK_GB: { total: 100, min_unit: 5, step_size: 5 } });
    const taken = randomUUID();
    assert.equal(await claimNewConsumers(database, [write(taken, { [rp]: { VCPU: 4 } })]), true);
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
      assert.equal(await claimNewConsumers(database, writes), false, why);
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
    assert.equal(await claimNewConsumers(database, [write(existing, { [rp]: { VCPU: 1 } })]), true);
    const before = await state(rp);
    const other = randomUUID();
    const notForIt: Array<[string, ConsumerAllocations[]]> = [
      ['a consumer generation to check', [write(existing, { [rp]: { VCPU: 2 } }, { generation: 1 })]],
      ['no generation at all (before 1.28)', [write(randomUUID(), { [rp]: { VCPU: 2 } }, { generation: undefined })]],
      ['removing allocations', [write(existing, {}, { generation: 1 })]],
      ['the same provider and class for two consumers', [write(randomUUID(), { [rp]: { VCPU: 1 } }), write(randomUUID(), { [rp]: { VCPU: 1 } })]],
      ['the same consumer twice', [write(other, { [rp]: { VCPU: 1 } }), write(other, { [rp]: { VCPU: 1 } })]],
      ['an unknown resource class', [write(randomUUID(), { [rp]: { CUSTOM_NOT_THERE: 1 } })]],
      ['a consumer type never seen', [write(randomUUID(), { [rp]: { VCPU: 1 } }, { consumerType: 'NEVER_SEEN_TYPE' })]],
    ];
    for (const [why, writes] of notForIt) {
      assert.equal(await claimNewConsumers(database, writes), false, why);
      assert.deepEqual(await state(rp), before, `${why}: nothing written`);
    }
    assert.equal((await api.get(`/allocations/${existing}`)).body.consumer_generation, 1);
  });
});
