// Concurrency scenarios shared by the single-process and multi-process tests. Each takes one
// Placement client per server (requests are spread over them round-robin), fires many requests
// at once, and checks afterwards, from what the servers acknowledged, that nothing was
// over-allocated or lost.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { PlacementClient } from '../helpers/http.js';

const owner = { project_id: 'race-project', user_id: 'race-user', consumer_type: 'INSTANCE' };

function spread(clients: PlacementClient[]) {
  let i = 0;
  return () => clients[i++ % clients.length]!;
}

async function makeProvider(api: PlacementClient, name: string, inventories: Record<string, Record<string, number>>) {
  const res = await api.post('/resource_providers', { name });
  assert.equal(res.status, 200, res.text);
  const uuid = res.body.uuid as string;
  const inv = await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
  assert.equal(inv.status, 200, inv.text);
  return uuid;
}

/** Every provider's usage equals the acknowledged claims on it and fits its capacity. */
async function checkProviders(api: PlacementClient, expected: Map<string, number>, capacity: Map<string, number>, rc: string) {
  for (const [rp, cap] of capacity) {
    const usage = (await api.get(`/resource_providers/${rp}/usages`)).body.usages[rc] ?? 0;
    assert.equal(usage, expected.get(rp) ?? 0, `usage of ${rp} must equal the acknowledged claims`);
    const held = Object.values(
      (await api.get(`/resource_providers/${rp}/allocations`)).body.allocations as Record<string, { resources: Record<string, number> }>,
    );
    assert.equal(
      held.reduce((sum, a) => sum + (a.resources[rc] ?? 0), 0),
      usage,
      `the allocations on ${rp} must add up to its usage`,
    );
    assert.ok(usage <= cap, `usage ${usage} of ${rp} exceeds capacity ${cap}`);
  }
}

/**
 * Many new consumers race for the last units of a few providers. Returns how many claims were
 * acknowledged and refused, so callers can check the race really was contended.
 */
export async function raceForLastUnits(clients: PlacementClient[], label: string, claims = 150) {
  const next = spread(clients);
  const api = clients[0]!;
  const capacity = new Map<string, number>();
  for (let i = 0; i < 3; i++) {
    // capacity (10 - 1) x 1.5 = 13 each
    const rp = await makeProvider(api, `${label}-last-${i}`, { VCPU: { total: 10, reserved: 1, allocation_ratio: 1.5, max_unit: 5 } });
    capacity.set(rp, 13);
  }
  const rps = [...capacity.keys()];
  const attempts = Array.from({ length: claims }, (_, i) => ({ consumer: randomUUID(), rp: rps[i % rps.length]!, amount: 1 + (i % 3) }));
  const results = await Promise.all(
    attempts.map((a) =>
      next().put(`/allocations/${a.consumer}`, {
        allocations: { [a.rp]: { resources: { VCPU: a.amount } } },
        consumer_generation: null,
        ...owner,
      }),
    ),
  );
  const acknowledged = new Map<string, number>();
  let ok = 0;
  let refused = 0;
  for (const [i, res] of results.entries()) {
    const a = attempts[i]!;
    if (res.status === 204) {
      ok++;
      acknowledged.set(a.rp, (acknowledged.get(a.rp) ?? 0) + a.amount);
    } else {
      assert.equal(res.status, 409, `unexpected ${res.status}: ${res.text}`);
      assert.match(res.text, /exceed the capacity/);
      refused++;
    }
  }
  await checkProviders(api, acknowledged, capacity, 'VCPU');
  // every acknowledged consumer holds exactly its claim, every refused one holds nothing
  for (const [i, res] of results.entries()) {
    const a = attempts[i]!;
    const held = (await api.get(`/allocations/${a.consumer}`)).body.allocations;
    if (res.status === 204) assert.deepEqual(held[a.rp]?.resources, { VCPU: a.amount });
    else assert.deepEqual(held, {});
  }
  return { ok, refused };
}

