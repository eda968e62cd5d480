// The typed identifier client against a real allot on SQLite and PostgreSQL: pools, allocations
// (for an owner, batches, imports, reservations with If-Match), specs, service instances (and
// those reserving a node and capacity in one request), the outbox, pagination, and RFC 9457
// problems parsed into AllotApiError.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { AllotApiError, AllotClient, type IdsClient, type ids as T, retryOnConflict } from '../../src/client/index.js';
import { DIALECTS } from '../helpers/databases.js';
import { serverFor } from '../helpers/server.js';
import { BW, GBIT, seedReservationCloud, tenantServerSpec } from '../ids/reservation-cloud.js';

for (const dialect of DIALECTS) {
  describe(`identifier client (${dialect})`, () => {
    let allot: AllotClient;
    let ids: IdsClient;
    serverFor(dialect, (s) => {
      allot = new AllotClient({ url: s.url, token: 'admin' });
      ids = allot.ids;
    });

    test('pools and allocations: create, allocate (idempotent), batch, reserve and confirm, release, import', async () => {
      const pool = await ids.createPool({ name: 'vlan', kind: 'integer', ranges: ['1-4094'], excluded: [1], static: ['2-9'] });
      assert.equal(pool.utilization.total, 4093);

      const a = await ids.allocate('vlan', { owner: 'svc-1', purpose: 'a' });
      assert.deepEqual([a.value, a.created], [10, true]);
      const again = await ids.allocate('vlan', { owner: 'svc-1', purpose: 'a' });
      assert.deepEqual([again.id, again.created], [a.id, false]);

      const batch = await ids.allocateBatch([
        { pool: 'vlan', owner: 'svc-2', purpose: 'x' },
        { pool: 'vlan', owner: 'svc-2', purpose: 'y', value: 5 },
      ]);
      assert.deepEqual(
        batch.allocations.map((x) => x.value),
        [11, 5],
      );

      const reserved = await ids.allocate('vlan', { owner: 'svc-3', ttl_seconds: 60 });
      assert.equal(reserved.state, 'reserved');
      const confirmed = await ids.updateAllocation(reserved.id, { state: 'allocated' }, { ifMatch: reserved.version });
      assert.equal(confirmed.state, 'allocated');

      assert.equal((await ids.listAllAllocations({ pool: 'vlan' })).length, 4);
      await ids.releaseAllocation(a.id);
      assert.equal((await ids.getPool('vlan')).utilization.allocations, 3);
      assert.equal((await ids.listAllFreeRanges('vlan', { band: 'static' }))[0]!.band, 'static');

      const outcome = await ids.importValues(
        'vlan',
        [
          { value: 100, owner: 'old-1' },
          { value: 5, owner: 'someone-else' },
        ],
        'skip',
      );
      assert.deepEqual([outcome.imported, outcome.conflicts.length, outcome.conflicts[0]!.code], [1, 1, 'ids.value_in_use']);

      const updated = await ids.updatePool('vlan', { description: 'core VLANs' }, { ifMatch: (await ids.getPool('vlan')).generation });
      assert.equal(updated.description, 'core VLANs');

      // by value: who holds 100, and releasing it by pool and value (a stale If-Match refused first)
      const [holder] = await ids.allocationsHolding('vlan', 100);
      assert.equal(holder!.owner, 'old-1');
      assert.deepEqual(await ids.allocationsHolding('vlan', 101), []);
      await assert.rejects(ids.releaseAllocationByValue('vlan', 100, { ifMatch: holder!.version + 1 }), (e: AllotApiError) => e.status === 412);
      await ids.releaseAllocationByValue('vlan', 100, { ifMatch: holder!.version });
      assert.deepEqual(await ids.allocationsHolding('vlan', 100), []);
      await assert.rejects(ids.releaseAllocationByValue('vlan', 100), (e: AllotApiError) => e.status === 404 && e.code === 'ids.not_found');
    });

    test('pagination follows next_cursor', async () => {
      for (const n of ['p-a', 'p-b', 'p-c', 'p-d', 'p-e']) await ids.createPool({ name: n, kind: 'integer', ranges: ['1-10'] });
      const first = await ids.listPools({ limit: 2 });
      assert.equal(first.items.length, 2);
      assert.ok(first.next_cursor);
      const names = (await ids.listAll<T.PoolPage>('/pools', { limit: 2 })).map((p) => p.name);
      assert.deepEqual(
        names.filter((n) => n.startsWith('p-')),
        ['p-a', 'p-b', 'p-c', 'p-d', 'p-e'],
      );
    });

    test('specs and service instances through their lifecycle; the outbox and inventories', async () => {
      await ids.createPool({ name: 'vni', kind: 'integer', ranges: ['5000-5999'] });
      const spec = await ids.createSpec({ name: 'vni-only', attributes: { vni: { from: 'pool', pool: 'vni' } } });
      assert.equal(spec.name, 'vni-only');
      assert.equal((await ids.listAllSpecs()).length, 1);
      const inst = await ids.createInstance({ allocation_spec: 'vni-only', attributes: { name: 'wire-1' } });
      assert.equal(inst.state, 'start');
      const validated = await ids.validateInstance(inst.id, { ifMatch: inst.version });
      assert.equal(validated.candidate_attributes!.vni, 5000);
      const up = await ids.promoteInstance(inst.id);
      assert.equal(up.state, 'up');
      const changed = await ids.updateInstance(inst.id, { name: 'wire-1b' });
      assert.equal(changed.state, 'update');
      assert.equal((await ids.listAllInstances({ state: 'update' })).length, 1);
      const terminated = await ids.terminateInstance(inst.id);
      assert.equal(terminated.state, 'terminated');
      assert.deepEqual(await ids.listAllOutbox(), []);
      assert.deepEqual(await ids.listInventories(), []);
      await ids.createSpec({ name: 'unused', attributes: { vni: { from: 'pool', pool: 'vni' } } });
      await ids.deleteSpec('unused');
      assert.deepEqual(
        (await ids.listAllSpecs()).map((s) => s.name),
        ['vni-only'],
      );
      assert.equal(((await ids.openapi()) as { openapi: string }).openapi, '3.1.0');
    });

    test('one request reserves a node, bandwidth on its NIC and pool values; the typed instance lists each holding with its link', async () => {
      const cloud = await seedReservationCloud(allot, { nodes: ['client-gold-1', 'client-gold-2'], resourceClass: 'client-gold', owner: 'p-client' });
      await ids.createPool({ name: 'client-vlan', kind: 'integer', ranges: ['200-209'] });
      await ids.createPool({ name: 'client-addr', kind: 'address', ranges: ['10.1.0.0/28'] });
      const spec = await ids.createSpec({
        ...tenantServerSpec('client-tenant', 'client-gold', { vlan: 'client-vlan', address: 'client-addr' }),
        project_id: 'p-client',
      });
      assert.equal(spec.project_id, 'p-client');
      assert.deepEqual(spec.attributes.uplink, { from: 'capacity', resources: { [BW]: 10 * GBIT }, in_tree_of: 'server' });

      const id = randomUUID();
      const request: T.InstanceCreate = { id, allocation_spec: 'client-tenant', attributes: {}, project_id: 'p-client', validate: true, promote: true };
      const up = await ids.createInstance(request);
      assert.deepEqual([up.state, up.project_id], ['up', 'p-client']);
      const node = up.holdings.find((h) => h.source === 'node');
      const capacity = up.holdings.find((h) => h.source === 'capacity');
      const vlan = up.holdings.find((h) => h.source === 'pool' && h.attribute === 'vlan');
      assert.ok(node && capacity && vlan, JSON.stringify(up.holdings));
      assert.deepEqual(up.active_attributes!.server, node.value);
      assert.ok([...cloud.nodes.values()].includes(node.value.node));
      // the node: a bare-metal allocation named for the instance and attribute, owned by its project
      assert.equal(node.href, `/baremetal/v1/allocations/${node.value.allocation}`);
      const held = await allot.baremetal.getAllocation(node.value.allocation);
      assert.deepEqual(
        [held.node_uuid, held.name, held.owner, held.extra],
        [node.value.node, `service-instance.${id}.server`, 'p-client', { allot_service_instance: id, allot_attribute: 'server' }],
      );
      // the bandwidth: the instance is the Placement consumer, on the NIC under that node
      assert.equal(capacity.value.consumer, id);
      assert.deepEqual(capacity.value.allocations, { [cloud.nics.get(node.value.node)!]: { resources: { [BW]: 10 * GBIT } } });
      const placed = (await allot.placement.getAllocations(id)).allocations;
      assert.deepEqual(Object.fromEntries(Object.entries(placed).map(([provider, a]) => [provider, { resources: a.resources }])), capacity.value.allocations);
      assert.equal(capacity.href, `/placement/allocations/${id}`);
      // each link, made a full URL by the client, is where its API shows the holding (at a microversion that has it)
      const versions = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'x-openstack-ironic-api-version': '1.82' };
      for (const h of up.holdings) {
        const res = await fetch(ids.holdingUrl(h.href!), { headers: versions });
        assert.equal(res.status, 200, h.href!);
      }
      const listed = await ids.listAllInstances({ state: 'up' });
      assert.deepEqual(listed.find((i) => i.id === id)?.holdings, up.holdings);
      // the same request again: the same instance, the same holdings
      assert.deepEqual((await ids.createInstance(request)).holdings, up.holdings);

      // Ironic's rule releases the node (instance_uuid removed): a typed forced release says so
      await allot.baremetal.updateNode(node.value.node, [{ op: 'remove', path: '/instance_uuid' }]);
      const lost = await ids.getInstance(id);
      const release = lost.forced_releases[0];
      assert.ok(release && release.source === 'node', JSON.stringify(lost.forced_releases));
      assert.deepEqual([release.attribute, release.value, release.sets, typeof release.reason], ['server', node.value, ['active'], 'string']);
      assert.equal(
        lost.holdings.some((h) => h.source === 'node'),
        false,
      );
      const gone = await ids.terminateInstance(id);
      assert.deepEqual([gone.state, gone.holdings, gone.terminated_at === null], ['terminated', [], false]);
    });

    test('RFC 9457 problems become AllotApiErrors with code, detail and request id', async () => {
      await ids.createPool({ name: 'small', kind: 'integer', ranges: ['1-2'] });
      await ids.allocate('small', { owner: 'x', value: 1 });
      const taken = await ids.allocate('small', { owner: 'y', value: 1 }).catch((e: unknown) => e);
      assert.ok(taken instanceof AllotApiError);
      assert.deepEqual([taken.status, taken.code, taken.api], [409, 'ids.value_in_use', 'ids']);
      assert.match(taken.message, /held by owner "x"/);
      assert.ok(taken.requestId);
      assert.equal((taken.body as { held_by: { owner: string } }).held_by.owner, 'x');

      const invalid = await ids.createPool({ name: 'bad', kind: 'integer', ranges: [] }).catch((e: unknown) => e);
      assert.ok(invalid instanceof AllotApiError);
      assert.equal(invalid.code, 'ids.invalid_request');
      assert.match(invalid.message, /\/ranges/, 'the pointer of the validation error is in the message');

      const pool = await ids.getPool('small');
      await ids.updatePool('small', { description: 'moved on' });
      const stale = await ids.updatePool('small', { description: 'late' }, { ifMatch: pool.generation }).catch((e: unknown) => e);
      assert.ok(stale instanceof AllotApiError);
      assert.deepEqual([stale.status, stale.code], [412, 'ids.precondition_failed']);
    });

    test('retryOnConflict re-reads a pool when its version moved under an If-Match write', async () => {
      await ids.createPool({ name: 'meta', kind: 'integer', ranges: ['1-100'], metadata: {} });
      let tries = 0;
      const result = await retryOnConflict(async () => {
        tries++;
        const pool = await ids.getPool('meta');
        // another writer changes the pool between our read and our write, once
        if (tries === 1) await ids.updatePool('meta', { metadata: { ...pool.metadata, other: 1 } });
        return ids.updatePool('meta', { metadata: { ...pool.metadata, mine: 1 } }, { ifMatch: pool.generation });
      });
      assert.equal(tries, 2);
      assert.deepEqual(result.metadata, { other: 1, mine: 1 });
    });
  });
}
