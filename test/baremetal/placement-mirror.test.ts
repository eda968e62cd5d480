// The placement backend: nodes are resource providers of allot's own Placement, a node
// allocation is a Placement allocation whose consumer is the allocation's uuid, and the two can
// never disagree — a Placement client cannot write allocations on a node's provider (so it can
// never become a node's second owner), and a database that grew under the `database` backend
// can be switched to `placement`.
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

    test('a Placement client cannot make a second owner of a node: writes on node providers are refused', async () => {
      const server = await startServer({ db: await databaseUrl('held'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const taken = await availableNode(api, { name: 'taken', resource_class: 'held' });
        const free = await availableNode(api, { name: 'free', resource_class: 'held' });
        const owned = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held', candidate_nodes: ['taken'] })).body.uuid);
        assert.equal(owned.state, 'active');
        assert.equal(owned.node_uuid, taken.uuid);
        // a foreign provider, to show that ordinary Placement writes still work
        const other = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
        assert.equal((await placement.post('/resource_providers', { name: 'other', uuid: other })).status, 200);
        assert.equal(
          (await placement.put(`/resource_providers/${other}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } })).status,
          200,
        );

        const consumer = '5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
        const put = (allocations: Record<string, unknown>, generation: number | null = null) =>
          placement.put(`/allocations/${consumer}`, { allocations, project_id: 'p', user_id: 'u', consumer_generation: generation, consumer_type: 'INSTANCE' });
        const refused = (res: { status: number; body: any; text: string }, uuids: string[]) => {
          assert.equal(res.status, 409, res.text);
          assert.equal(res.body.errors[0].code, 'placement.undefined_code');
          for (const uuid of uuids) assert.match(res.body.errors[0].detail, new RegExp(`'${uuid}'`));
          assert.match(res.body.errors[0].detail, /belong to the bare-metal service/);
        };
        // the allocated node's provider: raising its capacity first does not help
        const inventory = (await placement.get(`/resource_providers/${taken.uuid}/inventories`)).body;
        assert.equal(
          (
            await placement.put(`/resource_providers/${taken.uuid}/inventories`, {
              ...inventory,
              inventories: { CUSTOM_HELD: { total: 1, allocation_ratio: 2 } },
            })
          ).status,
          200,
        );
        refused(await put({ [taken.uuid]: { resources: { CUSTOM_HELD: 1 } } }), [taken.uuid]);
        // a free node's provider, alone or among others; in POST /allocations; in /reshaper
        refused(await put({ [free.uuid]: { resources: { CUSTOM_HELD: 1 } }, [other]: { resources: { VCPU: 1 } } }), [free.uuid]);
        refused(
          await placement.post('/allocations', {
            [consumer]: {
              allocations: { [free.uuid]: { resources: { CUSTOM_HELD: 1 } } },
              project_id: 'p',
              user_id: 'u',
              consumer_generation: null,
              consumer_type: 'INSTANCE',
            },
          }),
          [free.uuid],
        );
        const otherGeneration = (await placement.get(`/resource_providers/${other}`)).body.generation;
        const reshape = await placement.post(
          '/reshaper',
          {
            inventories: { [other]: { resource_provider_generation: otherGeneration, inventories: { VCPU: { total: 4 } } } },
            allocations: {
              [consumer]: {
                allocations: { [free.uuid]: { resources: { CUSTOM_HELD: 1 } } },
                project_id: 'p',
                user_id: 'u',
                consumer_generation: null,
                consumer_type: 'INSTANCE',
              },
            },
          },
          { headers: { 'x-roles': 'service' } },
        );
        refused(reshape, [free.uuid]);
        // the bare-metal allocation's consumer cannot be moved or deleted through Placement either
        refused(
          await placement.put(`/allocations/${owned.uuid}`, {
            allocations: { [other]: { resources: { VCPU: 1 } } },
            project_id: 'p',
            user_id: 'u',
            consumer_generation: 1,
            consumer_type: 'INSTANCE',
          }),
          [taken.uuid],
        );
        refused(await placement.delete(`/allocations/${owned.uuid}`), [taken.uuid]);
        // ordinary consumers on ordinary providers are unaffected
        assert.equal((await put({ [other]: { resources: { VCPU: 1 } } })).status, 204);

        // one owner per node, and Placement agrees with the nodes
        assert.deepEqual((await placement.get(`/resource_providers/${taken.uuid}/allocations`)).body.allocations, {
          [owned.uuid]: { resources: { CUSTOM_HELD: 1 } },
        });
        assert.deepEqual((await placement.get(`/resource_providers/${free.uuid}/allocations`)).body.allocations, {});
        const next = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held' })).body.uuid);
        assert.equal(next.state, 'active');
        assert.equal(next.node_uuid, free.uuid);
        const none = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held' })).body.uuid);
        assert.equal(none.state, 'error');
        assert.match(none.last_error, /no available nodes match the resource class held/);
        assert.deepEqual((await placement.get(`/resource_providers/${free.uuid}/allocations`)).body.allocations, {
          [next.uuid]: { resources: { CUSTOM_HELD: 1 } },
        });
        // releasing through the bare-metal API still works
        assert.equal((await api.delete(`/v1/allocations/${owned.uuid}`)).status, 204);
        assert.deepEqual((await placement.get(`/resource_providers/${taken.uuid}/allocations`)).body.allocations, {});
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
