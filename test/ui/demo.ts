// A small cloud for the dashboard, created through the three APIs with allot's typed client: compute
// nodes (some with NUMA and NIC children) and a shared storage pool in Placement with instances
// allocated on them, bare-metal nodes in several provision states with allocations, and
// identifier pools partly taken; and, apart (seedInstances), service instances that each reserve
// a bare-metal node, bandwidth on its NIC, a VLAN and an address. The dashboard's tests and `npm run screenshots` both use it; the
// tests compute what the pages must show from these definitions, not from the dashboard's code.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { AllotClient, type PlacementClient, type ids } from '../../src/client/index.js';
import { type ReservationCloud, seedReservationCloud, tenantServerSpec } from '../ids/reservation-cloud.js';

export interface InventoryDef {
  total: number;
  reserved?: number;
  allocation_ratio?: number;
}

export interface ProviderDef {
  name: string;
  parent?: string;
  inventories: Record<string, InventoryDef>;
}

const host = (name: string, vcpu: number, memoryGiB: number, diskGB: number, ratio = 4): ProviderDef => ({
  name,
  inventories: {
    VCPU: { total: vcpu, reserved: 4, allocation_ratio: ratio },
    MEMORY_MB: { total: memoryGiB * 1024, reserved: 8192, allocation_ratio: 1.5 },
    DISK_GB: { total: diskGB, reserved: 100 },
  },
});

export const PROVIDERS: ProviderDef[] = [
  host('cn-r1-01', 64, 256, 1900),
  host('cn-r1-02', 64, 256, 1900),
  host('cn-r1-03', 64, 256, 1900),
  host('cn-r2-01', 96, 512, 3800, 2),
  host('cn-r2-02', 96, 512, 3800, 2),
  host('cn-r2-03', 96, 512, 3800, 2),
  { name: 'cn-nfv-01', inventories: { VCPU: { total: 16, reserved: 2 }, MEMORY_MB: { total: 16384, reserved: 2048 } } },
  { name: 'cn-nfv-01-numa0', parent: 'cn-nfv-01', inventories: { PCPU: { total: 24 }, MEMORY_MB: { total: 196608 } } },
  { name: 'cn-nfv-01-numa1', parent: 'cn-nfv-01', inventories: { PCPU: { total: 24 }, MEMORY_MB: { total: 196608 } } },
  { name: 'cn-nfv-01-nic', parent: 'cn-nfv-01', inventories: { SRIOV_NET_VF: { total: 64 } } },
  { name: 'ceph-az1', inventories: { DISK_GB: { total: 200000, reserved: 10000 } } },
];

export interface ConsumerDef {
  name: string;
  project: string;
  user: string;
  /** provider name → resources */
  allocations: Record<string, Record<string, number>>;
}

const FLAVORS: Record<string, Record<string, number>> = {
  small: { VCPU: 2, MEMORY_MB: 4096, DISK_GB: 40 },
  medium: { VCPU: 4, MEMORY_MB: 8192, DISK_GB: 80 },
  large: { VCPU: 16, MEMORY_MB: 65536, DISK_GB: 200 },
  xlarge: { VCPU: 32, MEMORY_MB: 131072, DISK_GB: 400 },
};

/** Instances: how many of each flavor on each host; uneven, so some hosts are full and some empty. */
const PLACED: Array<[string, string, number]> = [
  ['cn-r1-01', 'xlarge', 2],
  ['cn-r1-01', 'medium', 12],
  ['cn-r1-02', 'large', 4],
  ['cn-r1-02', 'small', 8],
  ['cn-r1-03', 'small', 3],
  ['cn-r2-01', 'xlarge', 2],
  ['cn-r2-01', 'large', 3],
  ['cn-r2-02', 'medium', 6],
];

const PROJECTS = ['web-frontend', 'analytics', 'ci-runners', 'billing'];

