// One reservation across the three engines: a service instance whose spec asks for a bare-metal
// node, bandwidth on that node's NIC (Placement capacity in the node's tree), a VLAN and two
// addresses gets all of them in one transaction or none, holds them against the other APIs, and
// gives them back on terminate. Over HTTP, on SQLite and PostgreSQL, with both bare-metal
// backends; every fact is checked through the API that owns it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { BaremetalBackendName } from '../../src/config.js';
import { transaction } from '../../src/db/transaction.js';
import { IronicClient, availableNode, fault, nodeSettled } from '../baremetal/helpers.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const BW = 'NET_BW_EGR_KILOBIT_PER_SEC';
const GBIT = 1_000_000;

const SPEC = {
  name: 'tenant-server',
  attributes: {
    server: { from: 'node', resource_class: 'gold', traits: ['CUSTOM_RAID'] },
    uplink: { from: 'capacity', resources: { [BW]: 10 * GBIT }, in_tree_of: 'server' },
    vlan: { from: 'pool', pool: 'vlan' },
    addr_a: { from: 'pool', pool: 'addr' },
    addr_b: { from: 'pool', pool: 'addr' },
  },
};

let counter = 0;
const newId = () => `00000000-0000-4000-8000-${(++counter).toString(16).padStart(12, '0')}`;

