// Node operations, each one transaction: create, patch, delete, traits, provision and power state
// changes (started here, finished by the transition timers), maintenance, and the deallocation
// that a node's tear-down, deletion or `instance_uuid` removal triggers. Every write locks the
// node row first (then, if needed, its allocation): one lock order. The request was parsed and
// its values checked by the route; what is refused here are the facts of the node (its lock, its
// state, names and instances taken), as DomainErrors that errors.ts words.
import { backoffDelay, sleep } from '../../core/backoff.js';
import { DomainError } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import type { Tx } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import { INTERFACES, MAX_TRAITS_PER_NODE } from '../core/rules.js';
import { DELETE_ALLOWED_STATES, POWER_TARGETS, TEARS_DOWN, UPDATE_ALLOWED_STATES, provisionTransition } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import { allocationHolder, deleteAllocationRow, findAllocationById } from '../store/allocations.js';
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
  nodeNotFound,
  replaceNodeTraits,
  updateNode,
} from '../store/nodes.js';
import { baremetalDomainError } from '../core/domain-errors.js';

/** The fields of a node a client sets (on create, or by PATCH), their values already checked. */
export interface NodeFields {
  name: string | null;
  driver: string;
  resource_class: string | null;
  /** lower case */
  conductor_group: string;
  description: string | null;
  owner: string | null;
  lessee: string | null;
  shard: string | null;
  automated_clean: boolean | null;
  maintenance: boolean;
  protected: boolean;
  protected_reason: string | null;
  retired: boolean;
  retired_reason: string | null;
  /** normalized */
  instance_uuid: string | null;
  /** the hardware interfaces that are not fake-hardware's default */
  interfaces: Record<string, string>;
  properties: unknown;
  extra: unknown;
  driver_info: unknown;
  instance_info: unknown;
  network_data: unknown;
  /** normalized; the chassis must exist */
  chassis_uuid: string | null;
}

/** The node's JSON documents (null when removed means {}). */
export const DOCUMENTS = ['properties', 'extra', 'driver_info', 'instance_info', 'network_data'] as const;

const asJson = (v: unknown) => JSON.stringify(v ?? {});

// ---- domain errors ---------------------------------------------------------------------------

const nodeLocked = (node: NodeRecord) =>
  baremetalDomainError('node_locked', { node: node.uuid, host: node.reservation }, `node ${node.uuid} is locked by ${node.reservation}`);
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
const nodeProtected = (node: NodeRecord) => baremetalDomainError('node_protected', { node: node.uuid }, `node ${node.uuid} is protected`);

/** The id of the chassis a node is put in; a chassis that does not exist is the request's fault (400). */
async function chassisId(tx: Tx, uuid: string | null): Promise<number | null> {
  if (uuid === null) return null;
  const chassis = await findChassis(tx, uuid);
  if (!chassis) throw baremetalDomainError('node_chassis_not_found', { ident: uuid }, `no chassis ${uuid}`);
  return chassis.id;
}

/** A node that exists, locked for this transaction. */
async function requireLockedNode(tx: Tx, ident: string | number): Promise<NodeRecord> {
  const node = await lockNode(tx, ident);
  if (!node) throw nodeNotFound(String(ident));
  return node;
}

/** Refused while another operation (an allocation or a transition) holds the node's lock. */
function requireUnlocked(node: NodeRecord): void {
  if (node.reservation !== null) throw nodeLocked(node);
}

/** Pauses between tries of a change that met the node's lock. */
const LOCK_BACKOFF = { baseMs: 10, maxMs: 200 };

/**
 * A transaction that changes a node and is refused while another operation holds the node's lock
 * (requireUnlocked): run again until the lock is free, for at most --node-lock-wait, as Ironic's
 * conductor tries a node's lock several times before it answers NodeLocked — a change right after
 * a quick transition (a power change, 10 ms here) waits for it instead of failing. The wait is
 * outside the transaction: the transition that holds the lock needs the node's row to finish.
 */
