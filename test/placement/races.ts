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

/**
 * Every kind of write at once on the same few providers: Nova's in-place swaps (the instance's
 * allocations go to a migration consumer), Nova's moves (the instance to another provider, the
 * migration consumer keeps the source), plain moves (PUT with the consumer generation: given back
 * on one provider, taken on another), deletes and new claims, with more asked for than fits.
 * Each consumer is written by one request, so what every provider must hold follows from the
 * answers: usage equals the allocations and what was acknowledged, nothing is over capacity,
 * every provider's generation went up once per acknowledged write that put allocations on it
 * (deletes and releases bump none), and nothing answered a 5xx.
 */
export async function raceEveryWrite(clients: PlacementClient[], label: string) {
  const next = spread(clients);
  const api = clients[0]!;
  const capacity = 14;
  const rps: string[] = [];
  for (let i = 0; i < 4; i++) rps.push(await makeProvider(api, `${label}-every-${i}`, { VCPU: { total: capacity } }));
  // 10 instances of 1 VCPU on each provider
  const held = new Map<string, Record<string, number>>(); // consumer → provider → VCPU
  const instances = Array.from({ length: 40 }, (_, i) => ({ uuid: randomUUID(), rp: rps[i % 4]! }));
  for (const { uuid, rp } of instances) {
    const res = await api.put(`/allocations/${uuid}`, { allocations: { [rp]: { resources: { VCPU: 1 } } }, consumer_generation: null, ...owner });
    assert.equal(res.status, 204, res.text);
    held.set(uuid, { [rp]: 1 });
  }
  const generation = async (rp: string) => (await api.get(`/resource_providers/${rp}`)).body.generation as number;
  const generations = new Map(await Promise.all(rps.map(async (rp) => [rp, await generation(rp)] as const)));

  const migration = (rp: string) => ({ allocations: { [rp]: { resources: { VCPU: 1 } } }, consumer_generation: null, ...owner, consumer_type: 'MIGRATION' });
  /** what each write leaves behind when acknowledged: consumer → provider → VCPU (empty: none) */
  type Outcome = Map<string, Record<string, number>>;
  const writes: Array<{ what: string; send: () => Promise<{ status: number; text: string }>; outcome: Outcome }> = [];
  for (const [i, { uuid, rp }] of instances.entries()) {
    const other = rps[(rps.indexOf(rp) + 1 + (i % 3)) % 4]!;
    const m = randomUUID();
    const kind = i % 4;
    if (kind === 0)
      writes.push({
        what: 'in-place swap',
        send: () => next().post('/allocations', { [m]: migration(rp), [uuid]: { allocations: {}, consumer_generation: 1, ...owner } }),
        outcome: new Map([
          [m, { [rp]: 1 }],
          [uuid, {}],
        ]),
      });
    else if (kind === 1)
      writes.push({
        what: 'move with a migration consumer',
        send: () =>
          next().post('/allocations', {
            [uuid]: { allocations: { [other]: { resources: { VCPU: 1 } } }, consumer_generation: 1, ...owner },
            [m]: migration(rp),
          }),
        outcome: new Map([
          [uuid, { [other]: 1 }],
          [m, { [rp]: 1 }],
        ]),
      });
    else if (kind === 2)
      writes.push({
        what: 'move',
        send: () => next().put(`/allocations/${uuid}`, { allocations: { [other]: { resources: { VCPU: 2 } } }, consumer_generation: 1, ...owner }),
        outcome: new Map([[uuid, { [other]: 2 }]]),
      });
    else writes.push({ what: 'delete', send: () => next().delete(`/allocations/${uuid}`), outcome: new Map([[uuid, {}]]) });
  }
  for (let i = 0; i < 30; i++) {
    const c = randomUUID();
    const rp = rps[i % 4]!;
    writes.push({
      what: 'claim',
      send: () => next().put(`/allocations/${c}`, { allocations: { [rp]: { resources: { VCPU: 1 } } }, consumer_generation: null, ...owner }),
      outcome: new Map([[c, { [rp]: 1 }]]),
    });
  }
  // shuffled, all at once
  writes.sort(() => Math.random() - 0.5);
  const answers = await Promise.all(writes.map((w) => w.send()));

  const bumps = new Map<string, number>();
  let refused = 0;
  for (const [i, res] of answers.entries()) {
    const w = writes[i]!;
    if (res.status === 204) {
      for (const [consumer, allocations] of w.outcome) {
        held.set(consumer, allocations);
        if (w.what !== 'delete') for (const rp of Object.keys(allocations)) bumps.set(rp, (bumps.get(rp) ?? 0) + 1);
      }
    } else {
      assert.notEqual(w.what, 'delete', `a delete of an existing consumer must succeed: ${res.status} ${res.text}`);
      assert.equal(res.status, 409, `${w.what}: unexpected ${res.status}: ${res.text}`);
      assert.match(res.text, /exceed the capacity/, `${w.what}: only capacity may refuse`);
      refused++;
    }
  }
  assert.ok(refused > 0, 'more was asked for than fits: some writes must be refused');

  const expected = new Map(rps.map((rp) => [rp, 0]));
  for (const [consumer, allocations] of held) {
    const body = (await api.get(`/allocations/${consumer}`)).body;
    const got = Object.fromEntries(
      Object.entries(body.allocations as Record<string, { resources: { VCPU: number } }>).map(([rp, a]) => [rp, a.resources.VCPU]),
    );
    assert.deepEqual(got, allocations, `consumer ${consumer} holds what its answers say`);
    for (const [rp, n] of Object.entries(allocations)) expected.set(rp, expected.get(rp)! + n);
  }
  await checkProviders(api, expected, new Map(rps.map((rp) => [rp, capacity])), 'VCPU');
  for (const rp of rps) {
    assert.equal(await generation(rp), generations.get(rp)! + (bumps.get(rp) ?? 0), `${rp}: one generation per acknowledged write that put allocations on it`);
  }
  return { acknowledged: answers.length - refused, refused };
}

