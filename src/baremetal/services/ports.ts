// Port groups and ports: create, patch, delete, each one transaction (a node's VIFs, recorded on
// them: node-vifs.ts). A port or port group is written under its node's row lock (the lock order
// of node operations: node first), so it cannot be added to a node being deleted. The route parsed
// and checked the values; what is refused here are the facts (a uuid, name or MAC address taken, a
// port group in use), as DomainErrors that errors.ts words.
import type { DomainError } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import type { Tx } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import type { Page } from '../core/paging.js';
import {
  type PortFilters,
  type PortRecord,
  type PortgroupRecord,
  deletePortRow,
  deletePortgroupRow,
  findPort,
  findPortByAddress,
  findPortgroup,
  listPorts,
  listPortgroups,
  insertPort,
  insertPortgroup,
  portNotFound,
  portgroupHasPorts,
  portgroupPhysnets,
  portgroupNotFound,
  requirePort,
  requirePortgroup,
  updatePort,
  updatePortgroup,
} from '../store/ports.js';
import { type NodeRecord, lockNode } from '../store/nodes.js';
import { type Edit, asJson, flag, uniquely } from './resource-writes.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export { type PortColumn, type PortFilters, type PortRecord, type PortgroupRecord, portNotFound, portgroupNotFound } from '../store/ports.js';

// ---- reads for the routes --------------------------------------------------------------------

/** The port group with this uuid or name, or portgroup_not_found. */
export function getPortgroup(ctx: BaremetalContext, ident: string): Promise<PortgroupRecord> {
  return requirePortgroup(ctx.database, ident);
}

/** The port group with this uuid or name, if there is one. */
export function lookupPortgroup(ctx: BaremetalContext, ident: string): Promise<PortgroupRecord | undefined> {
  return findPortgroup(ctx.database, ident);
}

export function listPortgroupPage(ctx: BaremetalContext, filters: PortFilters, page: Page): Promise<PortgroupRecord[]> {
  return listPortgroups(ctx.database, filters, page);
}

/** The port with this uuid, or port_not_found. */
export function getPort(ctx: BaremetalContext, uuid: string): Promise<PortRecord> {
  return requirePort(ctx.database, uuid);
}

export function listPortPage(ctx: BaremetalContext, filters: PortFilters, page: Page): Promise<PortRecord[]> {
  return listPorts(ctx.database, filters, page);
}

// ---- the node a port or port group is on -----------------------------------------------------

/** The node a body names, locked; one that does not exist is the request's fault (400). */
async function lockedParent(tx: Tx, nodeUuid: string): Promise<NodeRecord> {
  const node = await lockNode(tx, nodeUuid);
  if (!node) throw baremetalDomainError('parent_node_not_found', { ident: nodeUuid }, `no node ${nodeUuid}`);
  return node;
}

// ---- port groups -----------------------------------------------------------------------------

export interface PortgroupFields {
  node_uuid: string;
  /** lower case */
  address: string | null;
  name: string | null;
  mode: string;
  standalone_ports_supported: boolean;
  properties: unknown;
  extra: unknown;
}

const portgroupUuidTaken = (uuid: string) => baremetalDomainError('portgroup_uuid_taken', { uuid }, `a port group has uuid ${uuid}`);
const portgroupNameTaken = (name: string) => baremetalDomainError('portgroup_name_taken', { name }, `a port group is named ${name}`);
const portgroupAddressTaken = (mac: string) => baremetalDomainError('portgroup_address_taken', { mac }, `a port group has address ${mac}`);

async function checkPortgroupUnique(tx: Tx, f: Pick<PortgroupFields, 'name' | 'address'>, exceptId: number | null): Promise<void> {
  if (f.name !== null) {
    const other = await findPortgroup(tx, f.name);
    if (other && other.id !== exceptId) throw portgroupNameTaken(f.name);
  }
  if (f.address !== null) {
    const other = await tx.db.selectFrom('baremetal_portgroups').select('id').where('address', '=', f.address).executeTakeFirst();
    if (other && other.id !== exceptId) throw portgroupAddressTaken(f.address);
  }
}

async function portgroupCollision(ctx: BaremetalContext, uuid: string, f: Pick<PortgroupFields, 'name' | 'address'>): Promise<DomainError> {
  if (await findPortgroup(ctx.database, uuid)) return portgroupUuidTaken(uuid);
  if (f.name !== null && (await findPortgroup(ctx.database, f.name))) return portgroupNameTaken(f.name);
  return portgroupAddressTaken(f.address ?? '');
}