export async function nodeTransaction<T>(ctx: BaremetalContext, work: (tx: Tx) => Promise<T>): Promise<T> {
  const deadline = performance.now() + ctx.config.nodeLockWait;
  for (let round = 1; ; round++) {
    try {
      return await transaction(ctx.database, work);
    } catch (err) {
      const left = deadline - performance.now();
      if (!(err instanceof DomainError && err.code === 'node_locked') || left <= 0) throw err;
      await sleep(Math.min(left, backoffDelay(round, LOCK_BACKOFF)));
    }
  }
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

/** The patchable fields of a node, as JSON Patch sees them (every one present, null when unset). */
export function nodeDocument(node: NodeRecord): Record<string, unknown> {
  const interfaces = JSON.parse(node.interfaces) as Record<string, string>;
  const doc: Record<string, unknown> = {
    automated_clean: node.automated_clean === null ? null : node.automated_clean === 1,
    conductor_group: node.conductor_group,
    description: node.description,
    driver: node.driver,
    instance_uuid: node.instance_uuid,
    lessee: node.lessee,
    maintenance: node.maintenance === 1,
    name: node.name,
    owner: node.owner,
    protected: node.protected === 1,
    protected_reason: node.protected_reason,
    resource_class: node.resource_class,
    retired: node.retired === 1,
    retired_reason: node.retired_reason,
    shard: node.shard,
    chassis_uuid: node.chassis_uuid,
  };
  for (const d of DOCUMENTS) doc[d] = JSON.parse(node[d]);
  for (const [field, allowed] of Object.entries(INTERFACES)) doc[field] = interfaces[field] ?? allowed[0];
  return doc;
}

/** What the route makes of the node's document: the checked values after the patch, and which fields it changed. */
export interface NodeEdit {
  fields: NodeFields;
  changed(field: keyof NodeFields | string): boolean;
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

/**
 * Release a node's allocation inside the caller's transaction (node already locked): the backend
 * gives the claim back, the node forgets it, the allocation row goes. The spec's deallocation.
 */
export async function deallocate(tx: Tx, ctx: BaremetalContext, node: NodeRecord, reason: string, releasedBy?: string): Promise<void> {
  if (node.allocation_id === null) return;
  // A held allocation released by anyone but its holder (a tear-down, …): the holder learns of it.
  const heldBy = await allocationHolder(tx, node.allocation_id);
  if (heldBy !== null && heldBy !== releasedBy && node.allocation_uuid !== null) {
    await ctx.allocationHolder?.allocationReleased(tx, { heldBy, allocationUuid: node.allocation_uuid, nodeUuid: node.uuid, reason });
  }
  if (node.allocation_uuid !== null) await ctx.backend.release(tx, node.allocation_uuid);
  await updateNode(tx, node.id, {
    allocation_id: null,
    instance_uuid: node.instance_uuid === node.allocation_uuid ? null : node.instance_uuid,
    updated_at: tx.clock.nowIso(),
  });
  await deleteAllocationRow(tx, node.allocation_id);
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

// ---- traits ----------------------------------------------------------------------------------

async function changeTraits(ctx: BaremetalContext, ident: string, added: string[], change: (current: string[], node: NodeRecord) => string[]): Promise<void> {
  await ctx.backend.prepare(ctx.database, { traits: added });
  await nodeTransaction(ctx, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    requireUnlocked(node);
    const traits = [...new Set(change(node.traits, node))];
    if (traits.length > MAX_TRAITS_PER_NODE) {
      throw baremetalDomainError(
        'too_many_traits',
        { node: node.uuid, count: traits.length, max: MAX_TRAITS_PER_NODE },
        `node ${node.uuid} would have ${traits.length} traits`,
      );
    }
    await replaceNodeTraits(tx, node.id, traits);
    await updateNode(tx, node.id, { updated_at: tx.clock.nowIso() });
    await ctx.backend.nodeChanged(tx, { ...node, traits });
  });
}

export const setNodeTraits = (ctx: BaremetalContext, ident: string, traits: string[]) => changeTraits(ctx, ident, traits, () => traits);
export const addNodeTrait = (ctx: BaremetalContext, ident: string, trait: string) => changeTraits(ctx, ident, [trait], (current) => [...current, trait]);
export const removeAllNodeTraits = (ctx: BaremetalContext, ident: string) => changeTraits(ctx, ident, [], () => []);
export const removeNodeTrait = (ctx: BaremetalContext, ident: string, trait: string) =>
  changeTraits(ctx, ident, [], (current, node) => {
    if (!current.includes(trait)) throw baremetalDomainError('node_trait_not_found', { node: node.uuid, trait }, `node ${node.uuid} has no trait ${trait}`);
    return current.filter((t) => t !== trait);
  });

// ---- provision, power, maintenance -----------------------------------------------------------

/** Start a provision transition (PUT …/states/provision); the route checked the verb's arguments. */
export async function setProvisionState(ctx: BaremetalContext, ident: string, target: string): Promise<void> {
  const scheduled = await nodeTransaction(ctx, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    if (['active', 'deploy', 'rebuild'].includes(target) && node.maintenance === 1) {
      throw baremetalDomainError('node_in_maintenance', { node: node.uuid }, `node ${node.uuid} is in maintenance`);
    }
    const transition = provisionTransition(target, node.provision_state);
    if (!transition) {
      // a node busy in a transition is "locked" (409), as Ironic answers, not a bad request
      requireUnlocked(node);
      throw baremetalDomainError(
        'invalid_provision_action',
        { action: target, node: node.uuid, state: node.provision_state },
        `${target} is not possible in ${node.provision_state}`,
      );
    }
    requireUnlocked(node);
    if (node.protected === 1 && ['rebuild', 'deleted', 'undeploy'].includes(target)) throw nodeProtected(node);
    const now = tx.clock.nowIso();
    if (transition.via === null) {
      await updateNode(tx, node.id, {
        provision_state: transition.to,
        target_provision_state: null,
        provision_updated_at: now,
        last_error: null,
        updated_at: now,
      });
      return null;
    }
    const changes: NodeChanges = {
      provision_state: transition.via,
      target_provision_state: transition.to,
      provision_updated_at: now,
      reservation: ctx.conductorId,
      last_error: null,
      updated_at: now,
    };
    if (transition.via === 'inspecting') Object.assign(changes, { inspection_started_at: now, inspection_finished_at: null });
    await updateNode(tx, node.id, changes);
    return node.id;
  });
  if (scheduled !== null) ctx.transitions.schedule(scheduled, ctx.config.transitionTime);
}

/**
 * Start a power transition (PUT …/states/power). `allowed` says whether the request's version
 * has the target (a target it lacks is a 406 — once the node is known to exist, as in Ironic).
 */
export async function setPowerState(ctx: BaremetalContext, ident: string, target: string, allowed: boolean): Promise<void> {
  const spec = POWER_TARGETS[target];
  const nodeId = await nodeTransaction(ctx, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    if (spec && !allowed) throw baremetalDomainError('power_target_too_new', { target, since: spec.since }, `${target} needs ${spec.since}`);
    if (!spec) {
      throw baremetalDomainError('invalid_power_action', { action: target, node: ident, state: node.power_state }, `${target} is not a power target`);
    }
    requireUnlocked(node);
    await updateNode(tx, node.id, { target_power_state: spec.result, reservation: ctx.conductorId, last_error: null, updated_at: tx.clock.nowIso() });
    return node.id;
  });
  ctx.transitions.schedule(nodeId, ctx.config.transitionTime);
}