export function consumerDefs(): ConsumerDef[] {
  const out: ConsumerDef[] = [];
  let i = 0;
  for (const [hostName, flavor, n] of PLACED)
    for (let k = 0; k < n; k++, i++)
      out.push({
        name: `${hostName}-${flavor}-${k}`,
        project: PROJECTS[i % PROJECTS.length]!,
        user: `user-${i % 3}`,
        allocations: { [hostName]: FLAVORS[flavor]! },
      });
  // instances on the NFV host: dedicated CPUs and memory on a NUMA cell, VFs on the NIC, disk from the shared pool
  for (let k = 0; k < 3; k++)
    out.push({
      name: `vnf-${k}`,
      project: 'telco',
      user: 'nfv-orchestrator',
      allocations: {
        'cn-nfv-01': { VCPU: 1, MEMORY_MB: 1024 },
        [`cn-nfv-01-numa${k % 2}`]: { PCPU: 8, MEMORY_MB: 65536 },
        'cn-nfv-01-nic': { SRIOV_NET_VF: 8 },
        'ceph-az1': { DISK_GB: 500 },
      },
    });
  return out;
}

export interface NodeDef {
  name: string;
  resource_class: string;
  /** the state the node is walked to */
  state: 'enroll' | 'manageable' | 'available' | 'allocated' | 'active';
  maintenance?: boolean;
}

export const NODES: NodeDef[] = [
  { name: 'bm-rack4-01', resource_class: 'baremetal-large', state: 'active' },
  { name: 'bm-rack4-02', resource_class: 'baremetal-large', state: 'active' },
  { name: 'bm-rack4-03', resource_class: 'baremetal-large', state: 'allocated' },
  { name: 'bm-rack4-04', resource_class: 'baremetal-large', state: 'available' },
  { name: 'bm-rack4-05', resource_class: 'baremetal-large', state: 'available' },
  { name: 'bm-rack4-06', resource_class: 'baremetal-large', state: 'available', maintenance: true },
  { name: 'bm-gpu-01', resource_class: 'baremetal-gpu', state: 'allocated' },
  { name: 'bm-gpu-02', resource_class: 'baremetal-gpu', state: 'available' },
  { name: 'bm-gpu-03', resource_class: 'baremetal-gpu', state: 'manageable' },
  { name: 'bm-new-01', resource_class: 'baremetal-large', state: 'enroll' },
  { name: 'bm-new-02', resource_class: 'baremetal-large', state: 'enroll' },
];

/** The provision state each node definition ends in. */
export function provisionState(n: NodeDef): string {
  return n.state === 'allocated' ? 'available' : n.state;
}

/** An allocation asked for a class no node has: it ends in `error`. */
export const FAILED_ALLOCATION = { name: 'alloc-xxl', resource_class: 'baremetal-xxl' };

export interface PoolDef {
  body: ids.PoolCreate;
  /** values imported as taken: [value, count] */
  taken: Array<[number | string, number]>;
}

