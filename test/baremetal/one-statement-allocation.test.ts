// On PostgreSQL a new allocation whose node is free now is ONE statement
// (src/baremetal/store/one-statement-allocation.ts), with the placement backend's claim in it.
// These tests run that statement directly, in a transaction of its own as the allocation service
// does, on a running server's database, with each backend's claim, and look at the outcome over
// HTTP: with a free node it commits the allocation `active` on the node it reserves, and Placement's
// allocation of it (so the fast path is really taken, not silently stepped aside every time); with
// no free node, a clash, or a claim Placement refuses, it raises and leaves nothing behind. The HTTP
// behaviour of the same allocations, on both databases and both backends, is in
// allocations.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { BaremetalContext } from '../../src/baremetal/context.js';
import { type AllocationValues, allocateOnFreeNode } from '../../src/baremetal/store/one-statement-allocation.js';
import { transaction } from '../../src/db/transaction.js';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { availableNode, IronicClient, nodeUsage } from './helpers.js';

for (const backend of ['database', 'placement'] as const)
  describe(`one-statement bare-metal allocation (postgres, ${backend} backend)`, () => {
    let server: TestServer;
    let api: IronicClient;
    let placement: PlacementClient;
    let ctx: BaremetalContext;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl('postgres'), transitionTime: 20, baremetalBackend: backend });
      api = new IronicClient(`${server.url}/baremetal`);
      placement = new PlacementClient(server.placementUrl);
      ctx = server.running.context.baremetal;
    });
    after(() => server.close());

    const usage = (nodeUuid: string) => nodeUsage(placement, backend, nodeUuid);

    const values = (resourceClass: string, extra: Partial<AllocationValues> = {}): AllocationValues => ({
      uuid: randomUUID(),
      name: null,
      resource_class: resourceClass,
      conductor_affinity: ctx.conductorId,
      candidate_nodes: '[]',
      extra: '{}',
      owner: null,
      held_by: null,
      now: new Date().toISOString(),
      ...extra,
    });
    /** Run the statement as the service does, in its own transaction: its node's uuid, or null when it raised. */
    async function inOneStatement(v: AllocationValues, traits: string[] = []): Promise<string | null> {
      const wanted = { resourceClass: v.resource_class, candidates: JSON.parse(v.candidate_nodes) as string[], owner: v.owner, traits, name: v.name };
      const inStatement = await ctx.backend.claimInStatement(ctx.database, v);
      assert.ok(inStatement, 'the backend claims in the statement');
      assert.equal(inStatement.claim !== undefined, backend === 'placement');
      try {
        const { node } = await transaction(ctx.database, (tx) => allocateOnFreeNode(tx, v, wanted, inStatement.claim), { oneStatement: true, maxAttempts: 1 });
        return node.uuid;
      } catch {
        return null;
      }
    }

    test('a free node: the allocation is written active on it, and the node reserved for it', async () => {
      const node = await availableNode(api, { name: 'os-1', resource_class: 'one-a' }, ['CUSTOM_A', 'CUSTOM_B']);
      const candidates = async () => (await placement.get('/allocation_candidates?resources=CUSTOM_ONE_A:1')).body.provider_summaries;
      if (backend === 'placement') assert.deepEqual(Object.keys(await candidates()), [node.uuid]);
      const v = values('one-a');
      assert.equal(await inOneStatement(v, ['CUSTOM_A']), node.uuid);

      const allocation = (await api.get(`/v1/allocations/${v.uuid}`)).body;
      assert.equal(allocation.state, 'active');
      assert.equal(allocation.node_uuid, node.uuid);
      assert.equal(allocation.last_error, null);
      assert.deepEqual(allocation.traits, ['CUSTOM_A']);
      const reserved = (await api.get(`/v1/nodes/${node.uuid}`)).body;
      assert.equal(reserved.instance_uuid, v.uuid);
      assert.equal(reserved.allocation_uuid, v.uuid);
      assert.deepEqual(reserved.instance_info.traits, ['CUSTOM_A']);
      if (backend === 'placement') {
        assert.deepEqual(await usage(node.uuid), { CUSTOM_ONE_A: 1 });
        const consumer = (await placement.get(`/allocations/${v.uuid}`)).body;
        assert.deepEqual(consumer.allocations[node.uuid].resources, { CUSTOM_ONE_A: 1 });
        assert.equal(consumer.project_id, 'allot-baremetal');
        assert.deepEqual(await candidates(), {}, 'the node is no candidate any more');
      }
    });

    test('an owner’s allocation: Placement’s consumer is in the owner’s project', async () => {
      const node = await availableNode(api, { name: 'os-owned', resource_class: 'one-f', owner: 'p-1' });
      const v = values('one-f', { owner: 'p-1' });
      assert.equal(await inOneStatement(v), node.uuid);
      if (backend === 'placement') assert.equal((await placement.get(`/allocations/${v.uuid}`)).body.project_id, 'p-1');
    });

    test('a node of the allocation’s name is taken first', async () => {
      await availableNode(api, { name: 'os-other', resource_class: 'one-b' });
      const named = await availableNode(api, { name: 'os-named', resource_class: 'one-b' });
      assert.equal(await inOneStatement(values('one-b', { name: 'os-named' })), named.uuid);
    });

    test('no free node: it raises and keeps nothing', async () => {
      const node = await availableNode(api, { name: 'os-2', resource_class: 'one-c' });
      const first = values('one-c');
      assert.equal(await inOneStatement(first), node.uuid);
      const second = values('one-c');
      assert.equal(await inOneStatement(second), null);
      assert.equal((await api.get(`/v1/allocations/${second.uuid}`)).status, 404);
      assert.equal((await api.get(`/v1/nodes/${node.uuid}`)).body.allocation_uuid, first.uuid);
      assert.deepEqual(await usage(node.uuid), backend === 'placement' ? { CUSTOM_ONE_C: 1 } : null);
    });

    test('a clash (the uuid or the name of an allocation that exists): it raises, and the free node stays free', async () => {
      const taken = await availableNode(api, { name: 'os-3', resource_class: 'one-d' });
      const free = await availableNode(api, { name: 'os-4', resource_class: 'one-e' });
      const first = values('one-d', { name: 'os-alloc' });
      assert.equal(await inOneStatement(first), taken.uuid);

      assert.equal(await inOneStatement(values('one-e', { uuid: first.uuid })), null);
      assert.equal(await inOneStatement(values('one-e', { name: 'os-alloc' })), null);
      const node = (await api.get(`/v1/nodes/${free.uuid}`)).body;
      assert.equal(node.instance_uuid, null);
      assert.equal(node.allocation_uuid, null);
      assert.deepEqual(await usage(free.uuid), backend === 'placement' ? { CUSTOM_ONE_E: 0 } : null);
    });

    if (backend === 'placement') {
      test('a claim Placement refuses (a consumer of the allocation’s uuid exists): it raises, and the node stays free', async () => {
        const node = await availableNode(api, { name: 'os-5', resource_class: 'one-g' });
        const v = values('one-g');
        const rp = (await placement.post('/resource_providers', { name: 'os-other-provider' })).body.uuid;
        const inventory = { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } };
        assert.equal((await placement.put(`/resource_providers/${rp}/inventories`, inventory)).status, 200);
        const held = { allocations: { [rp]: { resources: { VCPU: 1 } } }, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' };
        const put = await placement.put(`/allocations/${v.uuid}`, held);
        assert.equal(put.status, 204, put.text);

        assert.equal(await inOneStatement(v), null);
        assert.equal((await api.get(`/v1/allocations/${v.uuid}`)).status, 404);
        const n = (await api.get(`/v1/nodes/${node.uuid}`)).body;
        assert.equal(n.instance_uuid, null);
        assert.equal(n.allocation_uuid, null);
        assert.deepEqual(await usage(node.uuid), { CUSTOM_ONE_G: 0 });
        assert.deepEqual((await placement.get(`/allocations/${v.uuid}`)).body.allocations, { [rp]: { resources: { VCPU: 1 }, generation: 2 } });
      });
    }
  });