export async function setMaintenance(ctx: BaremetalContext, ident: string, on: boolean, reason: string | null): Promise<void> {
  // Maintenance is how an operator takes a stuck node out of play, so it does not wait for the
  // node's lock; the allocation worker re-checks it under the row lock before claiming a node.
  await transaction(ctx.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    const changes: NodeChanges = on ? { maintenance: 1, maintenance_reason: reason } : { maintenance: 0, maintenance_reason: null, fault: null };
    await updateNode(tx, node.id, { ...changes, updated_at: tx.clock.nowIso() });
  });
}

/**
 * The fake hardware finished what the node's lock holder started: a provision transition ends in
 * its target state (a tear-down releases the instance and the allocation on the way), a power
 * change in its power state. Only the conductor holding the node's lock may finish it.
 */
export async function completeTransition(ctx: BaremetalContext, nodeId: number): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const node = await lockNode(tx, nodeId);
    if (!node || node.reservation !== ctx.conductorId) return;
    const now = tx.clock.nowIso();
    const changes: NodeChanges = { reservation: null, updated_at: now };
    if (node.target_provision_state !== null) {
      if (TEARS_DOWN(node.provision_state)) {
        await deallocate(tx, ctx, node, 'node torn down');
        Object.assign(changes, { instance_uuid: null, instance_info: '{}' });
      }
      if (node.provision_state === 'inspecting') changes.inspection_finished_at = now;
      Object.assign(changes, { provision_state: node.target_provision_state, target_provision_state: null, provision_updated_at: now });
    }
    if (node.target_power_state !== null) Object.assign(changes, { power_state: node.target_power_state, target_power_state: null });
    await updateNode(tx, node.id, changes);
  });
}

// ---- what fake hardware records ----------------------------------------------------------------

/** Record the console switch or the target RAID configuration (fake hardware does nothing else with them). */
export async function recordOnNode(ctx: BaremetalContext, ident: string, changes: Pick<NodeChanges, 'console_enabled' | 'target_raid_config'>): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    await updateNode(tx, node.id, { ...changes, updated_at: tx.clock.nowIso() });
  });
}
