// The placement backend: nodes are resource providers of allot's own Placement, a node
// allocation is a Placement allocation whose consumer is the allocation's uuid, and the two can
// never disagree — including when a Placement client claims a node's provider directly, and when
// a database that grew under the `database` backend is switched to `placement`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`bare-metal placement backend (${dialect})`, () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'allot-mirror-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    const databaseUrl = async (name: string) => (dialect === 'postgres' ? freshDatabaseUrl('postgres') : `sqlite:${path.join(dir, `${name}.db`)}`);

    test('a node is a provider with CUSTOM_<CLASS>: 1 and its traits, kept in step with the node', async () => {
      const server = await startServer({ db: await databaseUrl('mirror'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const node = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'm-1', resource_class: 'baremetal.gold-2' })).body;
        const provider = await placement.get(`/resource_providers/${node.uuid}`);
        assert.equal(provider.status, 200, provider.text);
        assert.equal(provider.body.name, node.uuid);
        const inventory = (await placement.get(`/resource_providers/${node.uuid}/inventories`)).body.inventories;
        assert.deepEqual(Object.keys(inventory), ['CUSTOM_BAREMETAL_GOLD_2']);
        assert.equal(inventory.CUSTOM_BAREMETAL_GOLD_2.total, 1);
        assert.equal(inventory.CUSTOM_BAREMETAL_GOLD_2.max_unit, 1);
        await api.put('/v1/nodes/m-1/traits', { traits: ['CUSTOM_NEW_TRAIT', 'HW_CPU_X86_VMX'] });
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/traits`)).body.traits.sort(), ['CUSTOM_NEW_TRAIT', 'HW_CPU_X86_VMX']);
        await api.patch('/v1/nodes/m-1', [{ op: 'replace', path: '/resource_class', value: 'silver' }]);
        assert.deepEqual(Object.keys((await placement.get(`/resource_providers/${node.uuid}/inventories`)).body.inventories), ['CUSTOM_SILVER']);
        await api.patch('/v1/nodes/m-1', [{ op: 'remove', path: '/resource_class' }]);
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/inventories`)).body.inventories, {});
        assert.equal((await api.delete('/v1/nodes/m-1')).status, 204);
        assert.equal((await placement.get(`/resource_providers/${node.uuid}`)).status, 404);
      } finally {
        await server.close();
      }
    });

    test("a Placement consumer holding a node's provider keeps the node from being allocated", async () => {
      const server = await startServer({ db: await databaseUrl('held'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const held = await availableNode(api, { name: 'held', resource_class: 'held' });
        const free = await availableNode(api, { name: 'free', resource_class: 'held' });
        const consumer = '5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
        const claim = await placement.put(`/allocations/${consumer}`, {
          allocations: { [held.uuid]: { resources: { CUSTOM_HELD: 1 } } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        });
        assert.equal(claim.status, 204, claim.text);
        // the allocation named like the held node would prefer it, but Placement says it is full
        const a = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held', name: 'held' })).body.uuid);
        assert.equal(a.state, 'active');
        assert.equal(a.node_uuid, free.uuid);
        const b = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held' })).body.uuid);
        assert.equal(b.state, 'error');
        assert.match(b.last_error, /no available nodes match the resource class held/);
        // usage matches node state exactly
        assert.deepEqual((await placement.get(`/resource_providers/${free.uuid}/usages`)).body.usages, { CUSTOM_HELD: 1 });
        assert.deepEqual((await placement.get(`/allocations/${a.uuid}`)).body.allocations[free.uuid].resources, { CUSTOM_HELD: 1 });
        assert.equal((await api.get(`/v1/nodes/${held.uuid}`)).body.instance_uuid, null);
      } finally {
        await server.close();
      }
    });

    test('switching a database from the database backend to placement mirrors nodes and claims existing allocations', async () => {
      const db = await databaseUrl('switch');
      const before = await startServer({ db, transitionTime: 20, baremetalBackend: 'database', conductorId: 'switch-1' });
      let allocated: { uuid: string; node_uuid: string };
      try {
        const api = new IronicClient(`${before.url}/baremetal`);
        await availableNode(api, { name: 'sw-1', resource_class: 'switch' }, ['CUSTOM_SW']);
        await availableNode(api, { name: 'sw-2', resource_class: 'switch' });
        allocated = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'switch', traits: ['CUSTOM_SW'] })).body.uuid);
        assert.equal((await new PlacementClient(before.placementUrl).get('/resource_providers')).body.resource_providers.length, 0);
      } finally {
        await before.close();
      }
      const afterwards = await startServer({ db, transitionTime: 20, baremetalBackend: 'placement', conductorId: 'switch-2' });
      try {
        const api = new IronicClient(`${afterwards.url}/baremetal`);
        const placement = new PlacementClient(afterwards.placementUrl);
        // the mirror is built when the conductor starts, just after the server listens
        const providers = await (async () => {
          for (let i = 0; i < 400; i++) {
            const rps = (await placement.get('/resource_providers')).body.resource_providers;
            const consumer = await placement.get(`/allocations/${allocated.uuid}`);
            if (rps.length === 2 && Object.keys(consumer.body.allocations ?? {}).length === 1) return rps;
            await new Promise((r) => setTimeout(r, 50));
          }
          assert.fail('the placement mirror was not built');
        })();
        assert.equal(providers.length, 2);
        assert.deepEqual((await placement.get(`/allocations/${allocated.uuid}`)).body.allocations[allocated.node_uuid].resources, { CUSTOM_SWITCH: 1 });
        // the other node is still allocatable, through Placement now
        const next = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'switch' })).body.uuid);
        assert.equal(next.state, 'active');
        assert.notEqual(next.node_uuid, allocated.node_uuid);
      } finally {
        await afterwards.close();
      }
    });
  });
}
