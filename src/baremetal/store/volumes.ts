// SQL for a node's volume connectors and volume targets (boot from volume), each read with its
// node's uuid, owner and lessee (what the API shows and what policy scopes it by).
import type { Insertable, Selectable, Updateable } from 'kysely';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';
import type { BaremetalVolumeConnectorTable, BaremetalVolumeTargetTable } from '../../db/schema.js';
import type { OfNode } from './ports.js';
import type { Page } from '../core/paging.js';
import { applyPage } from './paging.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export type ConnectorRecord = Selectable<BaremetalVolumeConnectorTable> & OfNode;

export type TargetRecord = Selectable<BaremetalVolumeTargetTable> & OfNode;

export type VolumeKind = 'connector' | 'target';
const TABLE = { connector: 'baremetal_volume_connectors', target: 'baremetal_volume_targets' } as const;

export const volumeNotFound = (kind: VolumeKind, ident: string) => baremetalDomainError(`volume_${kind}_not_found`, { ident }, `no volume ${kind} ${ident}`);

export interface VolumeFilters {
  nodeId?: number;
  /** of nodes this project owns or leases */
  project?: string;
}

function select(db: Db, kind: VolumeKind) {
  return db.db
    .selectFrom(`${TABLE[kind]} as t` as 'baremetal_volume_connectors as t')
    .innerJoin('baremetal_nodes as n', 'n.id', 't.node_id')
    .selectAll('t')
    .select(['n.uuid as node_uuid', 'n.owner as node_owner', 'n.lessee as node_lessee']);
}

export async function findVolume<K extends VolumeKind>(
  db: Db,
  kind: K,
  uuid: string,
): Promise<(K extends 'connector' ? ConnectorRecord : TargetRecord) | undefined> {
  if (!isUuidLike(uuid)) return undefined;
  return (await select(db, kind).where('t.uuid', '=', normalizeUuid(uuid)).executeTakeFirst()) as never;
}

export async function requireVolume<K extends VolumeKind>(db: Db, kind: K, uuid: string) {
  const found = await findVolume(db, kind, uuid);
  if (!found) throw volumeNotFound(kind, uuid);
  return found;
}

export async function listVolumes<K extends VolumeKind>(
  db: Db,
  kind: K,
  f: VolumeFilters,
  page: Page,
): Promise<Array<K extends 'connector' ? ConnectorRecord : TargetRecord>> {
  let q = select(db, kind);
  if (f.nodeId !== undefined) q = q.where('t.node_id', '=', f.nodeId);
  if (f.project !== undefined) {
    const project = f.project;
    q = q.where((w) => w.or([w('n.owner', '=', project), w('n.lessee', '=', project)]));
  }
  return (await applyPage(q, page).execute()) as never;
}

export async function insertConnector(tx: Tx, values: Insertable<BaremetalVolumeConnectorTable>): Promise<void> {
  await tx.db.insertInto('baremetal_volume_connectors').values(values).execute();
}

export async function insertTarget(tx: Tx, values: Insertable<BaremetalVolumeTargetTable>): Promise<void> {
  await tx.db.insertInto('baremetal_volume_targets').values(values).execute();
}

export async function updateConnector(tx: Tx, id: number, changes: Updateable<BaremetalVolumeConnectorTable>): Promise<void> {
  await tx.db.updateTable('baremetal_volume_connectors').set(changes).where('id', '=', id).execute();
}

export async function updateTarget(tx: Tx, id: number, changes: Updateable<BaremetalVolumeTargetTable>): Promise<void> {
  await tx.db.updateTable('baremetal_volume_targets').set(changes).where('id', '=', id).execute();
}

export async function deleteVolumeRow(tx: Tx, kind: VolumeKind, id: number): Promise<void> {
  await tx.db
    .deleteFrom(TABLE[kind] as 'baremetal_volume_connectors')
    .where('id', '=', id)
    .execute();
}

/** Is this (type, connector id) taken by another connector? */
export async function connectorTaken(db: Db, type: string, connectorId: string, exceptId: number | null): Promise<boolean> {
  const row = await db.db
    .selectFrom('baremetal_volume_connectors')
    .select('id')
    .where('type', '=', type)
    .where('connector_id', '=', connectorId)
    .executeTakeFirst();
  return row !== undefined && row.id !== exceptId;
}

/** Is this boot index of the node taken by another target? */
export async function bootIndexTaken(db: Db, nodeId: number, bootIndex: number, exceptId: number | null): Promise<boolean> {
  const row = await db.db
    .selectFrom('baremetal_volume_targets')
    .select('id')
    .where('node_id', '=', nodeId)
    .where('boot_index', '=', bootIndex)
    .executeTakeFirst();
  return row !== undefined && row.id !== exceptId;
}

/** A node's volume connectors and targets go with it. */
export async function deleteNodeVolumes(tx: Tx, nodeId: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_volume_connectors').where('node_id', '=', nodeId).execute();
  await tx.db.deleteFrom('baremetal_volume_targets').where('node_id', '=', nodeId).execute();
}
