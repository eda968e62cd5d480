// SQL for port groups and ports. A port or port group is read with its node's uuid, owner and
// lessee (what the API shows and what policy scopes it by) and a port with its port group's uuid.
import type { Insertable, Selectable, Updateable } from 'kysely';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import type { Db, ReadOnlyKysely, Tx } from '../../db/database.js';
import type { BaremetalPortTable, BaremetalPortgroupTable } from '../../db/schema.js';
import type { ColumnCondition, Page } from '../core/paging.js';
import { applyColumns, applyPage } from './paging.js';
import { baremetalDomainError } from '../core/domain-errors.js';

/** The node a port, port group or volume belongs to, as policy and the API see it. */
export interface OfNode {
  node_uuid: string;
  node_owner: string | null;
  node_lessee: string | null;
}

export type PortgroupRecord = Selectable<BaremetalPortgroupTable> & OfNode;

export type PortRecord = Selectable<BaremetalPortTable> & { portgroup_uuid: string | null } & OfNode;

export const portNotFound = (ident: string) => baremetalDomainError('port_not_found', { ident }, `no port ${ident}`);
export const portgroupNotFound = (ident: string) => baremetalDomainError('portgroup_not_found', { ident }, `no port group ${ident}`);

/** A column both the port and the port group tables have (what their lists' column filters compare: routes/ports.ts). */
export type PortColumn = keyof BaremetalPortTable & keyof BaremetalPortgroupTable & string;

/** Filters of the port and port group lists: the declared column filters the request gives, and what the route makes of the others. */
export interface PortFilters {
  columns?: readonly ColumnCondition[];
  nodeId?: number;
  portgroupId?: number;
  /** ports or port groups of nodes this project owns or leases */
  project?: string;
  /** of nodes in these shards */
  shards?: string[];
}

// ---- port groups -----------------------------------------------------------------------------

function selectPortgroups(db: ReadOnlyKysely) {
  return db
    .selectFrom('baremetal_portgroups as t')
    .innerJoin('baremetal_nodes as n', 'n.id', 't.node_id')
    .selectAll('t')
    .select(['n.uuid as node_uuid', 'n.owner as node_owner', 'n.lessee as node_lessee']);
}

/** A port group by uuid or name. */
export async function findPortgroup(db: Db, ident: string): Promise<PortgroupRecord | undefined> {
  const q = selectPortgroups(db.db);
  return (isUuidLike(ident) ? q.where('t.uuid', '=', normalizeUuid(ident)) : q.where('t.name', '=', ident)).executeTakeFirst();
}

export async function requirePortgroup(db: Db, ident: string): Promise<PortgroupRecord> {
  const found = await findPortgroup(db, ident);
  if (!found) throw portgroupNotFound(ident);
  return found;
}

export async function listPortgroups(db: Db, f: PortFilters, page: Page): Promise<PortgroupRecord[]> {
  let q = applyColumns(selectPortgroups(db.db), f.columns ?? [], db.dialect);
  if (f.nodeId !== undefined) q = q.where('t.node_id', '=', f.nodeId);
  if (f.project !== undefined) {
    const project = f.project;
    q = q.where((w) => w.or([w('n.owner', '=', project), w('n.lessee', '=', project)]));
  }
  if (f.shards !== undefined) q = q.where('n.shard', 'in', f.shards.length ? f.shards : ['']);
  return applyPage(q, page).execute();
}

export async function insertPortgroup(tx: Tx, values: Insertable<BaremetalPortgroupTable>): Promise<void> {
  await tx.db.insertInto('baremetal_portgroups').values(values).execute();
}

export async function updatePortgroup(tx: Tx, id: number, changes: Updateable<BaremetalPortgroupTable>): Promise<void> {
  await tx.db.updateTable('baremetal_portgroups').set(changes).where('id', '=', id).execute();
}

export async function portgroupHasPorts(db: Db, id: number): Promise<boolean> {
  return (await db.db.selectFrom('baremetal_ports').select('id').where('portgroup_id', '=', id).limit(1).executeTakeFirst()) !== undefined;
}

/** The physical networks of a port group's ports (null: a port without one), but for port `exceptPortId`. */
export async function portgroupPhysnets(db: Db, portgroupId: number, exceptPortId: number | null): Promise<Array<string | null>> {
  let q = db.db.selectFrom('baremetal_ports').select('physical_network').distinct().where('portgroup_id', '=', portgroupId);
  if (exceptPortId !== null) q = q.where('id', '!=', exceptPortId);
  return (await q.orderBy('physical_network').execute()).map((r) => r.physical_network);
}

export async function deletePortgroupRow(tx: Tx, id: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_portgroups').where('id', '=', id).execute();
}

// ---- ports -----------------------------------------------------------------------------------

function selectPorts(db: ReadOnlyKysely) {
  return db
    .selectFrom('baremetal_ports as t')
    .innerJoin('baremetal_nodes as n', 'n.id', 't.node_id')
    .leftJoin('baremetal_portgroups as g', 'g.id', 't.portgroup_id')
    .selectAll('t')
    .select(['n.uuid as node_uuid', 'n.owner as node_owner', 'n.lessee as node_lessee', 'g.uuid as portgroup_uuid']);
}

export async function findPort(db: Db, uuid: string): Promise<PortRecord | undefined> {
  if (!isUuidLike(uuid)) return undefined;
  return selectPorts(db.db).where('t.uuid', '=', normalizeUuid(uuid)).executeTakeFirst();
}

export async function requirePort(db: Db, uuid: string): Promise<PortRecord> {
  const found = await findPort(db, uuid);
  if (!found) throw portNotFound(uuid);
  return found;
}

export async function findPortByAddress(db: Db, address: string): Promise<PortRecord | undefined> {
  return selectPorts(db.db).where('t.address', '=', address).executeTakeFirst();
}

export async function listPorts(db: Db, f: PortFilters, page: Page): Promise<PortRecord[]> {
  let q = applyColumns(selectPorts(db.db), f.columns ?? [], db.dialect);
  if (f.nodeId !== undefined) q = q.where('t.node_id', '=', f.nodeId);
  if (f.portgroupId !== undefined) q = q.where('t.portgroup_id', '=', f.portgroupId);
  if (f.project !== undefined) {
    const project = f.project;
    q = q.where((w) => w.or([w('n.owner', '=', project), w('n.lessee', '=', project)]));
  }
  if (f.shards !== undefined) q = q.where('n.shard', 'in', f.shards.length ? f.shards : ['']);
  return applyPage(q, page).execute();
}

export async function insertPort(tx: Tx, values: Insertable<BaremetalPortTable>): Promise<void> {
  await tx.db.insertInto('baremetal_ports').values(values).execute();
}

export async function updatePort(tx: Tx, id: number, changes: Updateable<BaremetalPortTable>): Promise<void> {
  await tx.db.updateTable('baremetal_ports').set(changes).where('id', '=', id).execute();
}

export async function deletePortRow(tx: Tx, id: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_ports').where('id', '=', id).execute();
}

/** A node's ports and port groups go with it (Ironic's destroy_node). */
export async function deleteNodeInventory(tx: Tx, nodeId: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_ports').where('node_id', '=', nodeId).execute();
  await tx.db.deleteFrom('baremetal_portgroups').where('node_id', '=', nodeId).execute();
}
