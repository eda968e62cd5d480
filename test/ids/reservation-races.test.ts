// Races and crashes of the one reservation across the engines (docs/ids.md "Reservations across the
// engines"): many clients reserving service instances that compete for a few nodes, a small VLAN
// pool and a bandwidth provider near full — 48 clients over three `allot serve` processes on one
// PostgreSQL, and over one process on SQLite — then a process SIGKILLed in a stream of
// validations. Afterwards, read through each engine's own API: no node, VLAN or bandwidth is held
// twice or beyond capacity, usage equals the sum of the allocations, every instance holds all of
// its attributes or none, and nothing is held by an instance that does not hold it.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { IronicClient, availableNode } from '../baremetal/helpers.js';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const BW = 'NET_BW_EGR_KILOBIT_PER_SEC';
const NODES = 8;
/** the spine has room for this many instances */
const SPINE_ROOM = 6;
/** and the VLAN pool this many values */
const VLANS = 7;
const CLIENTS = 48;
const ROUNDS = 4;

const SPEC = {
  name: 'racer',
  attributes: {
    server: { from: 'node', resource_class: 'race' },
    uplink: { from: 'capacity', resources: { [BW]: 1000 } },
    vlan: { from: 'pool', pool: 'race-vlan' },
  },
};

interface World {
  ids: IdsClient[];
  ironic: IronicClient;
  placement: PlacementClient;
  spine: string;
}

async function setUp(url: string, placementUrl: string): Promise<World> {
  const ironic = new IronicClient(`${url}/baremetal`);
  const placement = new PlacementClient(placementUrl);
  const ids = new IdsClient(url);
  for (let i = 0; i < NODES; i++) await availableNode(ironic, { name: `race-${i}`, resource_class: 'race' });
  const spine = await placement.post('/resource_providers', { name: 'spine' });
  assert.equal(spine.status, 200, spine.text);
  const inv = await placement.put(`/resource_providers/${spine.body.uuid}/inventories`, {
    resource_provider_generation: spine.body.generation,
    inventories: { [BW]: { total: SPINE_ROOM * 1000 } },
  });
  assert.equal(inv.status, 200, inv.text);
  assert.equal((await ids.post('/pools', { name: 'race-vlan', kind: 'integer', ranges: [`1-${VLANS}`], strategy: 'random' })).status, 201);
  assert.equal((await ids.post('/allocation-specs', SPEC)).status, 201);
  return { ids: [ids], ironic, placement, spine: spine.body.uuid };
}

/**
 * `CLIENTS` clients, each `ROUNDS` times: reserve an instance (create + validate + promote in one
 * request); when it got everything, hold it a moment and terminate it. Every answer is either
 * everything (201) or a 409 naming what could not be had.
 */
async function stampede(world: World): Promise<{ reserved: number; refused: Map<string, number> }> {
  let reserved = 0;
  const refused = new Map<string, number>();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const api = world.ids[c % world.ids.length]!;
      for (let round = 0; round < ROUNDS; round++) {
        const res = await api.post('/service-instances', { allocation_spec: SPEC.name, attributes: {}, validate: true, promote: true });
        if (res.status === 201) {
          reserved++;
          assert.equal(res.body.state, 'up');
          await new Promise((r) => setTimeout(r, 5 + (c % 7)));
          const gone = await api.delete(`/service-instances/${res.body.id}`);
          assert.equal(gone.status, 200, gone.text);
          continue;
        }
        // What could not be had (409), or a database too slow for the load on this machine (503,
        // its statement timeout): either way the instance holds nothing — checkHoldings says so.
        assert.ok(res.status === 409 || (res.status === 503 && res.body.code === 'ids.database_unavailable'), res.text);
        if (res.status === 409) {
          assert.ok(['ids.node_unavailable', 'ids.capacity_unavailable', 'ids.pool_exhausted', 'ids.concurrent_update'].includes(res.body.code), res.text);
          assert.ok(res.body.service_instance_id, 'the failed create names its instance');
        }
        refused.set(res.body.code, (refused.get(res.body.code) ?? 0) + 1);
      }
    }),
  );
  return { reserved, refused };
}

/**
 * What the engines hold, read through their APIs, against the instances: each live (`up`)
 * instance holds its node, its bandwidth and its VLAN, and nothing else is held for any instance.
 */
