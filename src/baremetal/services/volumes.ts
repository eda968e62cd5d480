// Volume connectors and targets: create, patch, delete, each one transaction under the node's row
// lock. As in Ironic, changing or deleting one needs its node unlocked (no transition running:
// 409 NodeLocked) and powered off; a connector's type and
// id, and a target's boot index on its node, are unique (409).
import type { DomainError } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import type { Tx } from '../../db/database.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { type NodeRecord, lockNode } from '../store/nodes.js';
import { nodeTransaction } from './node-locks.js';
import {
  type ConnectorRecord,
  type TargetRecord,
  type VolumeFilters,
  type VolumeKind,
  bootIndexTaken,
  connectorTaken,
  deleteVolumeRow,
  findVolume,
  insertConnector,
  insertTarget,
  listVolumes,
  requireVolume,
  updateConnector,
  updateTarget,
  volumeNotFound,
} from '../store/volumes.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import type { Page } from '../core/paging.js';

export { type ConnectorRecord, type TargetRecord, type VolumeFilters, type VolumeKind, volumeNotFound } from '../store/volumes.js';

/** The connector or target with this uuid, or volume_<kind>_not_found. */
export function getVolume<K extends VolumeKind>(ctx: BaremetalContext, kind: K, uuid: string) {
  return requireVolume(ctx.database, kind, uuid);
}

export function listVolumePage<K extends VolumeKind>(ctx: BaremetalContext, kind: K, filters: VolumeFilters, page: Page) {
  return listVolumes(ctx.database, kind, filters, page);
}

const asJson = (v: unknown) => JSON.stringify(v ?? {});

export interface ConnectorFields {
  node_uuid: string;
  type: string;
  connector_id: string;
  extra: unknown;
}

export interface TargetFields {
  node_uuid: string;
  volume_type: string;
  volume_id: string;
  boot_index: number;
  properties: unknown;
  extra: unknown;
}

const connectorTakenError = (f: ConnectorFields) =>
  baremetalDomainError('volume_connector_taken', { type: f.type, connectorId: f.connector_id }, `a connector is ${f.type} ${f.connector_id}`);
const bootIndexTakenError = (bootIndex: number) => baremetalDomainError('volume_target_boot_index_taken', { bootIndex }, `boot index ${bootIndex} is taken`);
const uuidTaken = (kind: VolumeKind, uuid: string) => baremetalDomainError(`volume_${kind}_uuid_taken`, { uuid }, `a volume ${kind} has uuid ${uuid}`);

async function lockedParent(tx: Tx, nodeUuid: string): Promise<NodeRecord> {
  const node = await lockNode(tx, nodeUuid);
  if (!node) throw baremetalDomainError('parent_node_not_found', { ident: nodeUuid }, `no node ${nodeUuid}`);
  return node;
}

/** Changing or deleting a node's volume configuration needs the node powered off (Ironic's InvalidStateRequested). */
function requirePoweredOff(node: NodeRecord, action: string): void {
  if (node.power_state !== 'power off') {
    throw baremetalDomainError('invalid_state_requested', { action, node: node.uuid, state: node.power_state }, `${action} needs ${node.uuid} powered off`);
  }
}

async function uniquely<T>(work: () => Promise<T>, collision: () => DomainError): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) throw collision();
    throw err;
  }
}

export async function createConnector(ctx: BaremetalContext, uuid: string | null, f: ConnectorFields): Promise<ConnectorRecord> {
  const id = uuid ?? newUuid();
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        const node = await lockedParent(tx, f.node_uuid);
        if (await findVolume(tx, 'connector', id)) throw uuidTaken('connector', id);
        if (await connectorTaken(tx, f.type, f.connector_id, null)) throw connectorTakenError(f);
        const now = tx.clock.nowIso();
        await insertConnector(tx, {
          uuid: id,
          node_id: node.id,
          type: f.type,
          connector_id: f.connector_id,
          extra: asJson(f.extra),
          created_at: now,
          updated_at: null,
        });
        return (await findVolume(tx, 'connector', id))!;
      }),
    () => connectorTakenError(f),
  );
}

