// SQL for bare-metal nodes and their traits. A node is read with its traits and the uuid of its
// allocation (the API shows `allocation_uuid`, the table holds `allocation_id`).
import type { Insertable, Updateable } from 'kysely';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import type { Db, ReadOnlyKysely, Tx } from '../../db/database.js';
import type { BaremetalNodeRow, BaremetalNodeTable } from '../../db/schema.js';

import type { ColumnCondition, Page } from '../core/paging.js';
import { applyColumns, applyPage } from './paging.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export interface NodeRecord extends BaremetalNodeRow {
  traits: string[];
  allocation_uuid: string | null;
  chassis_uuid: string | null;
}

export type NodeChanges = Updateable<BaremetalNodeTable>;
export type NewNode = Insertable<BaremetalNodeTable>;

function selectNodes(db: ReadOnlyKysely) {
  return db
    .selectFrom('baremetal_nodes as t')
    .leftJoin('baremetal_allocations as a', 'a.id', 't.allocation_id')
    .leftJoin('baremetal_chassis as c', 'c.id', 't.chassis_id')
    .selectAll('t')
    .select(['a.uuid as allocation_uuid', 'c.uuid as chassis_uuid']);
}

async function withTraits(db: Db, rows: Array<BaremetalNodeRow & { allocation_uuid: string | null; chassis_uuid: string | null }>): Promise<NodeRecord[]> {
  if (rows.length === 0) return [];
  const traits = await traitsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({ ...r, traits: traits.get(r.id) ?? [] }));
}

/** node id → its traits, sorted */
export async function traitsOf(db: Db, nodeIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (let i = 0; i < nodeIds.length; i += 500) {
    const rows = await db.db
      .selectFrom('baremetal_node_traits')
      .select(['node_id', 'trait'])
      .where('node_id', 'in', nodeIds.slice(i, i + 500))
      .orderBy('trait')
      .execute();
    for (const r of rows) out.set(r.node_id, [...(out.get(r.node_id) ?? []), r.trait]);
  }
  return out;
}

/** A node by uuid (any spelling oslo's is_uuid_like accepts) or by name. */
export async function findNode(db: Db, ident: string): Promise<NodeRecord | undefined> {
  const q = selectNodes(db.db);
  const row = await (isUuidLike(ident) ? q.where('t.uuid', '=', normalizeUuid(ident)) : q.where('t.name', '=', ident)).executeTakeFirst();
  return row ? (await withTraits(db, [row]))[0] : undefined;
}

export const nodeNotFound = (ident: string) => baremetalDomainError('node_not_found', { ident }, `no node ${ident}`);

/** A node that exists; `node_not_found` otherwise. */
export async function requireNode(db: Db, ident: string): Promise<NodeRecord> {
  const node = await findNode(db, ident);
  if (!node) throw nodeNotFound(ident);
  return node;
}

export async function findNodeById(db: Db, id: number): Promise<NodeRecord | undefined> {
  const row = await selectNodes(db.db).where('t.id', '=', id).executeTakeFirst();
  return row ? (await withTraits(db, [row]))[0] : undefined;
}

/**
 * Inside a write: the node, its row locked until commit on PostgreSQL (SQLite's BEGIN IMMEDIATE
 * already excludes every other writer), read after the lock so it is current.
 */
export async function lockNode(tx: Tx, ident: string | number): Promise<NodeRecord | undefined> {
  if (tx.dialect === 'postgres') {
    let q = tx.db.selectFrom('baremetal_nodes').select('id');
    q = typeof ident === 'number' ? q.where('id', '=', ident) : isUuidLike(ident) ? q.where('uuid', '=', normalizeUuid(ident)) : q.where('name', '=', ident);
    const locked = await q.forUpdate().executeTakeFirst();
    if (!locked) return undefined;
    return findNodeById(tx, locked.id);
  }
  return typeof ident === 'number' ? findNodeById(tx, ident) : findNode(tx, ident);
}

/** A node an allocation's candidate_nodes name, and whose it is. */
export interface ResolvedNode {
  id: number;
  uuid: string;
  owner: string | null;
  lessee: string | null;
}

/** uuids (or names) → the node, for the idents that exist. */
export async function resolveNodes(db: Db, idents: string[]): Promise<Map<string, ResolvedNode>> {
  const uuids = idents.filter(isUuidLike).map(normalizeUuid);
  const names = idents.filter((i) => !isUuidLike(i));
  const out = new Map<string, ResolvedNode>();
  if (uuids.length) {
    for (const r of await db.db.selectFrom('baremetal_nodes').select(['id', 'uuid', 'owner', 'lessee']).where('uuid', 'in', uuids).execute())
      out.set(r.uuid, r);
  }
  if (names.length) {
    for (const r of await db.db.selectFrom('baremetal_nodes').select(['id', 'uuid', 'owner', 'lessee', 'name']).where('name', 'in', names).execute())
      out.set(r.name!, r);
  }
  // uuids may have been given in another spelling
  for (const ident of idents) if (isUuidLike(ident) && !out.has(ident) && out.has(normalizeUuid(ident))) out.set(ident, out.get(normalizeUuid(ident))!);
  return out;
}