/** A deterministic pseudo-random sequence (mulberry32), so every run draws the same pictures. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function poolDefs(): PoolDef[] {
  const rnd = random(16);
  // VLANs: the low band densely used, then scattered use fading towards the top
  const vlans = new Set<number>();
  for (let v = 100; v < 420; v++) if (rnd() < 0.93) vlans.add(v);
  for (let v = 420; v < 1002; v++) if (rnd() < 0.45) vlans.add(v);
  for (let v = 1006; v < 2600; v++) if (rnd() < 0.12 * (1 - (v - 1006) / 1600)) vlans.add(v);
  vlans.add(3001);
  vlans.add(4000);
  // management addresses: the first 150 hosts, a few holes
  const mgmt: Array<[string, number]> = [];
  for (let h = 1; h <= 150; h++) if (rnd() < 0.9) mgmt.push([`192.0.2.${h}`, 1]);
  // point-to-point /31s: two dense regions
  const p2p: Array<[string, number]> = [];
  for (let k = 0; k < 420; k++) p2p.push([`10.255.${Math.floor(k / 128)}.${(k % 128) * 2}/31`, 1]);
  for (let k = 0; k < 160; k++) p2p.push([`10.255.${64 + Math.floor(k / 128)}.${(k % 128) * 2}/31`, 1]);
  return [
    {
      body: { name: 'vlan', kind: 'integer', ranges: ['1-4094'], excluded: [1, '1002-1005'], static: ['2-99'], description: 'tenant VLANs, fabric ams1' },
      taken: [...vlans].map((v) => [v, 1]),
    },
    { body: { name: 'mgmt-v4', kind: 'address', ranges: ['192.0.2.0/24'], description: 'out-of-band management' }, taken: mgmt },
    { body: { name: 'p2p-links', kind: 'prefix', ranges: ['10.255.0.0/16'], prefix_length: 31, description: 'router point-to-point links' }, taken: p2p },
    {
      body: { name: 'vni', kind: 'integer', ranges: ['4096-16777215'], strategy: 'random', description: 'VXLAN network identifiers' },
      taken: Array.from({ length: 40 }, (_, k) => [4096 + k * 4096, 1] as [number, number]),
    },
  ];
}

export interface SeededDemo {
  providers: Map<string, string>;
  consumers: Map<string, ConsumerDef>;
  nodes: Map<string, string>;
  allocations: Map<string, string>;
}

/** Create the demo cloud on a running allot (main port URL; noauth, as admin). */
export async function seedDemo(url: string): Promise<SeededDemo> {
  const allot = new AllotClient({ url, token: 'admin' });
  const [placement, baremetal] = await Promise.all([seedPlacement(allot), seedBaremetal(allot), seedPools(allot)]);
  return { providers: placement.providers, consumers: placement.consumers, nodes: baremetal.nodes, allocations: baremetal.allocations };
}

async function seedPlacement(allot: AllotClient): Promise<{ providers: Map<string, string>; consumers: Map<string, ConsumerDef> }> {
  const providers = new Map<string, string>();
  for (const p of PROVIDERS) {
    const created = await allot.placement.createProvider({ name: p.name, ...(p.parent ? { parent_provider_uuid: providers.get(p.parent)! } : {}) });
    providers.set(p.name, created.uuid);
    await allot.placement.setInventories(created.uuid, created.generation, p.inventories);
  }
  const consumers = new Map<string, ConsumerDef>();
  for (const c of consumerDefs()) {
    const uuid = randomUUID();
    consumers.set(uuid, c);
    await allocatePlacement(allot.placement, uuid, c, providers);
  }
  return { providers, consumers };
}

/** Claim a consumer's allocations (a new consumer) through Placement. */
export async function allocatePlacement(placement: PlacementClient, uuid: string, c: ConsumerDef, providers: Map<string, string>): Promise<void> {
  const allocations = Object.fromEntries(Object.entries(c.allocations).map(([name, resources]) => [providers.get(name)!, { resources }]));
  await placement.setAllocations(uuid, { allocations, project_id: c.project, user_id: c.user, consumer_generation: null, consumer_type: 'INSTANCE' });
}

async function seedBaremetal(allot: AllotClient): Promise<{ nodes: Map<string, string>; allocations: Map<string, string> }> {
  const api = allot.baremetal;
  const nodes = new Map<string, string>();
  const allocations = new Map<string, string>();
  await Promise.all(
    NODES.map(async (n) => {
      const { uuid } = await api.createNode({ driver: 'fake-hardware', name: n.name, resource_class: n.resource_class, owner: 'bm-project' });
      nodes.set(n.name, uuid);
      if (n.state === 'enroll') return;
      await api.setProvisionState(uuid, 'manage');
      await api.waitForProvisionState(uuid, 'manageable');
      if (n.state === 'manageable') return;
      // available and allocatable: provided, and powered off as a node waiting for work is
      await api.setProvisionState(uuid, 'provide');
      await api.waitForProvisionState(uuid, 'available');
      await api.setPowerState(uuid, 'power off');
      await api.waitForPowerState(uuid, 'power off');
      if (n.state === 'allocated' || n.state === 'active') {
        const name = `alloc-${n.name}`;
        await api.createAllocation({ name, resource_class: n.resource_class, candidate_nodes: [uuid], owner: 'bm-project' });
        const settled = await api.waitForAllocation(name);
        assert.equal(settled.state, 'active', JSON.stringify(settled));
        allocations.set(name, settled.uuid);
      }
      if (n.state === 'active') {
        await api.setProvisionState(uuid, 'active');
        await api.waitForProvisionState(uuid, 'active');
      }
      if (n.maintenance) await api.setMaintenance(uuid, 'fan replacement');
    }),
  );
  await api.createAllocation(FAILED_ALLOCATION);
  const failed = await api.waitForAllocation(FAILED_ALLOCATION.name);
  assert.equal(failed.state, 'error');
  allocations.set(FAILED_ALLOCATION.name, failed.uuid);
  return { nodes, allocations };
}