for (const dialect of DIALECTS) {
  for (const backend of ['placement', 'database'] as BaremetalBackendName[]) {
    describe(`one reservation across nodes, capacity and identifiers (${dialect}, ${backend} backend)`, () => {
      let server: TestServer;
      let ids: IdsClient;
      let ironic: IronicClient;
      let placement: PlacementClient;
      const nodes: string[] = [];
      /** node uuid → its NIC provider */
      const nics = new Map<string, string>();

      before(async () => {
        server = await startServer({ db: await freshDatabaseUrl(dialect), baremetalBackend: backend });
        ids = new IdsClient(server.url);
        ironic = new IronicClient(`${server.url}/baremetal`);
        placement = new PlacementClient(server.placementUrl);
        for (const name of ['gold-1', 'gold-2', 'gold-3']) {
          const node = await availableNode(ironic, { name, resource_class: 'gold' }, ['CUSTOM_RAID']);
          nodes.push(node.uuid);
          // the database backend mirrors no node: the operator registers the node's tree itself
          if (backend === 'database') assert.equal((await placement.post('/resource_providers', { name, uuid: node.uuid })).status, 200);
          const nic = await placement.post('/resource_providers', { name: `${name}-nic`, parent_provider_uuid: node.uuid });
          assert.equal(nic.status, 200, nic.text);
          const inv = await placement.put(`/resource_providers/${nic.body.uuid}/inventories`, {
            resource_provider_generation: nic.body.generation,
            inventories: { [BW]: { total: 25 * GBIT } },
          });
          assert.equal(inv.status, 200, inv.text);
          nics.set(node.uuid, nic.body.uuid);
        }
        // a provider with plenty of bandwidth outside every node's tree: in_tree_of must not pick it
        const fabric = await placement.post('/resource_providers', { name: 'fabric' });
        await placement.put(`/resource_providers/${fabric.body.uuid}/inventories`, {
          resource_provider_generation: fabric.body.generation,
          inventories: { [BW]: { total: 1000 * GBIT } },
        });
        assert.equal((await ids.post('/pools', { name: 'vlan', kind: 'integer', ranges: ['100-102'] })).status, 201);
        assert.equal((await ids.post('/pools', { name: 'addr', kind: 'address', ranges: ['10.0.0.0/28'] })).status, 201);
        const spec = await ids.post('/allocation-specs', SPEC);
        assert.equal(spec.status, 201, spec.text);
      });
      after(() => server?.close());

      const reserve = (id: string, extra: Record<string, unknown> = {}) =>
        ids.post('/service-instances', { id, allocation_spec: SPEC.name, attributes: {}, validate: true, promote: true, ...extra });

      /** What the other APIs say is held: bare-metal allocations, the consumer's allocations, pool values. */
      async function seenFrom(id: string) {
        const allocations = (await ironic.get('/v1/allocations')).body.allocations as Array<{
          uuid: string;
          name: string;
          node_uuid: string;
          owner: string | null;
        }>;
        const consumer = await placement.get(`/allocations/${id}`);
        const values = await ids.all(`/allocations?owner=service-instance/${id}`);
        return {
          allocations: allocations.filter((a) => a.name?.startsWith(`service-instance.${id}.`)),
          capacity: consumer.body.allocations as Record<string, { resources: Record<string, number> }>,
          values,
        };
      }

      test('one request reserves the node, bandwidth on its NIC, a VLAN and two addresses; each API shows its part', async () => {
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 201, res.text);
        const instance = res.body;
        assert.equal(instance.state, 'up');
        const active = instance.active_attributes;
        assert.ok(nodes.includes(active.server.node), JSON.stringify(active.server));
        assert.match(active.server.name, /^gold-\d$/);
        // the bandwidth is on the NIC under the node that was picked
        assert.deepEqual(active.uplink, { consumer: id, allocations: { [nics.get(active.server.node)!]: { resources: { [BW]: 10 * GBIT } } } });
        assert.ok([100, 101, 102].includes(active.vlan));
        assert.notEqual(active.addr_a, active.addr_b);

        const seen = await seenFrom(id);
        assert.equal(seen.allocations.length, 1);
        assert.equal(seen.allocations[0]!.uuid, active.server.allocation);
        assert.equal(seen.allocations[0]!.node_uuid, active.server.node);
        const node = (await ironic.get(`/v1/nodes/${active.server.node}`)).body;
        assert.equal(node.instance_uuid, active.server.allocation);
        assert.equal(node.allocation_uuid, active.server.allocation);
        assert.deepEqual(Object.keys(seen.capacity), [nics.get(active.server.node)!]);
        assert.deepEqual(seen.capacity[nics.get(active.server.node)!]!.resources, { [BW]: 10 * GBIT });
        assert.deepEqual(seen.values.map((v) => v.purpose).sort(), ['addr_a', 'addr_b', 'vlan']);
        // every holding, with its link into its own API
        const kinds = (instance.holdings as Array<{ source: string; href: string | null; attribute: string | null }>).map(
          (h) => `${h.source}:${h.attribute ?? '-'}`,
        );
        assert.deepEqual(kinds.sort(), ['capacity:uplink', 'node:server', 'pool:addr_a', 'pool:addr_b', 'pool:vlan']);
        for (const h of instance.holdings as Array<{ href: string }>) {
          const followed = await fetch(`${server.url}${h.href}`, { headers: { 'x-auth-token': 'admin', 'x-openstack-ironic-api-version': '1.82' } });
          assert.equal(followed.status, 200, h.href);
        }
        // the same request again: the same holdings, nothing more
        const again = await reserve(id);
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(again.body.active_attributes, active);
        assert.deepEqual((await seenFrom(id)).allocations.length, 1);
      });

      test('all or nothing: without a VLAN the instance holds no node, no bandwidth and no address', async () => {
        // take every VLAN left
        const taken: string[] = [];
        for (;;) {
          const r = await ids.post('/pools/vlan/allocations', { owner: `squatter-${taken.length}` });
          if (r.status === 409) break;
          assert.equal(r.status, 201, r.text);
          taken.push(r.body.id);
        }
        const before = { allocations: (await ironic.get('/v1/allocations')).body.allocations.length, addr: (await ids.all('/pools/addr/allocations')).length };
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.code, 'ids.pool_exhausted');
        assert.equal(res.body.attribute, 'vlan');
        const seen = await seenFrom(id);
        assert.equal(seen.allocations.length, 0, 'no node held');
        assert.equal(seen.capacity && Object.keys(seen.capacity).length, 0, 'no bandwidth held');
        assert.equal(seen.values.length, 0, 'no value held');
        assert.equal((await ironic.get('/v1/allocations')).body.allocations.length, before.allocations);
        assert.equal((await ids.all('/pools/addr/allocations')).length, before.addr);
        // the instance is there, holding nothing, and says why; a repeat tries again
        const instance = (await ids.get(`/service-instances/${id}`)).body;
        assert.equal(instance.state, 'start');
        assert.match(instance.last_error, /vlan/);
        assert.deepEqual(instance.holdings, []);
        for (const t of taken) assert.equal((await ids.delete(`/allocations/${t}`)).status, 204);
        const retried = await reserve(id);
        assert.equal(retried.status, 200, retried.text);
        assert.equal(retried.body.state, 'up');
        assert.equal((await seenFrom(id)).allocations.length, 1);
        assert.equal((await ids.delete(`/service-instances/${id}`)).status, 200);
      });

      test('an address pool with one value left: 409 naming the second address, worded as ever; the VLAN and address taken before it are given back', async () => {
        // PostgreSQL's fast path takes the VLAN and both addresses in one statement (pool-id
        // order: the VLAN's first); it found no block for addr_b under the pool's lock
        const taken: string[] = [];
        for (;;) {
          const r = await ids.post('/pools/addr/allocations', { owner: `squatter-${taken.length}` });
          if (r.status === 409) break;
          assert.equal(r.status, 201, r.text);
          taken.push(r.body.id);
        }
        assert.equal((await ids.delete(`/allocations/${taken.pop()}`)).status, 204);
        const pools = async () => Promise.all(['vlan', 'addr'].map(async (p) => (await ids.get(`/pools/${p}`)).body));
        const before = { pools: await pools(), allocations: (await ironic.get('/v1/allocations')).body.allocations.length };
        const stepAsides = await counted(server, 'allot_transaction_retries_total{reason="step_aside"}');
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.code, 'ids.pool_exhausted');
        assert.equal(res.body.attribute, 'addr_b');
        assert.equal(
          res.body.detail,
          `service instance ${id} was created; then attribute "addr_b": Pool addr has no free block of 1 value(s) left for automatic allocation`,
        );
        // answered as it stood, not run again the general way
        assert.equal(await counted(server, 'allot_transaction_retries_total{reason="step_aside"}'), stepAsides);
        const seen = await seenFrom(id);
        assert.deepEqual([seen.allocations.length, seen.values.length, Object.keys(seen.capacity ?? {}).length], [0, 0, 0]);
        // counters, generations and the last value handed out as they were
        assert.deepEqual(await pools(), before.pools);
        assert.equal((await ironic.get('/v1/allocations')).body.allocations.length, before.allocations);
        for (const t of taken) assert.equal((await ids.delete(`/allocations/${t}`)).status, 204);
        const retried = await reserve(id);
        assert.equal(retried.status, 200, retried.text);
        assert.equal(retried.body.state, 'up');
        assert.equal((await ids.delete(`/service-instances/${id}`)).status, 200);
      });

      test('no node free: 409 naming the node attribute, and nothing held', async () => {
        const held: string[] = [];
        // the other nodes go to plain bare-metal allocations
        for (;;) {
          const r = await ironic.post('/v1/allocations', { resource_class: 'gold' });
          assert.equal(r.status, 201, r.text);
          const done = await nodeSettledAllocation(ironic, r.body.uuid);
          if (done.state === 'error') {
            await ironic.delete(`/v1/allocations/${r.body.uuid}`);
            break;
          }
          held.push(r.body.uuid);
        }
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.code, 'ids.node_unavailable');
        assert.equal(res.body.attribute, 'server');
        assert.match(res.body.detail, /gold/);
        const seen = await seenFrom(id);
        assert.deepEqual([seen.allocations.length, seen.values.length], [0, 0]);
        for (const a of held) assert.equal((await ironic.delete(`/v1/allocations/${a}`)).status, 204);
      });

      test('the candidates index saw room the database no longer has: 409 naming the capacity attribute, and nothing held', async () => {
        // Another writer took every NIC's bandwidth without telling this process's candidates index
        // (as a process that dies between its commit and its NOTIFY would): the index still sees
        // room; the reservation's claim finds none (on PostgreSQL the statement that closes its
        // transaction refuses, and the transaction runs again the general way).
        const reserveAll = (reserved: number) =>
          transaction(server.running.context.database, (tx) =>
            sql`update inventories set reserved = ${reserved} where resource_provider_id in (select id from resource_providers where name like ${'%-nic'})`.execute(
              tx.db,
            ),
          );
        await reserveAll(25 * GBIT);
        try {
          const before = {
            allocations: (await ironic.get('/v1/allocations')).body.allocations.length,
            vlan: (await ids.all('/pools/vlan/allocations')).length,
          };
          const id = newId();
          const stepAsides = await counted(server, 'allot_transaction_retries_total{reason="step_aside"}');
          const res = await reserve(id);
          // PostgreSQL: the statement that closes the transaction refused, and it ran again the general way
          assert.equal(await counted(server, 'allot_transaction_retries_total{reason="step_aside"}'), stepAsides + (dialect === 'postgres' ? 1 : 0));
          assert.equal(res.status, 409, res.text);
          assert.equal(res.body.code, 'ids.capacity_unavailable');
          assert.equal(res.body.attribute, 'uplink');
          assert.match(res.body.detail, /no resource provider has room/);
          const seen = await seenFrom(id);
          assert.deepEqual([seen.allocations.length, seen.values.length], [0, 0]);
          assert.equal(Object.keys(seen.capacity ?? {}).length, 0);
          assert.equal((await ironic.get('/v1/allocations')).body.allocations.length, before.allocations, 'no node held');
          assert.equal((await ids.all('/pools/vlan/allocations')).length, before.vlan, 'no VLAN held');
        } finally {
          await reserveAll(0);
        }
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 201, res.text);
        assert.equal((await ids.delete(`/service-instances/${id}`)).status, 200);
      });

      test('held means held: the other APIs refuse to release it, each in its own format; terminate releases everything', async () => {
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 201, res.text);
        const active = res.body.active_attributes;

        const bm = await ironic.delete(`/v1/allocations/${active.server.allocation}`);
        assert.equal(bm.status, 409, bm.text);
        assert.match(fault(bm).faultstring!, new RegExp(`service-instance/${id}`));
        const viaNode = await ironic.delete(`/v1/nodes/${active.server.node}/allocation`);
        assert.equal(viaNode.status, 409, viaNode.text);

        const del = await placement.delete(`/allocations/${id}`);
        assert.equal(del.status, 409, del.text);
        assert.match(del.body.errors[0].detail, new RegExp(`service-instance/${id}`));
        const current = (await placement.get(`/allocations/${id}`)).body;
        const put = await placement.put(`/allocations/${id}`, {
          allocations: {},
          consumer_generation: current.consumer_generation,
          project_id: current.project_id,
          user_id: current.user_id,
          consumer_type: 'INSTANCE',
        });
        assert.equal(put.status, 409, put.text);
        const move = await placement.post('/allocations', {
          [id]: {
            allocations: {},
            consumer_generation: current.consumer_generation,
            project_id: current.project_id,
            user_id: current.user_id,
            consumer_type: 'INSTANCE',
          },
          [newId()]: {
            allocations: current.allocations,
            consumer_generation: null,
            project_id: current.project_id,
            user_id: current.user_id,
            consumer_type: 'MIGRATION',
          },
        });
        assert.equal(move.status, 409, move.text);
        const vlan = (await ids.all(`/allocations?owner=service-instance/${id}&purpose=vlan`))[0];
        const release = await ids.delete(`/allocations/${vlan.id}`);
        assert.equal(release.status, 409, release.text);
        assert.equal(release.body.code, 'ids.value_held_by_instance');
        // nothing of it moved
        const seen = await seenFrom(id);
        assert.equal(seen.allocations.length, 1);
        assert.deepEqual(
          Object.values(seen.capacity).map((a) => a.resources[BW]),
          [10 * GBIT],
        );

        const gone = await ids.delete(`/service-instances/${id}`);
        assert.equal(gone.status, 200, gone.text);
        assert.equal(gone.body.state, 'terminated');
        assert.deepEqual(gone.body.holdings, []);
        const after = await seenFrom(id);
        assert.deepEqual([after.allocations.length, Object.keys(after.capacity).length, after.values.length], [0, 0, 0]);
        const node = (await ironic.get(`/v1/nodes/${active.server.node}`)).body;
        assert.equal(node.instance_uuid, null);
        assert.equal(node.allocation_uuid, null);
        const usage = (await placement.get(`/resource_providers/${nics.get(active.server.node)}/usages`)).body.usages;
        assert.equal(usage[BW], 0);
      });

      test("a node the bare-metal API releases by Ironic's rules leaves the instance's sets, recorded; validation takes it again", async () => {
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 201, res.text);
        const server = res.body.active_attributes.server;
        // removing a node's instance_uuid deallocates it (Ironic's rule): allowed, and the instance learns of it
        const patched = await ironic.patch(`/v1/nodes/${server.node}`, [{ op: 'remove', path: '/instance_uuid' }]);
        assert.equal(patched.status, 200, patched.text);
        const instance = (await ids.get(`/service-instances/${id}`)).body;
        assert.equal(instance.active_attributes.server, undefined, 'the active set no longer names the node');
        assert.equal(instance.forced_releases.length, 1);
        assert.equal(instance.forced_releases[0].source, 'node');
        assert.equal(instance.forced_releases[0].attribute, 'server');
        assert.deepEqual(instance.forced_releases[0].value, server);
        assert.deepEqual(instance.forced_releases[0].sets, ['active']);
        assert.deepEqual(
          instance.holdings.filter((h: { source: string }) => h.source === 'node'),
          [],
        );
        // update → validate → promote: the same node again (it is free)
        assert.equal((await ids.patch(`/service-instances/${id}`, { attributes: {} })).status, 200);
        const validated = await ids.post(`/service-instances/${id}/validate`);
        assert.equal(validated.status, 200, validated.text);
        assert.equal(validated.body.candidate_attributes.server.node, server.node);
        assert.deepEqual(validated.body.forced_releases, []);
        assert.equal((await ids.post(`/service-instances/${id}/promote`)).status, 200);
        assert.equal((await ids.delete(`/service-instances/${id}`)).status, 200);
      });

      test('a reshape that moves the bandwidth to a child of the NIC moves the instance’s capacity value with it', async () => {
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 201, res.text);
        const server = res.body.active_attributes.server;
        const nic = nics.get(server.node)!;
        const vf = await placement.post('/resource_providers', { name: `vf-${id}`, parent_provider_uuid: nic });
        assert.equal(vf.status, 200, vf.text);
        const current = (await placement.get(`/allocations/${id}`)).body;
        const generations = async (uuid: string) => (await placement.get(`/resource_providers/${uuid}`)).body.generation as number;
        // the NIC keeps 15 Gbit/s of its own, the VF gets 10 (the instance's), as a virt driver's reshape would
        const reshape = await placement.post(
          '/reshaper',
          {
            inventories: {
              [nic]: { resource_provider_generation: await generations(nic), inventories: { [BW]: { total: 15 * GBIT } } },
              [vf.body.uuid]: { resource_provider_generation: await generations(vf.body.uuid), inventories: { [BW]: { total: 10 * GBIT } } },
            },
            allocations: {
              [id]: {
                allocations: { [vf.body.uuid]: { resources: { [BW]: 10 * GBIT } } },
                project_id: current.project_id,
                user_id: current.user_id,
                consumer_generation: current.consumer_generation,
                consumer_type: 'INSTANCE',
              },
            },
          },
          { headers: { 'x-roles': 'admin,service' } },
        );
        assert.equal(reshape.status, 204, reshape.text);
        const instance = (await ids.get(`/service-instances/${id}`)).body;
        assert.deepEqual(instance.active_attributes.uplink, { consumer: id, allocations: { [vf.body.uuid]: { resources: { [BW]: 10 * GBIT } } } });
        assert.deepEqual(instance.forced_releases, []);
        // still held: the Placement API may not take it; terminate releases it from where it now is
        assert.equal((await placement.delete(`/allocations/${id}`)).status, 409);
        assert.equal((await ids.delete(`/service-instances/${id}`)).status, 200);
        assert.equal((await placement.get(`/resource_providers/${vf.body.uuid}/usages`)).body.usages[BW], 0);
      });

      test('terminate is refused while the node is deployed, and works once it is undeployed', async () => {
        const id = newId();
        const res = await reserve(id);
        assert.equal(res.status, 201, res.text);
        const server = res.body.active_attributes.server;
        assert.equal((await ironic.put(`/v1/nodes/${server.node}/states/provision`, { target: 'active' })).status, 202);
        assert.equal((await nodeSettled(ironic, server.node)).provision_state, 'active');
        const refused = await ids.delete(`/service-instances/${id}`);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.body.code, 'ids.invalid_state');
        assert.equal(refused.body.node, server.node);
        // nothing was released by the refused terminate
        const seen = await seenFrom(id);
        assert.deepEqual([seen.allocations.length, seen.values.length, Object.keys(seen.capacity).length], [1, 3, 1]);
        assert.equal((await ids.get(`/service-instances/${id}`)).body.state, 'up');
        // undeploying tears the node down, which releases the allocation by Ironic's rule
        assert.equal((await ironic.put(`/v1/nodes/${server.node}/states/provision`, { target: 'deleted' })).status, 202);
        await nodeSettled(ironic, server.node);
        assert.equal((await ids.delete(`/service-instances/${id}`)).status, 200);
        const after = await seenFrom(id);
        assert.deepEqual([after.allocations.length, after.values.length, Object.keys(after.capacity).length], [0, 0, 0]);
      });
    });
  }
}

/** A sample of the server's metrics (0 when it has none yet). */
async function counted(server: TestServer, sample: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

async function nodeSettledAllocation(api: IronicClient, uuid: string): Promise<{ state: string }> {
  for (let i = 0; i < 2000; i++) {
    const a = (await api.get(`/v1/allocations/${uuid}`)).body;
    if (a.state !== 'allocating') return a;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`allocation ${uuid} never finished`);
}