export async function createPortgroup(ctx: BaremetalContext, uuid: string | null, f: PortgroupFields): Promise<PortgroupRecord> {
  const pgUuid = uuid ?? newUuid();
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        const node = await lockedParent(tx, f.node_uuid);
        if (await findPortgroup(tx, pgUuid)) throw portgroupUuidTaken(pgUuid);
        await checkPortgroupUnique(tx, f, null);
        await insertPortgroup(tx, {
          uuid: pgUuid,
          name: f.name,
          node_id: node.id,
          address: f.address,
          mode: f.mode,
          standalone_ports_supported: flag(f.standalone_ports_supported),
          properties: asJson(f.properties),
          internal_info: '{}',
          extra: asJson(f.extra),
          created_at: tx.clock.nowIso(),
          updated_at: null,
        });
        return (await findPortgroup(tx, pgUuid))!;
      }),
    () => portgroupCollision(ctx, pgUuid, f),
  );
}

export function portgroupDocument(g: PortgroupRecord): Record<string, unknown> {
  return {
    uuid: g.uuid,
    address: g.address,
    extra: JSON.parse(g.extra),
    mode: g.mode,
    name: g.name,
    node_uuid: g.node_uuid,
    properties: JSON.parse(g.properties),
    standalone_ports_supported: g.standalone_ports_supported === 1,
  };
}

export async function patchPortgroup(
  ctx: BaremetalContext,
  ident: string,
  edit: (doc: Record<string, unknown>) => Edit<PortgroupFields>,
): Promise<PortgroupRecord> {
  const found = await findPortgroup(ctx.database, ident);
  if (!found) throw portgroupNotFound(ident);
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        await lockNode(tx, found.node_id);
        const pg = await findPortgroup(tx, found.uuid);
        if (!pg) throw portgroupNotFound(ident);
        const { fields, changed } = edit(portgroupDocument(pg));
        await checkPortgroupUnique(tx, { name: changed('name') ? fields.name : null, address: changed('address') ? fields.address : null }, pg.id);
        let nodeId = pg.node_id;
        if (changed('node_uuid')) {
          nodeId = (await lockedParent(tx, fields.node_uuid)).id;
          if (await portgroupHasPorts(tx, pg.id)) throw baremetalDomainError('portgroup_not_empty', { portgroup: pg.uuid }, `port group ${pg.uuid} has ports`);
        }
        await updatePortgroup(tx, pg.id, {
          node_id: nodeId,
          name: fields.name,
          address: fields.address,
          mode: fields.mode,
          standalone_ports_supported: flag(fields.standalone_ports_supported),
          properties: asJson(fields.properties),
          extra: asJson(fields.extra),
          updated_at: tx.clock.nowIso(),
        });
        return (await findPortgroup(tx, pg.uuid))!;
      }),
    async () => baremetalDomainError('portgroup_changed_concurrently', {}, 'a name or address of the patch was taken concurrently'),
  );
}

export async function deletePortgroup(ctx: BaremetalContext, ident: string): Promise<void> {
  const found = await findPortgroup(ctx.database, ident);
  if (!found) throw portgroupNotFound(ident);
  await transaction(ctx.database, async (tx) => {
    await lockNode(tx, found.node_id);
    const pg = await findPortgroup(tx, found.uuid);
    if (!pg) throw portgroupNotFound(ident);
    if (await portgroupHasPorts(tx, pg.id)) throw baremetalDomainError('portgroup_not_empty', { portgroup: pg.uuid }, `port group ${pg.uuid} has ports`);
    await deletePortgroupRow(tx, pg.id);
  });
}

// ---- ports -----------------------------------------------------------------------------------

export interface PortFields {
  node_uuid: string;
  /** lower case */
  address: string;
  portgroup_uuid: string | null;
  local_link_connection: unknown;
  pxe_enabled: boolean;
  physical_network: string | null;
  is_smartnic: boolean;
  extra: unknown;
}

const portUuidTaken = (uuid: string) => baremetalDomainError('port_uuid_taken', { uuid }, `a port has uuid ${uuid}`);
const portAddressTaken = (mac: string) => baremetalDomainError('port_address_taken', { mac }, `a port has address ${mac}`);

/** The port group a port joins: it exists (else 400), is on the port's node and takes PXE ports if the port is one. */
async function portgroupFor(tx: Tx, f: PortFields, nodeId: number): Promise<number | null> {
  if (f.portgroup_uuid === null) return null;
  const pg = await findPortgroup(tx, f.portgroup_uuid);
  if (!pg) throw baremetalDomainError('port_portgroup_not_found', { ident: f.portgroup_uuid }, `no port group ${f.portgroup_uuid}`);
  if (pg.node_id !== nodeId) throw baremetalDomainError('portgroup_of_other_node', {}, 'the port group is on another node');
  if (f.pxe_enabled && pg.standalone_ports_supported !== 1)
    throw baremetalDomainError('portgroup_no_standalone', { portgroup: pg.uuid }, 'no standalone ports');
  return pg.id;
}

