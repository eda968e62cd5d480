// Three allot processes sharing one PostgreSQL database, many concurrent clients spread over
// them: the same races as concurrency.test.ts, now between processes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { raceEveryWrite, raceForConsumerGeneration, raceForLastUnits, raceForProviderGeneration, raceSwaps } from './races.js';

describe('three processes on one PostgreSQL', () => {
  let servers: SpawnedServer[] = [];
  let clients: PlacementClient[] = [];
  before(async () => {
    const db = await freshDatabaseUrl('postgres');
    // Started together on an empty database: their migrations race too.
    servers = await Promise.all([1, 2, 3].map((n) => spawnServer(['--db', db, '--conductor-id', `proc-${n}`, '--pool-size', '8'])));
    clients = servers.map((s) => new PlacementClient(s.placementUrl));
  });
  after(async () => {
    const codes = await Promise.all(servers.map((s) => s.stop()));
    assert.deepEqual(codes, [0, 0, 0], 'every process stops cleanly on SIGTERM');
  });

  test('racing for the last units never over-allocates', async () => {
    const { ok, refused } = await raceForLastUnits(clients, 'mp', 240);
    assert.ok(ok > 0 && refused > 0, `the race must be contended (ok ${ok}, refused ${refused})`);
  });

  test('registration: one creator of a name, one writer of inventories, traits and aggregates per generation; the rest 409', async () => {
    await raceForProviderGeneration(clients, 'mp');
  });

  test('racing on one consumer generation lets exactly one writer win', async () => {
    await raceForConsumerGeneration(clients, 'mp', 45);
  });

  test('POST /allocations swaps are all-or-nothing under contention', async () => {
    await raceSwaps(clients, 'mp', 36);
  });

  test('swaps, moves, deletes and new claims racing on the same providers keep usage, capacity and generations right', async () => {
    await raceEveryWrite(clients, 'mp');
  });

  test('a resource class renamed or recreated by another process is seen by the next claim', async () => {
    const [a, b] = clients as [PlacementClient, PlacementClient];
    const rp = crypto.randomUUID();
    assert.equal((await a.post('/resource_providers', { name: `mp-rc-${rp}`, uuid: rp })).status, 200);
    const claim = (rc: string) =>
      a.put(`/allocations/${crypto.randomUUID()}`, {
        allocations: { [rp]: { resources: { [rc]: 1 } } },
        project_id: crypto.randomUUID(),
        user_id: crypto.randomUUID(),
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
    const inventory = async (...classes: string[]) => {
      const { body } = await a.get(`/resource_providers/${rp}`);
      const inventories = Object.fromEntries(classes.map((rc) => [rc, { total: 10 }]));
      return a.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: body.generation, inventories });
    };

    // Process a learns CUSTOM_MP_OLD's id by claiming it.
    assert.equal((await b.put('/resource_classes/CUSTOM_MP_OLD')).status, 201);
    assert.equal((await inventory('CUSTOM_MP_OLD')).status, 200);
    assert.equal((await claim('CUSTOM_MP_OLD')).status, 204);

    // Process b renames it (microversions 1.2–1.6 allow that): the old name is gone for a too.
    assert.equal((await b.at('1.6').put('/resource_classes/CUSTOM_MP_OLD', { name: 'CUSTOM_MP_NEW' })).status, 200);
    const gone = await claim('CUSTOM_MP_OLD');
    assert.equal(gone.status, 400, gone.text);
    assert.match(gone.text, /No such resource class CUSTOM_MP_OLD/);
    const renamed = await claim('CUSTOM_MP_NEW');
    assert.equal(renamed.status, 204, renamed.text);

    // Process b deletes a class and makes a new one with the same name: a claims the new one.
    assert.equal((await b.put('/resource_classes/CUSTOM_MP_AGAIN')).status, 201);
    assert.equal((await inventory('CUSTOM_MP_NEW', 'CUSTOM_MP_AGAIN')).status, 200);
    assert.equal((await claim('CUSTOM_MP_AGAIN')).status, 204);
    const { body: held } = await a.get(`/resource_providers/${rp}/allocations`);
    for (const consumer of Object.keys(held.allocations)) assert.equal((await b.delete(`/allocations/${consumer}`)).status, 204);
    assert.equal((await inventory('CUSTOM_MP_NEW')).status, 200); // drops CUSTOM_MP_AGAIN's inventory
    assert.equal((await b.delete('/resource_classes/CUSTOM_MP_AGAIN')).status, 204);
    assert.equal((await b.put('/resource_classes/CUSTOM_MP_AGAIN')).status, 201);
    assert.equal((await inventory('CUSTOM_MP_NEW', 'CUSTOM_MP_AGAIN')).status, 200);
    const again = await claim('CUSTOM_MP_AGAIN');
    assert.equal(again.status, 204, again.text);
    const { body: usages } = await b.get(`/resource_providers/${rp}/usages`);
    assert.deepEqual(usages.usages, { CUSTOM_MP_NEW: 0, CUSTOM_MP_AGAIN: 1 });
  });

  test('a trait or resource class deleted by another process is unknown to the next candidates requests', async () => {
    const [a, b] = clients as [PlacementClient, PlacementClient];
    const rp = crypto.randomUUID();
    assert.equal((await b.post('/resource_providers', { name: `mp-names-${rp}`, uuid: rp })).status, 200);
    assert.equal((await b.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } })).status, 200);
    assert.equal((await b.put('/traits/CUSTOM_MP_GONE')).status, 201);
    assert.equal((await b.put('/resource_classes/CUSTOM_MP_GONE')).status, 201);
    // Process a sees both names (and remembers them).
    assert.equal((await a.get('/allocation_candidates?resources=VCPU:1&required=CUSTOM_MP_GONE')).status, 200);
    assert.equal((await a.get('/allocation_candidates?resources=CUSTOM_MP_GONE:1')).status, 200);
    assert.equal((await b.delete('/traits/CUSTOM_MP_GONE')).status, 204);
    assert.equal((await b.delete('/resource_classes/CUSTOM_MP_GONE')).status, 204);
    // The deletes reach a by NOTIFY a few milliseconds after they commit.
    const refusedWithin = async (path: string, pattern: RegExp) => {
      const deadline = Date.now() + 3000;
      for (;;) {
        const res = await a.get(path);
        if (res.status === 400) return assert.match(res.text, pattern);
        assert.equal(res.status, 200, res.text);
        assert.ok(Date.now() < deadline, `${path} still answered 200 three seconds after the delete`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await refusedWithin('/allocation_candidates?resources=VCPU:1&required=CUSTOM_MP_GONE', /No such trait\(s\): CUSTOM_MP_GONE/);
    await refusedWithin('/allocation_candidates?resources=CUSTOM_MP_GONE:1', /No such resource class CUSTOM_MP_GONE/);
  });

  test('no process logged an unexpected error', () => {
    for (const s of servers) assert.doesNotMatch(s.output(), /"level":50|unexpected error/);
  });
});