/** Many writers race on one consumer's generation: exactly one of them may win. */
export async function raceForConsumerGeneration(clients: PlacementClient[], label: string, writers = 30) {
  const next = spread(clients);
  const api = clients[0]!;
  const rp = await makeProvider(api, `${label}-gen`, { VCPU: { total: 1000 } });

  // a brand-new consumer: everybody says "I expect it to be new"
  const fresh = randomUUID();
  const creations = await Promise.all(
    Array.from({ length: writers }, (_, i) =>
      next().put(`/allocations/${fresh}`, { allocations: { [rp]: { resources: { VCPU: i + 1 } } }, consumer_generation: null, ...owner }),
    ),
  );
  const created = creations.map((r, i) => [r.status, i] as const).filter(([s]) => s === 204);
  assert.equal(created.length, 1, `exactly one creator wins, got ${created.length}`);
  for (const r of creations) if (r.status !== 204) assert.equal(r.body.errors[0].code, 'placement.concurrent_update', r.text);
  const winner = created[0]![1];
  const afterCreate = (await api.get(`/allocations/${fresh}`)).body;
  assert.deepEqual(afterCreate.allocations[rp].resources, { VCPU: winner + 1 });

  // an existing consumer: everybody read generation g and writes with it
  const g = afterCreate.consumer_generation as number;
  const updates = await Promise.all(
    Array.from({ length: writers }, (_, i) =>
      next().put(`/allocations/${fresh}`, { allocations: { [rp]: { resources: { VCPU: 100 + i } } }, consumer_generation: g, ...owner }),
    ),
  );
  const updated = updates.map((r, i) => [r.status, i] as const).filter(([s]) => s === 204);
  assert.equal(updated.length, 1, `exactly one updater wins, got ${updated.length}`);
  const final = (await api.get(`/allocations/${fresh}`)).body;
  assert.equal(final.consumer_generation, g + 1);
  assert.deepEqual(final.allocations[rp].resources, { VCPU: 100 + updated[0]![1] });
  assert.equal((await api.get(`/resource_providers/${rp}/usages`)).body.usages.VCPU, 100 + updated[0]![1]);
}

/**
 * Migration-style swaps (POST /allocations moving an instance to another host while a migration
 * consumer keeps the source) race with plain claims for the destination. Every swap happens
 * entirely or not at all, and usage matches what was acknowledged.
 */
export async function raceSwaps(clients: PlacementClient[], label: string, instances = 24) {
  const next = spread(clients);
  const api = clients[0]!;
  const source = await makeProvider(api, `${label}-src`, { VCPU: { total: instances } });
  const dest = await makeProvider(api, `${label}-dst`, { VCPU: { total: Math.floor(instances / 2) } });
  const ids = Array.from({ length: instances }, () => ({ instance: randomUUID(), migration: randomUUID() }));
  for (const { instance } of ids) {
    const res = await api.put(`/allocations/${instance}`, { allocations: { [source]: { resources: { VCPU: 1 } } }, consumer_generation: null, ...owner });
    assert.equal(res.status, 204, res.text);
  }
  const fillers = Array.from({ length: instances / 2 }, () => randomUUID());
  const swapResults = ids.map(({ instance, migration }) =>
    next().post('/allocations', {
      [instance]: { allocations: { [dest]: { resources: { VCPU: 1 } } }, consumer_generation: 1, ...owner },
      [migration]: { allocations: { [source]: { resources: { VCPU: 1 } } }, consumer_generation: null, ...owner, consumer_type: 'MIGRATION' },
    }),
  );
  const fillerResults = fillers.map((c) =>
    next().put(`/allocations/${c}`, { allocations: { [dest]: { resources: { VCPU: 1 } } }, consumer_generation: null, ...owner }),
  );
  const swaps = await Promise.all(swapResults);
  const fills = await Promise.all(fillerResults);
  let swapped = 0;
  for (const [i, res] of swaps.entries()) {
    const { instance, migration } = ids[i]!;
    const inst = (await api.get(`/allocations/${instance}`)).body.allocations;
    const mig = (await api.get(`/allocations/${migration}`)).body.allocations;
    if (res.status === 204) {
      swapped++;
      assert.deepEqual(Object.keys(inst), [dest]);
      assert.deepEqual(Object.keys(mig), [source]);
    } else {
      assert.equal(res.status, 409, res.text);
      assert.deepEqual(Object.keys(inst), [source], 'a refused swap leaves the instance where it was');
      assert.deepEqual(mig, {}, 'a refused swap creates no migration consumer');
    }
  }
  const filled = fills.filter((r) => r.status === 204).length;
  for (const r of fills) if (r.status !== 204) assert.equal(r.status, 409, r.text);
  await checkProviders(
    api,
    new Map([
      [source, instances],
      [dest, swapped + filled],
    ]),
    new Map([
      [source, instances],
      [dest, Math.floor(instances / 2)],
    ]),
    'VCPU',
  );
  return { swapped, filled };
}
