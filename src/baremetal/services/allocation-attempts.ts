// The allocation worker's step (workers/allocation-worker.ts decides when to try and when to give
// up): one try, in a transaction of its own, at an allocation this conductor owns that its request
// could not finish — reserve a node and take it (allocation-claims.ts), or find Ironic's reason
// why no node can ever do — and marking it failed. Every write is guarded by this conductor's
// affinity, so an allocation another conductor took over (services/conductors.ts) is left alone.
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { allocationFailure } from '../core/allocation.js';
import { findAllocationById, finishAllocation } from '../store/allocations.js';
import { nodeWanted, reserveFreeNode, whyNoNode } from '../store/candidates.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { Gone, Unsuitable, takeNode } from './allocation-claims.js';

export type Attempt =
  | { kind: 'done' }
  | { kind: 'gone' }
  | { kind: 'failed'; reason: string }
  /** no node could be reserved now, but some may free up (held by others, power settling): try again soon */
  | { kind: 'retry' };

/** One try at an allocation this conductor owns. */
export async function attemptAllocation(ctx: BaremetalContext, allocationId: number): Promise<Attempt> {
  const allocation = await findAllocationById(ctx.database, allocationId);
  if (allocation?.state !== 'allocating' || allocation.conductor_affinity !== ctx.conductorId) return { kind: 'gone' };
  const wanted = nodeWanted(allocation);
  const outcome = await transaction(ctx.database, async (tx) => {
    const node = await reserveFreeNode(tx, wanted, allocation);
    if (!node) return 'none' as const;
    await takeNode(tx, ctx, allocation, node);
    return 'done' as const;
  }).catch((err) => {
    if (err instanceof Unsuitable) return 'unsuitable' as const;
    if (err instanceof Gone) return 'gone' as const;
    // another node got this allocation's uuid as its instance_uuid meanwhile
    if (isUniqueViolation(err)) return 'unsuitable' as const;
    throw err;
  });
  if (outcome === 'done' || outcome === 'gone') return { kind: outcome };
  if (outcome === 'unsuitable') {
    // a claim refused because its consumer is someone else's is refused on every node, for good
    const never = await ctx.backend.whyNoClaim(ctx.database, allocation.uuid);
    return never === null ? { kind: 'retry' } : { kind: 'failed', reason: never };
  }
  // Read after the reservation found nothing: a node that became free meanwhile is seen here.
  const reason = await whyNoNode(ctx.database, wanted);
  return reason === null ? { kind: 'retry' } : { kind: 'failed', reason };
}

/** Mark an allocation this conductor owns as failed (guarded like every worker write). */
export async function failAllocation(ctx: BaremetalContext, allocation: { id: number; uuid: string }, reason: string): Promise<void> {
  const finished = await transaction(ctx.database, (tx) =>
    finishAllocation(tx, allocation.id, ctx.conductorId, { state: 'error', lastError: allocationFailure(allocation.uuid, reason) }),
  );
  if (!finished) return;
  ctx.allocationEnds.ended(allocation.id);
  ctx.metrics.baremetalAllocationsFinished.inc({ state: 'error' });
}