export async function createTarget(ctx: BaremetalContext, uuid: string | null, f: TargetFields): Promise<TargetRecord> {
  const id = uuid ?? newUuid();
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        const node = await lockedParent(tx, f.node_uuid);
        if (await findVolume(tx, 'target', id)) throw uuidTaken('target', id);
        if (await bootIndexTaken(tx, node.id, f.boot_index, null)) throw bootIndexTakenError(f.boot_index);
        await insertTarget(tx, {
          uuid: id,
          node_id: node.id,
          volume_type: f.volume_type,
          volume_id: f.volume_id,
          boot_index: f.boot_index,
          properties: asJson(f.properties),
          extra: asJson(f.extra),
          created_at: tx.clock.nowIso(),
          updated_at: null,
        });
        return (await findVolume(tx, 'target', id))!;
      }),
    () => bootIndexTakenError(f.boot_index),
  );
}

export function connectorDocument(c: ConnectorRecord): Record<string, unknown> {
  return { uuid: c.uuid, node_uuid: c.node_uuid, type: c.type, connector_id: c.connector_id, extra: JSON.parse(c.extra) };
}

export function targetDocument(t: TargetRecord): Record<string, unknown> {
  return {
    uuid: t.uuid,
    node_uuid: t.node_uuid,
    volume_type: t.volume_type,
    volume_id: t.volume_id,
    boot_index: t.boot_index,
    properties: JSON.parse(t.properties),
    extra: JSON.parse(t.extra),
  };
}

/** The volume resource, locked with its node (and the node it moves to, if it moves); the node must be powered off. */
async function lockedForChange<K extends VolumeKind>(tx: Tx, kind: K, uuid: string, action: string) {
  const found = await findVolume(tx, kind, uuid);
  if (!found) throw volumeNotFound(kind, uuid);
  const node = (await lockNode(tx, found.node_id))!;
  // a transition (a power change) holds the node's lock: Ironic's NodeLocked 409 once
  // --node-lock-wait is over (nodeTransaction)
  if (node.reservation !== null) {
    throw baremetalDomainError('node_locked', { node: node.uuid, host: node.reservation }, `node ${node.uuid} is locked by ${node.reservation}`);
  }
  requirePoweredOff(node, action);
  return (await findVolume(tx, kind, uuid))!;
}

export async function patchConnector(ctx: BaremetalContext, uuid: string, edit: (doc: Record<string, unknown>) => ConnectorFields): Promise<ConnectorRecord> {
  let fields: ConnectorFields | null = null;
  return uniquely(
    () =>
      nodeTransaction(ctx, async (tx) => {
        const c = await lockedForChange(tx, 'connector', uuid, 'volume connector update');
        const f = edit(connectorDocument(c));
        fields = f;
        const nodeId = f.node_uuid === c.node_uuid ? c.node_id : (await lockedParent(tx, f.node_uuid)).id;
        if (await connectorTaken(tx, f.type, f.connector_id, c.id)) throw connectorTakenError(f);
        await updateConnector(tx, c.id, { node_id: nodeId, type: f.type, connector_id: f.connector_id, extra: asJson(f.extra), updated_at: tx.clock.nowIso() });
        return (await findVolume(tx, 'connector', uuid))!;
      }),
    () => connectorTakenError(fields!),
  );
}

export async function patchTarget(ctx: BaremetalContext, uuid: string, edit: (doc: Record<string, unknown>) => TargetFields): Promise<TargetRecord> {
  let bootIndex = -1;
  return uniquely(
    () =>
      nodeTransaction(ctx, async (tx) => {
        const t = await lockedForChange(tx, 'target', uuid, 'volume target update');
        const f = edit(targetDocument(t));
        bootIndex = f.boot_index;
        const nodeId = f.node_uuid === t.node_uuid ? t.node_id : (await lockedParent(tx, f.node_uuid)).id;
        if (await bootIndexTaken(tx, nodeId, f.boot_index, t.id)) throw bootIndexTakenError(f.boot_index);
        await updateTarget(tx, t.id, {
          node_id: nodeId,
          volume_type: f.volume_type,
          volume_id: f.volume_id,
          boot_index: f.boot_index,
          properties: asJson(f.properties),
          extra: asJson(f.extra),
          updated_at: tx.clock.nowIso(),
        });
        return (await findVolume(tx, 'target', uuid))!;
      }),
    () => bootIndexTakenError(bootIndex),
  );
}

export async function deleteVolume(ctx: BaremetalContext, kind: VolumeKind, uuid: string): Promise<void> {
  await nodeTransaction(ctx, async (tx) => {
    const found = await lockedForChange(tx, kind, uuid, `volume ${kind} deletion`);
    await deleteVolumeRow(tx, kind, found.id);
  });
}
