// Allocations, the whole spec, on both databases and both backends: create (asynchronous),
// candidate filtering and its error wording, name preference, owners, 409s, PATCH, every path
// of deallocation, backfilling, the node's allocation, lists.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type HttpResponse, PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { allocationSettled, availableNode, eventually, fault, IronicClient, nodeSettled, nodeUsage } from './helpers.js';

const BACKENDS = ['database', 'placement'] as const;

for (const dialect of DIALECTS) {
  for (const backend of BACKENDS) {
    describe(`bare-metal allocations (${dialect}, ${backend} backend)`, () => {
      let server: TestServer;
      let api: IronicClient;
      let placement: PlacementClient;
      before(async () => {
        server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20, baremetalBackend: backend });
        api = new IronicClient(`${server.url}/baremetal`);
        placement = new PlacementClient(server.placementUrl);
      });
      after(() => server.close());

      const usage = (nodeUuid: string) => nodeUsage(placement, backend, nodeUuid);

      test('an allocation with a free matching node: answered as Ironic answers it (allocating, no node), and active on the node at the next GET', async () => {
        const node = await availableNode(api, { name: 'a-n1', resource_class: 'gold' }, ['CUSTOM_FAST', 'HW_CPU_X86_VMX']);
        const res = await api.post('/v1/allocations', { resource_class: 'gold', traits: ['CUSTOM_FAST'], name: 'a1', extra: { k: 'v' } });
        assert.equal(res.status, 201, res.text);
        // the allocation as created, whatever happened since: Ironic's answer
        assert.equal(res.body.state, 'allocating');
        assert.equal(res.body.node_uuid, null);
        assert.equal(res.body.last_error, null);
        assert.equal(res.body.updated_at, null);
        assert.equal(res.headers.get('preference-applied'), null);
        assert.deepEqual(res.body.traits, ['CUSTOM_FAST']);
        assert.equal(res.headers.get('location'), `${server.url}/baremetal/v1/allocations/${res.body.uuid}`);
        // reserved in the request's own transaction: the very next read shows it done
        const done = (await api.get(`/v1/allocations/${res.body.uuid}`)).body;
        assert.notEqual(done.updated_at, null);
        assert.equal(done.created_at, res.body.created_at);
        assert.equal(done.state, 'active', done.last_error);
        assert.equal(done.node_uuid, node.uuid);
        assert.deepEqual(done.traits, ['CUSTOM_FAST']);
        assert.deepEqual(done.extra, { k: 'v' });
        const n = (await api.get(`/v1/nodes/${node.uuid}`)).body;
        assert.equal(n.instance_uuid, done.uuid);
        assert.equal(n.allocation_uuid, done.uuid);
        assert.deepEqual(n.instance_info, { traits: ['CUSTOM_FAST'] });
        assert.equal(n.reservation, null);
        const viaNode = await api.get(`/v1/nodes/${node.uuid}/allocation?fields=uuid,state`);
        assert.deepEqual(Object.keys(viaNode.body), ['uuid', 'state', 'links']);
        assert.equal(viaNode.body.uuid, done.uuid);
        if (backend === 'placement') {
          assert.deepEqual(await usage(node.uuid), { CUSTOM_GOLD: 1 });
          const consumer = await placement.get(`/allocations/${done.uuid}`);
          assert.deepEqual(consumer.body.allocations[node.uuid].resources, { CUSTOM_GOLD: 1 });
        }
        // deallocate (the node is available, not deployed): everything released in one go
        assert.equal((await api.delete('/v1/allocations/a1')).status, 204);
        const freed = (await api.get(`/v1/nodes/${node.uuid}`)).body;
        assert.equal(freed.instance_uuid, null);
        assert.equal(freed.allocation_uuid, null);
        assert.equal((await api.get('/v1/allocations/a1')).status, 404);
        if (backend === 'placement') assert.deepEqual(await usage(node.uuid), { CUSTOM_GOLD: 0 });
      });

      test('no candidate: each filter has its own last_error, worded as Ironic words it', async () => {
        const expectError = async (body: Record<string, unknown>, reason: string) => {
          const created = await api.post('/v1/allocations', body);
          assert.equal(created.status, 201, created.text);
          const done = await allocationSettled(api, created.body.uuid);
          assert.equal(done.state, 'error');
          assert.equal(done.node_uuid, null);
          assert.equal(done.last_error, `Failed to process allocation ${done.uuid}: ${reason}.`);
        };
        await expectError({ resource_class: 'nothing-here' }, 'no available nodes match the resource class nothing-here');
        const node = await availableNode(api, { name: 'f-n1', resource_class: 'silver' }, ['CUSTOM_A']);
        await expectError({ resource_class: 'silver', traits: ['CUSTOM_B', 'CUSTOM_A'] }, 'no suitable nodes have the requested traits CUSTOM_A, CUSTOM_B');
        const other = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'f-n2', resource_class: 'silver' })).body;
        await expectError(
          { resource_class: 'silver', candidate_nodes: ['f-n2'] },
          'none of the requested nodes are available and match the resource class silver',
        );
        // a node without a power state, or in maintenance, is never a candidate
        await api.put(`/v1/nodes/${other.uuid}/states/provision`, { target: 'manage' });
        await nodeSettled(api, other.uuid);
        await api.put(`/v1/nodes/${other.uuid}/states/provision`, { target: 'provide' });
        assert.equal((await nodeSettled(api, other.uuid)).power_state, null);
        await api.put(`/v1/nodes/${node.uuid}/maintenance`, { reason: 'x' });
        await expectError({ resource_class: 'silver' }, 'no available nodes match the resource class silver');
        await api.delete(`/v1/nodes/${node.uuid}/maintenance`);
        // an owner only gets nodes it owns or leases
        await api.patch(`/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/lessee', value: 'tenant-l' }]);
        await expectError({ resource_class: 'silver', owner: 'stranger' }, 'no available nodes match the resource class silver');
        const leased = await api.post('/v1/allocations', { resource_class: 'silver', owner: 'tenant-l' });
        const done = await allocationSettled(api, leased.body.uuid);
        assert.equal(done.state, 'active');
        assert.equal(done.owner, 'tenant-l');
        assert.equal((await api.delete(`/v1/allocations/${done.uuid}`)).status, 204);
      });

      test('candidate_nodes by name or uuid are kept as uuids; the node named like the allocation is tried first', async () => {
        const nodes = [];
        for (let i = 0; i < 5; i++) nodes.push(await availableNode(api, { name: `pick-${i}`, resource_class: 'pick' }));
        const res = await api.post('/v1/allocations', { resource_class: 'pick', candidate_nodes: ['pick-1', nodes[2].uuid] });
        assert.deepEqual(res.body.candidate_nodes, [nodes[1].uuid, nodes[2].uuid]);
        const done = await allocationSettled(api, res.body.uuid);
        assert.ok([nodes[1].uuid, nodes[2].uuid].includes(done.node_uuid));
        await api.delete(`/v1/allocations/${done.uuid}`);
        for (const i of [3, 0, 4]) {
          const named = await api.post('/v1/allocations', { resource_class: 'pick', name: `pick-${i}` });
          assert.equal((await allocationSettled(api, named.body.uuid)).node_uuid, nodes[i].uuid);
        }
      });

      test('409s: duplicate name, duplicate uuid, a uuid used as an instance_uuid', async () => {
        const first = await api.post('/v1/allocations', { resource_class: 'dup', name: 'dup-1' });
        const byName = await api.post('/v1/allocations', { resource_class: 'dup', name: 'dup-1' });
        assert.equal(byName.status, 409);
        assert.equal(fault(byName).faultstring, 'An allocation with name dup-1 already exists.');
        const byUuid = await api.post('/v1/allocations', { resource_class: 'dup', uuid: first.body.uuid.toUpperCase() });
        assert.equal(byUuid.status, 409);
        assert.equal(fault(byUuid).faultstring, `An allocation with UUID ${first.body.uuid} already exists.`);
        const instance = '22222222-3333-4444-5555-666666666666';
        await api.post('/v1/nodes', { driver: 'fake-hardware', instance_uuid: instance });
        assert.equal((await api.post('/v1/allocations', { resource_class: 'dup', uuid: instance })).status, 409);
        // owner needs 1.60 and backfilling 1.58
        assert.equal((await api.at('1.59').post('/v1/allocations', { resource_class: 'dup', owner: 'o' })).status, 406);
        const early = await api.at('1.57').post('/v1/allocations', { resource_class: 'dup', node: 'x' });
        assert.equal(early.status, 400);
        assert.equal(fault(early).faultstring, 'Cannot set node when creating an allocation in this API version');
      });

      // With a node free, PostgreSQL first tries the allocation as one statement, which a clash
      // fails: the general path must still word the 409, and the free node must stay free.
      test('409s with a free node at hand: worded the same, and the node stays free', async () => {
        const first = await api.post('/v1/allocations', { resource_class: 'clash', name: 'clash-1' });
        assert.equal(first.status, 201, first.text);
        const spare = await availableNode(api, { name: 'clash-n1', resource_class: 'clash' });
        const byName = await api.post('/v1/allocations', { resource_class: 'clash', name: 'clash-1' });
        assert.equal(byName.status, 409);
        assert.equal(fault(byName).faultstring, 'An allocation with name clash-1 already exists.');
        const byUuid = await api.post('/v1/allocations', { resource_class: 'clash', uuid: first.body.uuid });
        assert.equal(byUuid.status, 409);
        assert.equal(fault(byUuid).faultstring, `An allocation with UUID ${first.body.uuid} already exists.`);
        const instance = '55555555-6666-7777-8888-999999999999';
        await api.post('/v1/nodes', { driver: 'fake-hardware', instance_uuid: instance });
        const asInstance = await api.post('/v1/allocations', { resource_class: 'clash', uuid: instance });
        assert.equal(asInstance.status, 409);
        assert.equal(fault(asInstance).faultstring, `Instance ${instance} is already associated with a node; an allocation cannot have that UUID.`);
        const n = (await api.get(`/v1/nodes/${spare.uuid}`)).body;
        assert.equal(n.instance_uuid, null);
        assert.equal(n.allocation_uuid, null);
        assert.deepEqual(n.instance_info, {});
        assert.deepEqual(await usage(spare.uuid), backend === 'placement' ? { CUSTOM_CLASH: 0 } : null);
        assert.equal((await api.get('/v1/allocations?resource_class=clash')).body.allocations.length, 1);
        // and the next allocation gets it, in its own request (the next GET shows it)
        const next = await api.post('/v1/allocations', { resource_class: 'clash', traits: [] });
        assert.equal(next.body.state, 'allocating');
        const taken = (await api.get(`/v1/allocations/${next.body.uuid}`)).body;
        assert.equal(taken.state, 'active', taken.last_error);
        assert.equal(taken.node_uuid, spare.uuid);
        assert.equal((await api.delete(`/v1/allocations/${next.body.uuid}`)).status, 204);
      });

      test('PATCH (1.57) changes name and extra only', async () => {
        const a = (await api.post('/v1/allocations', { resource_class: 'patchy', name: 'pa' })).body;
        const res = await api.patch('/v1/allocations/pa', [
          { op: 'add', path: '/extra/foo', value: 'bar' },
          { op: 'replace', path: '/name', value: 'pa-2' },
        ]);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.name, 'pa-2');
        assert.deepEqual(res.body.extra, { foo: 'bar' });
        assert.notEqual(res.body.updated_at, null);
        assert.equal((await api.patch(`/v1/allocations/${a.uuid}`, [{ op: 'remove', path: '/name' }])).body.name, null);
        const cases: Array<[unknown, number, RegExp]> = [
          [[{ op: 'add', path: '/resource_class', value: 'x' }], 400, /^Cannot patch \/resource_class\. Only the following can be updated: name, extra$/],
          [[{ op: 'add', path: '/owner', value: 'x' }], 400, /Cannot patch \/owner/],
          [[{ op: 'add', path: '/name', value: 'bad name!' }], 400, /^Cannot update allocation with invalid name 'bad name!'$/],
          [[{ op: 'add', path: '/name', value: 'dup-1' }], 409, /^An allocation with name dup-1 already exists\.$/],
          [[{ op: 'add', path: '/extra', value: 3 }], 400, /Schema error/],
        ];
        for (const [ops, status, message] of cases) {
          const r = await api.patch(`/v1/allocations/${a.uuid}`, ops);
          assert.equal(r.status, status, r.text);
          assert.match(fault(r).faultstring!, message);
        }
        assert.equal((await api.patch('/v1/allocations/nope', [])).status, 404);
      });

      test('deallocation: refused while deployed, released by undeploy, by removing instance_uuid, by deleting a node in maintenance', async () => {
        const node = await availableNode(api, { name: 'dl-1', resource_class: 'dealloc' });
        let a = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'dealloc' })).body.uuid);
        await api.put('/v1/nodes/dl-1/states/provision', { target: 'active' });
        await nodeSettled(api, node.uuid);
        const refused = await api.delete(`/v1/allocations/${a.uuid}`);
        assert.equal(refused.status, 409);
        assert.equal(
          fault(refused).faultstring,
          `Cannot remove allocation ${a.uuid} for node ${node.uuid}, because the node is active (and maintenance mode is off)`,
        );
        assert.equal((await api.delete('/v1/nodes/dl-1/allocation')).status, 409);
        const unset = await api.patch('/v1/nodes/dl-1', [{ op: 'remove', path: '/instance_uuid' }]);
        assert.equal(unset.status, 409);
        assert.match(fault(unset).faultstring!, /with an allocation can not have instance_uuid removed unless it is in one of allowed/);
        // tear-down releases it
        await api.put('/v1/nodes/dl-1/states/provision', { target: 'deleted' });
        const torn = await nodeSettled(api, node.uuid);
        assert.equal(torn.provision_state, 'available');
        assert.equal(torn.allocation_uuid, null);
        assert.equal(torn.instance_uuid, null);
        assert.equal((await api.get(`/v1/allocations/${a.uuid}`)).status, 404);
        if (backend === 'placement') assert.deepEqual(await usage(node.uuid), { CUSTOM_DEALLOC: 0 });

        // removing instance_uuid of an available node deletes its allocation
        a = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'dealloc' })).body.uuid);
        const removed = await api.patch('/v1/nodes/dl-1', [{ op: 'remove', path: '/instance_uuid' }]);
        assert.equal(removed.status, 200, removed.text);
        assert.equal(removed.body.allocation_uuid, null);
        assert.equal((await api.get(`/v1/allocations/${a.uuid}`)).status, 404);

        // in maintenance an allocation of a deployed node may go, and a node with one may be deleted
        a = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'dealloc' })).body.uuid);
        assert.equal(a.state, 'active');
        await api.put('/v1/nodes/dl-1/states/provision', { target: 'active' });
        await nodeSettled(api, node.uuid);
        await api.put('/v1/nodes/dl-1/maintenance', { reason: 'retire it' });
        assert.equal((await api.delete('/v1/nodes/dl-1')).status, 204);
        assert.equal((await api.get(`/v1/allocations/${a.uuid}`)).status, 404);
        if (backend === 'placement') assert.equal((await placement.get(`/resource_providers/${node.uuid}`)).status, 404);

        // the node's allocation can be deleted through the node
        const n2 = await availableNode(api, { name: 'dl-2', resource_class: 'dealloc' });
        a = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'dealloc' })).body.uuid);
        assert.equal(a.node_uuid, n2.uuid);
        assert.equal((await api.delete('/v1/nodes/dl-2/allocation')).status, 204);
        assert.equal((await api.get('/v1/nodes/dl-2')).body.allocation_uuid, null);
      });

      test('backfilling (1.58): a deployed node gets its allocation at once; a mismatch leaves nothing behind', async () => {
        const node = await availableNode(api, { name: 'bf-1', resource_class: 'bf' }, ['CUSTOM_BF']);
        const instance = '33333333-4444-5555-6666-777777777777';
        await api.patch('/v1/nodes/bf-1', [{ op: 'add', path: '/instance_uuid', value: instance }]);
        // not deployed yet: 409, nothing created
        const early = await api.post('/v1/allocations', { node: 'bf-1' });
        assert.equal(early.status, 409);
        assert.match(fault(early).faultstring!, /Node must be in the "active" state, but the current state is "available"/);
        await api.put('/v1/nodes/bf-1/states/provision', { target: 'active' });
        await nodeSettled(api, node.uuid);
        for (const [body, status, message] of [
          [{ node: 'bf-1', resource_class: 'other' }, 400, /Resource class bf does not match the requested resource class other/],
          [{ node: 'bf-1', traits: ['CUSTOM_NOPE'] }, 400, /does not match the requested traits/],
          [{ node: 'bf-1', candidate_nodes: ['pick-0'] }, 400, /Candidate nodes must be empty or contain the target node/],
          [{ node: 'bf-1', uuid: '44444444-5555-6666-7777-888888888888' }, 409, /is associated with instance/],
          [{ node: 'nope' }, 400, /^Node nope could not be found\.$/],
        ] as const) {
          const res = await api.post('/v1/allocations', body);
          assert.equal(res.status, status, res.text);
          assert.match(fault(res).faultstring!, message);
        }
        assert.deepEqual((await api.get(`/v1/allocations?node=bf-1`)).body.allocations, []);
        const res = await api.post('/v1/allocations', { node: 'bf-1', name: 'bf-alloc', traits: ['CUSTOM_BF'] });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.state, 'active');
        assert.equal(res.body.uuid, instance);
        assert.equal(res.body.resource_class, 'bf');
        assert.equal(res.body.node_uuid, node.uuid);
        assert.equal((await api.get('/v1/nodes/bf-1')).body.allocation_uuid, instance);
        if (backend === 'placement') assert.deepEqual(await usage(node.uuid), { CUSTOM_BF: 1 });
        assert.equal((await api.post('/v1/allocations', { node: 'bf-1' })).status, 409);
      });

      test('lists: filters (combined too), fields, paging', async () => {
        const all = (await api.get('/v1/allocations')).body.allocations;
        assert.ok(all.length >= 5);
        const errors = (await api.get('/v1/allocations?state=error')).body.allocations;
        assert.ok(errors.length > 0 && errors.every((a: { state: string }) => a.state === 'error'));
        const bf = await api.get('/v1/allocations?node=bf-1&state=active&fields=uuid,node_uuid');
        assert.equal(bf.status, 200);
        assert.equal(bf.body.allocations.length, 1);
        assert.deepEqual(Object.keys(bf.body.allocations[0]), ['uuid', 'links', 'node_uuid']);
        assert.deepEqual((await api.get('/v1/allocations?node=bf-1&state=error')).body.allocations, []);
        assert.equal(
          (await api.get('/v1/allocations?resource_class=pick')).body.allocations.every((a: { resource_class: string }) => a.resource_class === 'pick'),
          true,
        );
        assert.equal((await api.get('/v1/allocations?owner=tenant-l')).body.allocations.length, 0);
        const seen: string[] = [];
        let url: string | undefined = '/v1/allocations?limit=2&sort_key=created_at&sort_dir=desc';
        while (url) {
          const page: HttpResponse = await api.get(url);
          seen.push(...page.body.allocations.map((a: { uuid: string }) => a.uuid));
          url = page.body.next?.slice(`${server.url}/baremetal`.length);
        }
        assert.equal(new Set(seen).size, all.length);
        assert.equal(seen.length, all.length);
      });
    });
  }
}

for (const dialect of DIALECTS) {
  describe(`bare-metal allocations in flight (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    before(async () => {
      // allocations wait 3 s in `allocating` before a node is picked
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20, allocationDelay: 3000 });
      api = new IronicClient(`${server.url}/baremetal`);
    });
    after(() => server.close());

    test('deleting an allocation that is still allocating works, and its node stays free', async () => {
      const node = await availableNode(api, { name: 'fl-1', resource_class: 'flight' });
      const created = await api.post('/v1/allocations', { resource_class: 'flight' });
      assert.equal((await api.get(`/v1/allocations/${created.body.uuid}`)).body.state, 'allocating');
      assert.equal((await api.delete(`/v1/allocations/${created.body.uuid}`)).status, 204);
      assert.equal((await api.get(`/v1/allocations/${created.body.uuid}`)).status, 404);
      // a second one, allowed to finish, gets the node the first never took
      const second = await api.post('/v1/allocations', { resource_class: 'flight' });
      const done = await allocationSettled(api, second.body.uuid);
      assert.equal(done.node_uuid, node.uuid);
      const n = await eventually(
        async () => (await api.get(`/v1/nodes/${node.uuid}`)).body,
        (x) => x.reservation === null,
        'node lock released',
      );
      assert.equal(n.instance_uuid, done.uuid);
    });
  });
}