/**
 * A port in a port group must be on the physical network of the group's other ports (none is a
 * network too), as Ironic's conductor checks when a port joins a group or changes its network.
 */
async function checkPhysnet(tx: Tx, portgroupId: number, portgroupUuid: string, physnet: string | null, portId: number | null): Promise<void> {
  const [groupPhysnet] = await portgroupPhysnets(tx, portgroupId, portId);
  if (groupPhysnet === undefined || groupPhysnet === physnet) return;
  throw baremetalDomainError(
    'port_physnet_mismatch',
    { physnet, portgroup: portgroupUuid, portgroupPhysnet: groupPhysnet },
    `port group ${portgroupUuid} is on physical network ${groupPhysnet}`,
  );
}

export async function createPort(ctx: BaremetalContext, uuid: string | null, f: PortFields): Promise<PortRecord> {
  const portUuid = uuid ?? newUuid();
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        const node = await lockedParent(tx, f.node_uuid);
        const portgroupId = await portgroupFor(tx, f, node.id);
        if (portgroupId !== null) await checkPhysnet(tx, portgroupId, f.portgroup_uuid!, f.physical_network, null);
        if (await findPort(tx, portUuid)) throw portUuidTaken(portUuid);
        if (await findPortByAddress(tx, f.address)) throw portAddressTaken(f.address);
        await insertPort(tx, {
          uuid: portUuid,
          address: f.address,
          node_id: node.id,
          portgroup_id: portgroupId,
          local_link_connection: asJson(f.local_link_connection),
          pxe_enabled: flag(f.pxe_enabled),
          physical_network: f.physical_network,
          is_smartnic: flag(f.is_smartnic),
          internal_info: '{}',
          extra: asJson(f.extra),
          created_at: tx.clock.nowIso(),
          updated_at: null,
        });
        return (await findPort(tx, portUuid))!;
      }),
    async () => ((await findPort(ctx.database, portUuid)) ? portUuidTaken(portUuid) : portAddressTaken(f.address)),
  );
}

export function portDocument(p: PortRecord): Record<string, unknown> {
  return {
    uuid: p.uuid,
    address: p.address,
    extra: JSON.parse(p.extra),
    is_smartnic: p.is_smartnic === 1,
    local_link_connection: JSON.parse(p.local_link_connection),
    node_uuid: p.node_uuid,
    physical_network: p.physical_network,
    portgroup_uuid: p.portgroup_uuid,
    pxe_enabled: p.pxe_enabled === 1,
  };
}

export async function patchPort(ctx: BaremetalContext, uuid: string, edit: (doc: Record<string, unknown>) => Edit<PortFields>): Promise<PortRecord> {
  const found = await findPort(ctx.database, uuid);
  if (!found) throw portNotFound(uuid);
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        await lockNode(tx, found.node_id);
        const port = await findPort(tx, uuid);
        if (!port) throw portNotFound(uuid);
        const { fields, changed } = edit(portDocument(port));
        const nodeId = changed('node_uuid') ? (await lockedParent(tx, fields.node_uuid)).id : port.node_id;
        const portgroupId =
          changed('portgroup_uuid') || changed('node_uuid') || changed('pxe_enabled') ? await portgroupFor(tx, fields, nodeId) : port.portgroup_id;
        if (portgroupId !== null && (changed('portgroup_uuid') || changed('physical_network')))
          await checkPhysnet(tx, portgroupId, fields.portgroup_uuid!, fields.physical_network, port.id);
        if (changed('address')) {
          const other = await findPortByAddress(tx, fields.address);
          if (other && other.id !== port.id) throw portAddressTaken(fields.address);
        }
        await updatePort(tx, port.id, {
          address: fields.address,
          node_id: nodeId,
          portgroup_id: portgroupId,
          local_link_connection: asJson(fields.local_link_connection),
          pxe_enabled: flag(fields.pxe_enabled),
          physical_network: fields.physical_network,
          is_smartnic: flag(fields.is_smartnic),
          extra: asJson(fields.extra),
          updated_at: tx.clock.nowIso(),
        });
        return (await findPort(tx, uuid))!;
      }),
    async () => baremetalDomainError('port_changed_concurrently', {}, 'the address of the patch was taken concurrently'),
  );
}

export async function deletePort(ctx: BaremetalContext, uuid: string): Promise<void> {
  const found = await findPort(ctx.database, uuid);
  if (!found) throw portNotFound(uuid);
  await transaction(ctx.database, async (tx) => {
    await lockNode(tx, found.node_id);
    const port = await findPort(tx, uuid);
    if (!port) throw portNotFound(uuid);
    await deletePortRow(tx, port.id);
  });
}
