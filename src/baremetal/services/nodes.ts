// A node itself, each write one transaction: create, patch (and the deallocation an
// `instance_uuid` removal triggers), delete. Its states are node-states.ts, its traits
// node-traits.ts, its fields and patchable document node-fields.ts, the release of its allocation
// node-allocation.ts, the locks every node write takes node-locks.ts. The request was parsed and
// its values checked by the route; what is refused here are the facts of the node (its lock, its
// state, names and instances taken), as DomainErrors that errors.ts words.
import { newUuid } from '../../core/uuid.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import type { Tx } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import { INTERFACES } from '../core/rules.js';
import { DELETE_ALLOWED_STATES, UPDATE_ALLOWED_STATES } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import { findAllocationById } from '../store/allocations.js';
import { findChassis } from '../store/chassis.js';
import { deleteNodeInventory } from '../store/ports.js';
import { deleteNodeVolumes } from '../store/volumes.js';
import {
  type NodeChanges,
  type NodeRecord,
  deleteNodeRow,
  detachAllocations,
  findNode,
  insertNode,
  instanceUuidTaken,
  lockNode,
  updateNode,
} from '../store/nodes.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import { DOCUMENTS, type NodeEdit, type NodeFields, nodeDocument } from './node-fields.js';
import { deallocate } from './node-allocation.js';
import { nodeProtected, nodeTransaction, requireLockedNode, requireUnlocked } from './node-locks.js';

const asJson = (v: unknown) => JSON.stringify(v ?? {});

// ---- domain errors ---------------------------------------------------------------------------

const nameTaken = (name: string) => baremetalDomainError('node_name_taken', { name }, `a node is named ${name}`);
const uuidTaken = (uuid: string) => baremetalDomainError('node_uuid_taken', { uuid }, `a node has uuid ${uuid}`);
export const instanceAssociated = (instance: string, node: string) =>
  baremetalDomainError('instance_associated', { instance, node }, `instance ${instance} is on another node than ${node}`);
export const nodeAssociated = (node: string, instance: string) =>
  baremetalDomainError('node_associated', { node, instance }, `node ${node} has instance ${instance}`);
const notInAllowedState = (node: NodeRecord, what: 'interfaces' | 'resource_class' | 'instance_uuid_removal', fields: string[] = []) =>
  baremetalDomainError(
    'update_not_allowed',
    { node: node.uuid, what, fields, allowed: UPDATE_ALLOWED_STATES },
    `node ${node.uuid} cannot change ${what} in state ${node.provision_state}`,
  );

/** The id of the chassis a node is put in; a chassis that does not exist is the request's fault (400). */
async function chassisId(tx: Tx, uuid: string | null): Promise<number | null> {
  if (uuid === null) return null;
  const chassis = await findChassis(tx, uuid);
  if (!chassis) throw baremetalDomainError('node_chassis_not_found', { ident: uuid }, `no chassis ${uuid}`);
  return chassis.id;
}

// ---- create, patch, delete -------------------------------------------------------------------

export interface NewNode {
  /** normalized; null: a new one */
  uuid: string | null;
  /** where the node starts: `enroll` (1.11+) or `available` (before, when nodes were born available) */
  provisionState: 'enroll' | 'available';
  fields: NodeFields;
}

export async function createNode(ctx: BaremetalContext, input: NewNode): Promise<NodeRecord> {
  const f = input.fields;
  const nodeUuid = input.uuid ?? newUuid();
  await ctx.backend.prepare(ctx.database, { resourceClass: f.resource_class });
  const now = ctx.clock.nowIso();
  try {
    return await transaction(ctx.database, async (tx) => {
      if (await findNode(tx, nodeUuid)) throw uuidTaken(nodeUuid);
      if (f.name !== null && (await findNode(tx, f.name))) throw nameTaken(f.name);
      if (f.instance_uuid && (await instanceUuidTaken(tx, f.instance_uuid))) throw instanceAssociated(f.instance_uuid, nodeUuid);
      const chassis = await chassisId(tx, f.chassis_uuid);
      const id = await insertNode(
        tx,
        {
          uuid: nodeUuid,
          name: f.name,
          driver: f.driver,
          resource_class: f.resource_class,
          provision_state: input.provisionState,
          target_provision_state: null,
          provision_updated_at: null,
          power_state: null,
          target_power_state: null,
          maintenance: f.maintenance ? 1 : 0,
          maintenance_reason: null,
          fault: null,
          instance_uuid: f.instance_uuid,
          allocation_id: null,
          reservation: null,
          last_error: null,
          owner: f.owner,
          lessee: f.lessee,
          description: f.description,
          conductor_group: f.conductor_group,
          automated_clean: f.automated_clean === null ? null : f.automated_clean ? 1 : 0,
          protected: 0,
          protected_reason: null,
          retired: f.retired ? 1 : 0,
          retired_reason: f.retired ? f.retired_reason : null,
          shard: f.shard,
          instance_info: asJson(f.instance_info),
          properties: asJson(f.properties),
          extra: asJson(f.extra),
          driver_info: asJson(f.driver_info),
          network_data: asJson(f.network_data),
          interfaces: JSON.stringify(f.interfaces),
          inspection_started_at: null,
          inspection_finished_at: null,
          chassis_id: chassis,
          created_at: now,
          updated_at: null,
        },
        [],
      );
      const node = (await lockNode(tx, id))!;
      await ctx.backend.nodeChanged(tx, node);
      return node;
    });
  } catch (err) {
    // two creators raced past the checks: report what the loser collided with
    if (isUniqueViolation(err)) {
      if (await findNode(ctx.database, nodeUuid)) throw uuidTaken(nodeUuid);
      if (f.name !== null && (await findNode(ctx.database, f.name))) throw nameTaken(f.name);
      throw instanceAssociated(f.instance_uuid ?? '', nodeUuid);
    }
    throw err;
  }
}