/** A column of the node table (what a node list's column filter compares: routes/nodes.ts NODE_FILTERS). */
export type NodeColumn = keyof BaremetalNodeTable & string;

/** The node list's filters: the declared column filters the request gives, and what the route makes of the others. */
export interface NodeFilters {
  columns: readonly ColumnCondition[];
  chassisId?: number;
  /** owned or leased by this project */
  project?: string;
  /** `shard`, a comma-separated list */
  shards?: string[];
  /** no node (the conductor filter named a conductor that is not alive) */
  none?: boolean;
}

export async function listNodes(db: Db, f: NodeFilters, page: Page): Promise<NodeRecord[]> {
  if (f.none) return [];
  let q = applyColumns(selectNodes(db.db), f.columns, db.dialect);
  if (f.chassisId !== undefined) q = q.where('t.chassis_id', '=', f.chassisId);
  if (f.project !== undefined) {
    const project = f.project;
    q = q.where((w) => w.or([w('t.owner', '=', project), w('t.lessee', '=', project)]));
  }
  if (f.shards !== undefined) q = q.where('t.shard', 'in', f.shards.length ? f.shards : ['']);
  return withTraits(db, await applyPage(q, page).execute());
}

export async function insertNode(tx: Tx, values: NewNode, traits: string[]): Promise<number> {
  const row = await tx.db.insertInto('baremetal_nodes').values(values).returning('id').executeTakeFirstOrThrow();
  await writeTraits(tx, row.id, traits);
  return row.id;
}

export async function updateNode(tx: Tx, id: number, changes: NodeChanges): Promise<void> {
  if (Object.keys(changes).length) await tx.db.updateTable('baremetal_nodes').set(changes).where('id', '=', id).execute();
}

export async function replaceNodeTraits(tx: Tx, id: number, traits: string[]): Promise<void> {
  await tx.db.deleteFrom('baremetal_node_traits').where('node_id', '=', id).execute();
  await writeTraits(tx, id, traits);
}

async function writeTraits(tx: Tx, id: number, traits: string[]): Promise<void> {
  const unique = [...new Set(traits)];
  if (unique.length)
    await tx.db
      .insertInto('baremetal_node_traits')
      .values(unique.map((trait) => ({ node_id: id, trait })))
      .execute();
}

export async function deleteNodeRow(tx: Tx, id: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_node_traits').where('node_id', '=', id).execute();
  await tx.db.deleteFrom('baremetal_nodes').where('id', '=', id).execute();
}

/** Is this instance uuid set on a node other than `exceptNodeId`? */
export async function instanceUuidTaken(db: Db, instanceUuid: string, exceptNodeId?: number): Promise<boolean> {
  let q = db.db.selectFrom('baremetal_nodes').select('id').where('instance_uuid', '=', instanceUuid);
  if (exceptNodeId !== undefined) q = q.where('id', '<>', exceptNodeId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Allocations that still point at a node (allocating, or failed there) let go of it, before it is deleted. */
export async function detachAllocations(tx: Tx, nodeId: number): Promise<void> {
  await tx.db.updateTable('baremetal_allocations').set({ node_id: null }).where('node_id', '=', nodeId).execute();
}

/** Every node's id and resource class, in id order (the Placement mirror's reconciliation). */
export async function allNodeClasses(db: Db): Promise<Array<{ id: number; resource_class: string | null }>> {
  return db.db.selectFrom('baremetal_nodes').select(['id', 'resource_class']).orderBy('id').execute();
}

/** Every trait some node has. */
export async function traitsInUse(db: Db): Promise<string[]> {
  return (await db.db.selectFrom('baremetal_node_traits').select('trait').distinct().execute()).map((r) => r.trait);
}

/** Of these uuids, those that are nodes' (in the placement backend, their providers' uuids). */
export async function nodeUuidsAmong(db: Db, uuids: readonly string[]): Promise<string[]> {
  if (!uuids.length) return [];
  const rows = await db.db
    .selectFrom('baremetal_nodes')
    .select('uuid')
    .where('uuid', 'in', [...uuids])
    .execute();
  return rows.map((r) => r.uuid);
}