async function seedPools(allot: AllotClient): Promise<void> {
  for (const p of poolDefs()) {
    await allot.ids.createPool(p.body);
    const items = p.taken.map(([value, count], i) => ({ value, owner: `${p.body.name}-owner-${i}`, ...(count > 1 ? { count } : {}) }));
    await allot.ids.importValues(p.body.name, items);
  }
}

/** Gold nodes for tenant servers, each its project's (an instance gets only its project's nodes). */
export const TENANT_NODES = [
  { name: 'bm-gold-01', owner: 'web-frontend' },
  { name: 'bm-gold-02', owner: 'web-frontend' },
  { name: 'bm-gold-03', owner: 'telco' },
];
export const TENANT_SPEC = tenantServerSpec('tenant-server', 'baremetal-gold', { vlan: 'tenant-vlan', address: 'tenant-v4' });

export interface InstanceDef {
  name: string;
  project: string;
  /** validated and promoted in the create request; else left in state start */
  reserve: boolean;
  /** terminated after the instances before it were made */
  terminate?: boolean;
}

/** In order: web-b is terminated before web-c is reserved, which then gets web-b's node. */
export const INSTANCES: InstanceDef[] = [
  { name: 'web-a', project: 'web-frontend', reserve: true },
  { name: 'web-b', project: 'web-frontend', reserve: true, terminate: true },
  { name: 'web-c', project: 'web-frontend', reserve: true },
  { name: 'nfv-t', project: 'telco', reserve: true },
  { name: 'web-draft', project: 'web-frontend', reserve: false },
];

export interface SeededInstances extends ReservationCloud {
  /** instance name → id */
  instances: Map<string, string>;
}

/** Create the tenant servers' nodes, pools, spec and instances on a running allot. */
export async function seedInstances(url: string): Promise<SeededInstances> {
  const allot = new AllotClient({ url, token: 'admin' });
  const clouds = await Promise.all(
    [...new Set(TENANT_NODES.map((n) => n.owner))].map((owner) =>
      seedReservationCloud(allot, { nodes: TENANT_NODES.filter((n) => n.owner === owner).map((n) => n.name), resourceClass: 'baremetal-gold', owner }),
    ),
  );
  await allot.ids.createPool({ name: 'tenant-vlan', kind: 'integer', ranges: ['2000-2099'], description: 'tenant server VLANs' });
  await allot.ids.createPool({ name: 'tenant-v4', kind: 'address', ranges: ['198.51.100.0/26'], description: 'tenant server addresses' });
  await allot.ids.createSpec(TENANT_SPEC);
  const instances = new Map<string, string>();
  for (const def of INSTANCES) {
    const made = await allot.ids.createInstance({
      allocation_spec: TENANT_SPEC.name,
      service_type: 'tenant-server',
      attributes: {},
      project_id: def.project,
      ...(def.reserve ? { validate: true, promote: true } : {}),
    });
    assert.equal(made.state, def.reserve ? 'up' : 'start', JSON.stringify(made));
    instances.set(def.name, made.id);
    if (def.terminate) assert.equal((await allot.ids.terminateInstance(made.id)).state, 'terminated');
  }
  return {
    instances,
    nodes: new Map(clouds.flatMap((c) => [...c.nodes])),
    nics: new Map(clouds.flatMap((c) => [...c.nics])),
  };
}
