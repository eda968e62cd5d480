// A small cloud for service instances that reserve across the three engines, made through the APIs
// with allot's typed client: bare-metal nodes ready to allocate, each registered in Placement with
// a NIC provider under it that has bandwidth, and the allocation spec of a tenant server (a node,
// bandwidth on that node's NIC, a VLAN and an address). The CLI, client and dashboard tests and
// `npm run screenshots` use it. Written for the default `--baremetal-backend database`, where the
// operator registers each node's provider tree in Placement itself.
import type { AllotClient, ids } from '../../src/client/index.js';

export const BW = 'NET_BW_EGR_KILOBIT_PER_SEC';
export const GBIT = 1_000_000;

export interface ReservationCloud {
  /** node name → uuid */
  nodes: Map<string, string>;
  /** node uuid → its NIC provider's uuid */
  nics: Map<string, string>;
}

export interface CloudDef {
  /** node names */
  nodes: string[];
  resourceClass: string;
  /** the nodes' owner: an instance of a project gets only its project's nodes (as Ironic's allocations with an owner) */
  owner?: string;
  /** each NIC's egress bandwidth (default 25) */
  nicGbit?: number;
}

/** Nodes available and powered off, each with a NIC provider with bandwidth under its own provider. */
export async function seedReservationCloud(allot: AllotClient, def: CloudDef): Promise<ReservationCloud> {
  const cloud: ReservationCloud = { nodes: new Map(), nics: new Map() };
  await Promise.all(
    def.nodes.map(async (name) => {
      const { uuid } = await allot.baremetal.createNode({
        driver: 'fake-hardware',
        name,
        resource_class: def.resourceClass,
        ...(def.owner ? { owner: def.owner } : {}),
      });
      await allot.baremetal.setProvisionState(uuid, 'manage');
      await allot.baremetal.waitForProvisionState(uuid, 'manageable');
      await allot.baremetal.setProvisionState(uuid, 'provide');
      await allot.baremetal.waitForProvisionState(uuid, 'available');
      await allot.baremetal.setPowerState(uuid, 'power off');
      await allot.baremetal.waitForPowerState(uuid, 'power off');
      await allot.placement.createProvider({ name, uuid });
      const nic = await allot.placement.createProvider({ name: `${name}-nic`, parent_provider_uuid: uuid });
      await allot.placement.setInventories(nic.uuid, nic.generation, { [BW]: { total: (def.nicGbit ?? 25) * GBIT } });
      cloud.nodes.set(name, uuid);
      cloud.nics.set(uuid, nic.uuid);
    }),
  );
  return cloud;
}

/** A tenant server: a node of `resourceClass`, `gbit` Gbit/s on that node's NIC, a VLAN and an address. */
export function tenantServerSpec(name: string, resourceClass: string, pools: { vlan: string; address: string }, gbit = 10): ids.SpecCreate {
  return {
    name,
    attributes: {
      server: { from: 'node', resource_class: resourceClass },
      uplink: { from: 'capacity', resources: { [BW]: gbit * GBIT }, in_tree_of: 'server' },
      vlan: { from: 'pool', pool: pools.vlan },
      address: { from: 'pool', pool: pools.address },
    },
  };
}