/** A node PATCH as the route parsed it. */
export interface NodePatch {
  /** the route's: apply the patch to the node's document and check the result */
  edit(doc: Record<string, unknown>): NodeEdit;
  /** a class the patch may set, made known to the backend first */
  resourceClass: string | null;
  /**
   * The patch sets an owner (adds or replaces /owner, as Ironic checks): whether this caller may
   * do so on this node while it is active (the policy's update_owner_provisioned).
   */
  setsOwner?: { allowedWhileActive(node: NodeRecord): boolean };
}

/**
 * PATCH: the edit runs on the node as locked in this transaction, so concurrent patches compose,
 * and the rules that refuse it (a new owner for an active node or for one whose allocation has an
 * owner, …) read the node and its allocation under that same lock: an allocation that takes the
 * node concurrently is either seen here or waits for this commit.
 */
export async function patchNode(ctx: BaremetalContext, ident: string, patch: NodePatch): Promise<NodeRecord> {
  if (patch.resourceClass !== null) await ctx.backend.prepare(ctx.database, { resourceClass: patch.resourceClass });
  return nodeTransaction(ctx, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    if (patch.setsOwner) await checkOwnerChange(tx, node, patch.setsOwner.allowedWhileActive(node));
    const { fields: after, changed } = patch.edit(nodeDocument(node));
    requireUnlocked(node);
    const changes: NodeChanges = {};

    if (changed('name')) {
      if (after.name !== null && (await findNode(tx, after.name))) throw nameTaken(after.name);
      changes.name = after.name;
    }
    if (changed('driver')) changes.driver = after.driver;
    if (changed('chassis_uuid')) changes.chassis_id = await chassisId(tx, after.chassis_uuid);
    if (changed('conductor_group')) changes.conductor_group = after.conductor_group;
    if (changed('description')) changes.description = after.description;
    for (const f of ['owner', 'lessee', 'shard'] as const) if (changed(f)) changes[f] = after[f];
    for (const d of DOCUMENTS) if (changed(d)) changes[d] = asJson(after[d]);
    if (changed('automated_clean')) changes.automated_clean = after.automated_clean === null ? null : after.automated_clean ? 1 : 0;

    const interfaceFields = Object.keys(INTERFACES).filter(changed);
    if (interfaceFields.length) {
      if (!UPDATE_ALLOWED_STATES.includes(node.provision_state) && node.maintenance !== 1) throw notInAllowedState(node, 'interfaces', interfaceFields);
      changes.interfaces = JSON.stringify(after.interfaces);
    }

    if (after.maintenance !== (node.maintenance === 1)) {
      changes.maintenance = after.maintenance ? 1 : 0;
      if (!after.maintenance) Object.assign(changes, { maintenance_reason: null, fault: null });
    }

    if (changed('protected') || changed('protected_reason')) {
      if (changed('protected') && after.protected && !['active', 'rescue'].includes(node.provision_state)) {
        throw baremetalDomainError(
          'protect_not_allowed',
          { node: node.uuid, state: node.provision_state },
          `node ${node.uuid} cannot be protected in ${node.provision_state}`,
        );
      }
      // un-protecting clears the reason, even one the request names (Ironic's _check_update_protected)
      const reason = changed('protected') && !after.protected ? null : after.protected_reason;
      if (reason && !after.protected) throw baremetalDomainError('reason_without_flag', { flag: 'protected' }, 'protected_reason needs protected');
      changes.protected = after.protected ? 1 : 0;
      changes.protected_reason = reason;
    }
    if (changed('retired') || changed('retired_reason')) {
      if (changed('retired') && after.retired && node.provision_state === 'available') {
        throw baremetalDomainError(
          'retire_not_allowed',
          { node: node.uuid, state: node.provision_state },
          `node ${node.uuid} cannot be retired while available`,
        );
      }
      // un-retiring clears the reason, even one the request names (Ironic's _check_update_retired)
      const reason = changed('retired') && !after.retired ? null : after.retired_reason;
      if (reason && !after.retired) throw baremetalDomainError('reason_without_flag', { flag: 'retired' }, 'retired_reason needs retired');
      changes.retired = after.retired ? 1 : 0;
      changes.retired_reason = reason;
    }

    if (changed('resource_class')) {
      if (node.resource_class !== null && !UPDATE_ALLOWED_STATES.includes(node.provision_state)) throw notInAllowedState(node, 'resource_class');
      // allot: the class an allocation was made for stays true while it lasts (and in the
      // placement backend the claim is on the old class's inventory)
      if (node.allocation_id !== null) {
        throw baremetalDomainError(
          'resource_class_allocated',
          { node: node.uuid, allocation: node.allocation_uuid },
          `node ${node.uuid} has allocation ${node.allocation_uuid}`,
        );
      }
      changes.resource_class = after.resource_class;
    }

    if (changed('instance_uuid')) {
      const instance = after.instance_uuid;
      if (instance !== null && node.instance_uuid !== null && instance !== node.instance_uuid) throw nodeAssociated(node.uuid, node.instance_uuid);
      if (instance !== null && (await instanceUuidTaken(tx, instance, node.id))) throw instanceAssociated(instance, node.uuid);
      if (instance === null && node.allocation_id !== null) {
        if (node.maintenance !== 1 && !UPDATE_ALLOWED_STATES.includes(node.provision_state)) throw notInAllowedState(node, 'instance_uuid_removal');
        await deallocate(tx, ctx, node, 'instance_uuid removed from the node');
      }
      if (instance !== node.instance_uuid) changes.instance_uuid = instance;
    }

    changes.updated_at = tx.clock.nowIso();
    await updateNode(tx, node.id, changes);
    const updated = (await lockNode(tx, node.id))!;
    if (changes.resource_class !== undefined) await ctx.backend.nodeChanged(tx, updated);
    // The answer is the node as this conductor held it while changing it: Ironic's update runs
    // under the node's lock and answers before releasing it, so clients see `reservation` set
    // (and may wait for it to clear, e.g. while instance_uuid changes). Here the row lock of this
    // transaction is that lock; it is released at commit, so the row itself never shows it.
    return { ...updated, reservation: ctx.conductorId };
  }).catch((err) => {
    if (isUniqueViolation(err)) throw baremetalDomainError('node_changed_concurrently', {}, 'a name or instance_uuid of the patch was taken concurrently');
    throw err;
  });
}

