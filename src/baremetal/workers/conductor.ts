// This process as a conductor: it resumes its own unfinished work, beats its heartbeat, and
// periodically takes over the work of dead conductors (offline, or silent longer than the
// heartbeat timeout) with one compare-and-set per item:
//   UPDATE baremetal_allocations SET conductor_affinity = <me> WHERE id = ? AND conductor_affinity = <dead>
//   UPDATE baremetal_nodes SET reservation = <me> WHERE id = ? AND reservation = <dead>
// Only the winner of each compare-and-set resumes the item, so no work is done twice. Whether a
// conductor is dead is decided by the database handle's clock (tests move a ManualClock).
import { periodic } from '../../background/periodic.js';
import type { BaremetalContext } from '../context.js';
import { beat, takeOverAllocationOf, takeOverNodeOf } from '../services/conductors.js';
import { orphanedAllocations, ownAllocating } from '../store/allocations.js';
import { aliveConductors, orphanedReservations, ownReservations } from '../store/conductors.js';

/**
 * Allocations left `allocating` with our affinity and not worked here, and nodes whose lock we
 * hold: a lock held for an allocation is stale (the allocation is retried from scratch); one held
 * for a transition is finished. completeTransition handles both.
 */
export async function resumeOwn(ctx: BaremetalContext): Promise<void> {
  const allocations = (await ownAllocating(ctx.database, ctx.conductorId)).filter((id) => ctx.allocations.enqueue(id));
  const nodes = (await ownReservations(ctx.database, ctx.conductorId)).filter((id) => ctx.transitions.schedule(id, ctx.config.transitionTime));
  if (allocations.length || nodes.length) ctx.log.info({ allocations: allocations.length, nodes: nodes.length }, 'resumed own unfinished work');
}

/** One take-over pass (tests call it directly to take over at an exact moment). */
export async function takeOver(ctx: BaremetalContext): Promise<{ allocations: number; nodes: number }> {
  const me = ctx.conductorId;
  const alive = [...new Set([...(await aliveConductors(ctx.database, ctx.config.heartbeatTimeout)), me])];
  let allocations = 0;
  for (const orphan of await orphanedAllocations(ctx.database, alive)) {
    if (await takeOverAllocationOf(ctx, orphan.id, orphan.conductor_affinity)) {
      allocations++;
      ctx.allocations.enqueue(orphan.id);
    }
  }
  let nodes = 0;
  for (const orphan of await orphanedReservations(ctx.database, alive)) {
    if (await takeOverNodeOf(ctx, orphan.id, orphan.reservation)) {
      nodes++;
      ctx.transitions.schedule(orphan.id, ctx.config.transitionTime);
    }
  }
  if (allocations || nodes) ctx.log.info({ allocations, nodes }, 'took over work of dead conductors');
  ctx.metrics.baremetalTakeovers.inc({ kind: 'allocation' }, allocations);
  ctx.metrics.baremetalTakeovers.inc({ kind: 'node' }, nodes);
  return { allocations, nodes };
}

/**
 * The heartbeat. Each beat also picks up own work that is not running here any more (an
 * allocation whose worker gave up while the database was away), so nothing of ours stays
 * `allocating` for longer than a heartbeat interval after the database is back.
 */
export const heartbeatTask = (ctx: BaremetalContext) =>
  periodic({ name: 'baremetal-heartbeat', intervalMs: ctx.config.heartbeatInterval, log: ctx.log }, async () => {
    await beat(ctx);
    await resumeOwn(ctx);
  });

export const takeOverTask = (ctx: BaremetalContext) =>
  periodic({ name: 'baremetal-takeover', intervalMs: ctx.config.takeoverInterval, log: ctx.log }, async () => {
    await takeOver(ctx);
  });