/**
 * Registration races: many creators of one name, then many writers of one provider's inventories,
 * traits and aggregates, all with the generation they read. Exactly one of each wins, the others
 * are refused with 409 (placement.duplicate_name, placement.concurrent_update), and the provider
 * holds exactly what the winner was told it holds.
 */
export async function raceForProviderGeneration(clients: PlacementClient[], label: string, writers = 24) {
  const next = spread(clients);
  const api = clients[0]!;
  const name = `${label}-registration-${randomUUID()}`;
  const creations = await Promise.all(Array.from({ length: writers }, () => next().post('/resource_providers', { name })));
  const created = creations.filter((r) => r.status === 200);
  assert.equal(created.length, 1, `exactly one creator of the name wins, got ${created.length}`);
  for (const r of creations) if (r.status !== 200) assert.equal(r.body.errors?.[0]?.code, 'placement.duplicate_name', r.text);
  const rp = created[0]!.body.uuid as string;
  assert.equal((await api.get(`/resource_providers?name=${name}`)).body.resource_providers.length, 1);

  const writes: Array<[string, (i: number, generation: number) => unknown]> = [
    [
      'inventories',
      (i, generation) => ({
        resource_provider_generation: generation,
        inventories: { VCPU: { total: 10 + i }, ...(i % 2 ? { DISK_GB: { total: 100 + i } } : {}) },
      }),
    ],
    [
      'traits',
      (i, generation) => ({ resource_provider_generation: generation, traits: i % 2 ? ['HW_CPU_X86_AVX2'] : ['HW_CPU_X86_SSE42', 'STORAGE_DISK_SSD'] }),
    ],
    ['aggregates', (i, generation) => ({ resource_provider_generation: generation, aggregates: i % 3 ? [randomUUID()] : [randomUUID(), randomUUID()] })],
  ];
  for (const [what, body] of writes) {
    const generation = (await api.get(`/resource_providers/${rp}`)).body.generation as number;
    const answers = await Promise.all(Array.from({ length: writers }, (_, i) => next().put(`/resource_providers/${rp}/${what}`, body(i, generation))));
    const won = answers.filter((r) => r.status === 200);
    assert.equal(won.length, 1, `${what}: exactly one writer at generation ${generation} wins, got ${won.length}`);
    for (const r of answers) if (r.status !== 200) assert.equal(r.body.errors?.[0]?.code, 'placement.concurrent_update', `${what}: ${r.text}`);
    const winner = won[0]!.body;
    assert.equal(winner.resource_provider_generation, generation + 1, `${what}: the winner moved the generation by one`);
    const now = (await api.get(`/resource_providers/${rp}/${what}`)).body;
    assert.deepEqual(now, winner, `${what}: the provider holds what the winner was answered`);
  }
}