/**
 * A new owner for a node, checked as Ironic checks it before any other part of the patch: refused
 * (409) while the node is active unless the policy allows it, and while the node's allocation has
 * an owner (the allocation was made for that project's node). The node is locked by the caller.
 */
async function checkOwnerChange(tx: Tx, node: NodeRecord, allowedWhileActive: boolean): Promise<void> {
  if (node.provision_state === 'active' && !allowedWhileActive)
    throw baremetalDomainError('owner_change_active', { node: node.uuid }, `node ${node.uuid} is active`);
  const allocation = node.allocation_id === null ? undefined : await findAllocationById(tx, node.allocation_id);
  if (allocation?.owner) {
    throw baremetalDomainError(
      'owner_change_allocated',
      { node: node.uuid, allocation: allocation.uuid },
      `node ${node.uuid} is allocated to ${allocation.owner}`,
    );
  }
}

export async function deleteNode(ctx: BaremetalContext, ident: string): Promise<void> {
  await nodeTransaction(ctx, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    requireUnlocked(node);
    if (node.maintenance !== 1 && node.instance_uuid !== null) throw nodeAssociated(node.uuid, node.instance_uuid);
    if (node.protected === 1) throw nodeProtected(node);
    if (node.maintenance !== 1 && !DELETE_ALLOWED_STATES.includes(node.provision_state)) {
      throw baremetalDomainError(
        'delete_not_allowed',
        { node: node.uuid, state: node.provision_state, allowed: DELETE_ALLOWED_STATES },
        `node ${node.uuid} cannot be deleted in ${node.provision_state}`,
      );
    }
    // "If a node is deleted with allocation (possible only in maintenance mode), the allocation
    // is deleted as well."
    await deallocate(tx, ctx, node, 'node deleted');
    // allocations still working on it (allocating) or failed ones pointing at it let go
    await detachAllocations(tx, node.id);
    await ctx.backend.nodeDeleted(tx, node.uuid);
    await deleteNodeInventory(tx, node.id);
    await deleteNodeVolumes(tx, node.id);
    await deleteNodeRow(tx, node.id);
  });
}