async function checkHoldings(world: World): Promise<{ live: number }> {
  const api = world.ids[0]!;
  const instances = await api.all('/service-instances?limit=1000');
  const live = new Map(instances.filter((i) => i.state === 'up').map((i) => [i.id as string, i]));
  // bare metal: one allocation per live instance, on distinct nodes, none for anyone else
  const allocations = (
    (await world.ironic.get('/v1/allocations?limit=1000')).body.allocations as Array<{ name: string | null; node_uuid: string; state: string }>
  ).filter((a) => a.name?.startsWith('service-instance.'));
  const nodesHeld = new Set<string>();
  for (const a of allocations) {
    const id = a.name!.split('.')[1]!;
    assert.ok(live.has(id), `allocation ${a.name} is held for ${id}, which is not live`);
    assert.equal(a.state, 'active');
    assert.ok(!nodesHeld.has(a.node_uuid), `node ${a.node_uuid} held twice`);
    nodesHeld.add(a.node_uuid);
    assert.equal(live.get(id).active_attributes.server.node, a.node_uuid);
  }
  // Placement: the spine's allocations are exactly the live instances' uplinks, within its capacity
  const onSpine = (await world.placement.get(`/resource_providers/${world.spine}/allocations`)).body.allocations as Record<
    string,
    { resources: Record<string, number> }
  >;
  let sum = 0;
  for (const [consumer, a] of Object.entries(onSpine)) {
    assert.ok(live.has(consumer), `bandwidth held for ${consumer}, which is not live`);
    sum += a.resources[BW]!;
  }
  const usage = (await world.placement.get(`/resource_providers/${world.spine}/usages`)).body.usages[BW];
  assert.equal(usage, sum, 'usage is the sum of the allocations');
  assert.ok(sum <= SPINE_ROOM * 1000, `spine over capacity: ${sum}`);
  // identifiers: one VLAN per live instance, each value once
  const vlans = await api.all('/pools/race-vlan/allocations?limit=1000');
  const values = new Set<number>();
  for (const v of vlans) {
    const id = (v.owner as string).replace('service-instance/', '');
    assert.ok(live.has(id), `VLAN ${v.value} is held for ${v.owner}, which is not live`);
    assert.ok(!values.has(v.value), `VLAN ${v.value} held twice`);
    values.add(v.value);
  }
  // every live instance holds all three; every other one nothing
  for (const i of instances) {
    const sources = (i.holdings as Array<{ source: string }>).map((h) => h.source).sort();
    if (i.state === 'up') assert.deepEqual(sources, ['capacity', 'node', 'pool'], `instance ${i.id}`);
    else assert.deepEqual(sources, [], `instance ${i.id} (${i.state}) holds ${sources}`);
  }
  assert.equal(allocations.length, live.size);
  assert.equal(Object.keys(onSpine).length, live.size);
  assert.equal(vlans.length, live.size);
  return { live: live.size };
}

describe('racing reservations: 48 clients over three processes on one PostgreSQL', () => {
  let servers: SpawnedServer[] = [];
  let world: World;
  before(async () => {
    const db = await freshDatabaseUrl('postgres');
    for (let i = 0; i < 3; i++) servers.push(await spawnServer(['--db', db, '--conductor-id', `race-${i}`]));
    world = await setUp(servers[0]!.url, servers[0]!.placementUrl);
    world.ids = servers.map((s) => new IdsClient(s.url));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  test('nothing is held twice or beyond capacity; every instance holds all or nothing', async () => {
    const { reserved, refused } = await stampede(world);
    assert.ok(reserved >= ROUNDS, `some reservations went through (${reserved})`);
    assert.ok(refused.size > 0, 'the resources were contended');
    assert.deepEqual(await checkHoldings(world), { live: 0 });
  });

  test('a process SIGKILLed in a stream of validations leaves every instance holding all or nothing', async () => {
    const victim = servers[1]!;
    // each process gets a stream of reservations, half of them terminated again
    const streams = world.ids.map(async (api, i) => {
      for (let n = 0; n < 30; n++) {
        const res = await api.post('/service-instances', { allocation_spec: SPEC.name, attributes: {}, validate: true, promote: true }).catch(() => null);
        if (res === null) return; // the process died under us
        if (res.status === 201 && (n + i) % 2 === 0) await api.delete(`/service-instances/${res.body.id}`).catch(() => null);
      }
    });
    await new Promise((r) => setTimeout(r, 400));
    await victim.kill();
    await Promise.all(streams);
    await checkHoldings(world);
    // the survivors terminate what is left; then nothing is held at all
    for (const i of await world.ids[0]!.all('/service-instances?limit=1000')) {
      if (i.state === 'up' || i.state === 'start') assert.equal((await world.ids[0]!.delete(`/service-instances/${i.id}`)).status, 200);
    }
    assert.deepEqual(await checkHoldings(world), { live: 0 });
    servers = servers.filter((s) => s !== victim);
  });
});

describe('racing reservations: 48 clients on one SQLite process', () => {
  let server: SpawnedServer;
  let world: World;
  before(async () => {
    server = await spawnServer(['--db', `sqlite:${path.join(mkdtempSync(path.join(os.tmpdir(), 'allot-race-')), 'allot.db')}`]);
    world = await setUp(server.url, server.placementUrl);
  });
  after(() => server?.stop());

  test('nothing is held twice or beyond capacity; every instance holds all or nothing', async () => {
    const { reserved, refused } = await stampede(world);
    assert.ok(reserved >= ROUNDS, `some reservations went through (${reserved})`);
    assert.ok(refused.size > 0, 'the resources were contended');
    assert.deepEqual(await checkHoldings(world), { live: 0 });
  });
});
