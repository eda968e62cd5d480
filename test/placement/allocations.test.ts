import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { serverFor } from '../helpers/server.js';

const owner = { project_id: 'proj-a', user_id: 'user-a' };

for (const dialect of DIALECTS) {
  describe(`allocations (${dialect})`, () => {
    let api: PlacementClient;
    serverFor(dialect, (server) => (api = new PlacementClient(server.placementUrl)));

    async function provider(name: string, inventories: Record<string, Record<string, number>>): Promise<string> {
      const uuid = (await api.post('/resource_providers', { name })).body.uuid as string;
      const res = await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
      assert.equal(res.status, 200, res.text);
      return uuid;
    }
    const claim = (rp: string, resources: Record<string, number>, generation: number | null = null, extra = {}) => ({
      allocations: { [rp]: { resources } },
      ...owner,
      consumer_generation: generation,
      consumer_type: 'INSTANCE',
      ...extra,
    });

    test('capacity is (total - reserved) x allocation_ratio, checked with min_unit, max_unit and step_size', async () => {
      const rp = await provider('cap', { VCPU: { total: 4, reserved: 1, allocation_ratio: 2.0, max_unit: 4 }, DISK_GB: { total: 100, step_size: 10 } });
      // capacity 6 VCPU: 4 + 2 fits, one more does not
      assert.equal((await api.put(`/allocations/${randomUUID()}`, claim(rp, { VCPU: 4 }))).status, 204);
      assert.equal((await api.put(`/allocations/${randomUUID()}`, claim(rp, { VCPU: 2 }))).status, 204);
      const over = await api.put(`/allocations/${randomUUID()}`, claim(rp, { VCPU: 1 }));
      assert.equal(over.status, 409);
      assert.match(over.text, /would exceed the capacity/);
      // max_unit 4 and step_size 10 are per allocation
      const big = await api.put(`/allocations/${randomUUID()}`, claim(rp, { DISK_GB: 15 }));
      assert.equal(big.status, 409);
      assert.match(big.text, /violate inventory constraints/);
      const usages = await api.get(`/resource_providers/${rp}/usages`);
      assert.deepEqual(usages.body.usages, { VCPU: 6, DISK_GB: 0 });
    });

    test('consumer generations: null means new, a stale one is a 409, each write bumps it', async () => {
      const rp = await provider('gen', { VCPU: { total: 8 } });
      const consumer = randomUUID();
      assert.equal((await api.put(`/allocations/${consumer}`, claim(rp, { VCPU: 1 }))).status, 204);
      const again = await api.put(`/allocations/${consumer}`, claim(rp, { VCPU: 2 }));
      assert.equal(again.status, 409);
      assert.equal(again.body.errors[0].code, 'placement.concurrent_update');
      const current = await api.get(`/allocations/${consumer}`);
      assert.equal(current.body.consumer_generation, 1);
      assert.equal(current.body.consumer_type, 'INSTANCE');
      assert.equal((await api.put(`/allocations/${consumer}`, claim(rp, { VCPU: 2 }, 1))).status, 204);
      const stale = await api.put(`/allocations/${consumer}`, claim(rp, { VCPU: 3 }, 1));
      assert.equal(stale.status, 409);
      assert.match(stale.text, /consumer generation conflict - expected 2 but got 1/);
      // an empty allocation set removes the consumer: it is new again afterwards
      assert.equal((await api.put(`/allocations/${consumer}`, { allocations: {}, ...owner, consumer_generation: 2, consumer_type: 'INSTANCE' })).status, 204);
      assert.deepEqual((await api.get(`/allocations/${consumer}`)).body, { allocations: {} });
      assert.equal((await api.put(`/allocations/${consumer}`, claim(rp, { VCPU: 1 }))).status, 204);
    });

    test("a consumer's allocations are listed providers oldest first on both databases (osc-placement's allocation unset compares the list)", async () => {
      const [a, b, c] = [
        await provider('order-a', { VCPU: { total: 8 } }),
        await provider('order-b', { VCPU: { total: 8 } }),
        await provider('order-c', { VCPU: { total: 8 } }),
      ];
      const consumer = randomUUID();
      const body = (order: string[], generation: number | null) => ({
        allocations: Object.fromEntries(order.map((rp) => [rp, { resources: { VCPU: 1 } }])),
        ...owner,
        consumer_generation: generation,
        consumer_type: 'INSTANCE',
      });
      assert.equal((await api.put(`/allocations/${consumer}`, body([c, a, b], null))).status, 204);
      assert.deepEqual(Object.keys((await api.get(`/allocations/${consumer}`)).body.allocations), [a, b, c]);
      assert.equal((await api.put(`/allocations/${consumer}`, body([c, a], 1))).status, 204);
      assert.deepEqual(Object.keys((await api.get(`/allocations/${consumer}`)).body.allocations), [a, c]);
    });

    test('POST /allocations writes every consumer or none', async () => {
      const source = await provider('src', { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 } });
      const dest = await provider('dst', { VCPU: { total: 2 }, MEMORY_MB: { total: 4096 } });
      const instance = randomUUID();
      const migration = randomUUID();
      assert.equal((await api.put(`/allocations/${instance}`, claim(source, { VCPU: 2, MEMORY_MB: 1024 }))).status, 204);
      const genBefore = (await api.get(`/resource_providers/${dest}`)).body.generation;

      // migration takes over the source claim, instance claims the destination: the second part
      // does not fit, so neither may happen
      const tooBig = await api.post('/allocations', {
        [migration]: {
          allocations: { [source]: { resources: { VCPU: 2, MEMORY_MB: 1024 } } },
          ...owner,
          consumer_generation: null,
          consumer_type: 'MIGRATION',
        },
        [instance]: { allocations: { [dest]: { resources: { VCPU: 3, MEMORY_MB: 1024 } } }, ...owner, consumer_generation: 1, consumer_type: 'INSTANCE' },
      });
      assert.equal(tooBig.status, 409);
      assert.deepEqual((await api.get(`/allocations/${migration}`)).body, { allocations: {} });
      assert.deepEqual(Object.keys((await api.get(`/allocations/${instance}`)).body.allocations), [source]);
      assert.equal((await api.get(`/resource_providers/${dest}`)).body.generation, genBefore);

      const swap = await api.post('/allocations', {
        [migration]: {
          allocations: { [source]: { resources: { VCPU: 2, MEMORY_MB: 1024 } } },
          ...owner,
          consumer_generation: null,
          consumer_type: 'MIGRATION',
        },
        [instance]: { allocations: { [dest]: { resources: { VCPU: 2, MEMORY_MB: 1024 } } }, ...owner, consumer_generation: 1, consumer_type: 'INSTANCE' },
      });
      assert.equal(swap.status, 204, swap.text);
      assert.deepEqual((await api.get(`/resource_providers/${source}/usages`)).body.usages, { VCPU: 2, MEMORY_MB: 1024 });
      assert.deepEqual((await api.get(`/resource_providers/${dest}/usages`)).body.usages, { VCPU: 2, MEMORY_MB: 1024 });
      const byType = await api.get(`/usages?project_id=${owner.project_id}`);
      assert.equal(byType.body.usages.MIGRATION.consumer_count, 1);
      // consumer_type=all is every type in one group
      const all = await api.get(`/usages?project_id=${owner.project_id}&consumer_type=all`);
      assert.equal(all.status, 200, all.text);
      const summed: Record<string, number> = {};
      for (const usage of Object.values(byType.body.usages) as Array<Record<string, number>>) {
        for (const [key, n] of Object.entries(usage)) summed[key] = (summed[key] ?? 0) + n;
      }
      assert.deepEqual(all.body.usages, { all: summed });
      assert.deepEqual((await api.get(`/usages?project_id=${randomUUID()}&consumer_type=all`)).body.usages, {});
    });

    test('capacity may drop below usage (the provider is then full); a class in use cannot be removed', async () => {
      const rp = await provider('shrink', { VCPU: { total: 8 }, MEMORY_MB: { total: 2048 }, DISK_GB: { total: 100 } });
      assert.equal((await api.put(`/allocations/${randomUUID()}`, claim(rp, { VCPU: 6, DISK_GB: 10 }))).status, 204);
      const generation = async () => (await api.get(`/resource_providers/${rp}`)).body.generation as number;

      // An operator lowering capacity on a full host is obeyed, as Placement obeys: usage stays,
      // the provider is over capacity until consumers leave, and new claims on it fail.
      const shrink = await api.put(`/resource_providers/${rp}/inventories/VCPU`, { resource_provider_generation: await generation(), total: 4 });
      assert.equal(shrink.status, 200, shrink.text);
      const ratio = await api.put(`/resource_providers/${rp}/inventories`, {
        resource_provider_generation: await generation(),
        inventories: { VCPU: { total: 4, allocation_ratio: 0.5 }, MEMORY_MB: { total: 2048 }, DISK_GB: { total: 5 } },
      });
      assert.equal(ratio.status, 200, ratio.text);
      assert.deepEqual((await api.get(`/resource_providers/${rp}/usages`)).body.usages, { VCPU: 6, MEMORY_MB: 0, DISK_GB: 10 });
      const more = await api.put(`/allocations/${randomUUID()}`, claim(rp, { VCPU: 1 }));
      assert.equal(more.status, 409);
      assert.match(more.body.errors[0].detail, /would exceed the capacity/);

      // Removing classes that hold allocations: every class in use named, in Placement's order
      // (resource class id), worded as each of Placement's handlers words it.
      const before = await generation();
      const inUse = `Inventory for 'VCPU, DISK_GB' on resource provider '${rp}' in use.`;
      const replace = await api.put(`/resource_providers/${rp}/inventories`, {
        resource_provider_generation: before,
        inventories: { MEMORY_MB: { total: 1 } },
      });
      assert.equal(replace.status, 409);
      assert.equal(replace.body.errors[0].code, 'placement.inventory.inuse');
      assert.ok(replace.body.errors[0].detail.includes(`update conflict: ${inUse}`), replace.text);
      const deleteAll = await api.delete(`/resource_providers/${rp}/inventories`);
      assert.equal(deleteAll.status, 409);
      assert.equal(deleteAll.body.errors[0].code, 'placement.inventory.inuse');
      assert.ok(deleteAll.body.errors[0].detail.includes(` ${inUse}`), deleteAll.text);
      const deleteOne = await api.delete(`/resource_providers/${rp}/inventories/DISK_GB`);
      assert.equal(deleteOne.status, 409);
      assert.equal(deleteOne.body.errors[0].code, 'placement.concurrent_update'); // sic: Placement files it so
      assert.ok(
        deleteOne.body.errors[0].detail.includes(`Unable to delete inventory of class DISK_GB: Inventory for 'DISK_GB' on resource provider '${rp}' in use.`),
      );
      const reshape = await api.post(
        '/reshaper',
        { inventories: { [rp]: { resource_provider_generation: before, inventories: { MEMORY_MB: { total: 1 } } } }, allocations: {} },
        { headers: { 'x-roles': 'service' } },
      );
      assert.equal(reshape.status, 409);
      assert.equal(reshape.body.errors[0].code, 'placement.inventory.inuse');
      assert.ok(reshape.body.errors[0].detail.includes(`update conflict: ${inUse}`), reshape.text);
      assert.equal(await generation(), before, 'nothing refused was written');
      // a class nobody uses goes
      assert.equal((await api.delete(`/resource_providers/${rp}/inventories/MEMORY_MB`)).status, 204);
    });

    test('reshaper moves inventory and allocations together', async () => {
      const parent = await provider('reshape-root', { VCPU: { total: 8 } });
      const child = (await api.post('/resource_providers', { name: 'reshape-numa0', parent_provider_uuid: parent })).body.uuid as string;
      const consumer = randomUUID();
      assert.equal((await api.put(`/allocations/${consumer}`, claim(parent, { VCPU: 3 }))).status, 204);
      const pg = (await api.get(`/resource_providers/${parent}`)).body.generation;
      const res = await api.post(
        '/reshaper',
        {
          inventories: {
            [parent]: { resource_provider_generation: pg, inventories: {} },
            [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } },
          },
          allocations: { [consumer]: { allocations: { [child]: { resources: { VCPU: 3 } } }, ...owner, consumer_generation: 1, consumer_type: 'INSTANCE' } },
          // Reshaping is a service's call (nova-compute's); Placement's default rule allows no one else.
        },
        { headers: { 'x-roles': 'service' } },
      );
      assert.equal(res.status, 204, res.text);
      assert.deepEqual((await api.get(`/resource_providers/${parent}/usages`)).body.usages, {});
      assert.deepEqual((await api.get(`/resource_providers/${child}/usages`)).body.usages, { VCPU: 3 });
    });

    test('a provider with allocations cannot be deleted; DELETE /allocations frees it', async () => {
      const rp = await provider('busy', { VCPU: { total: 2 } });
      const consumer = randomUUID();
      await api.put(`/allocations/${consumer}`, claim(rp, { VCPU: 1 }));
      const del = await api.delete(`/resource_providers/${rp}`);
      assert.equal(del.status, 409);
      assert.equal(del.body.errors[0].code, 'placement.resource_provider.inuse');
      assert.equal((await api.delete(`/allocations/${consumer}`)).status, 204);
      assert.equal((await api.delete(`/allocations/${consumer}`)).status, 404);
      assert.equal((await api.delete(`/resource_providers/${rp}`)).status, 204);
    });
  });
}
