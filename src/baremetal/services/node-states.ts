// A node's states: provision and power transitions (started here under the node's lock, finished
// by the transition timers through completeTransition), maintenance, and what fake hardware
// records on the node (the console switch, the target RAID configuration).
import { transaction } from '../../db/transaction.js';
import { POWER_TARGETS, TEARS_DOWN, provisionTransition } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import { type NodeChanges, lockNode, updateNode } from '../store/nodes.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import { deallocate } from './node-allocation.js';
import { nodeProtected, nodeTransaction, requireLockedNode, requireUnlocked } from './node-locks.js';

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
