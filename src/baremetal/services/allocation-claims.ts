// How an allocation gets its node, wherever it is asked for (POST /v1/allocations in its request,
// the allocation worker's try, a holder's reservation: held-allocations.ts): ONE transaction that
// reserves a free node with a single statement that picks it and sets its instance_uuid and
// allocation_id (store/candidates.ts), claims it in the backend (services/backend.ts: nothing more
// for the database backend, a Placement allocation of the node for the placement one), records
// the requested traits in instance_info, and makes the allocation active; any failure rolls all
// of it back. On PostgreSQL a new allocation first tries all of it — insert, pick, reserve, claim,
// active — as one statement (allocateAtOnce), and steps aside to the general path when that cannot
// do it.
//
// Why the reservation is not Ironic's separate node lock (`reservation`, taken and released in
// their own commits): the lock only guards the binding that follows it, and here both commit
// together, so the lock is the compare-and-set itself. That saves commits per allocation
// (SQLite synchronous=FULL is bound by fsyncs) and leaves no stale lock behind a crash.
import type { Tx } from '../../db/database.js';
import { tryFastPath } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { type AllocationRecord, finishAllocation } from '../store/allocations.js';
import type { NodeWanted, ReservedNode } from '../store/candidates.js';
import { type AllocationValues, allocateOnFreeNode } from '../store/one-statement-allocation.js';

/** The backend refused the node the claim reserved (its Placement provider is full). */
export class Unsuitable extends Error {}
/** The allocation is no longer this conductor's to finish (taken over, deleted). */
export class Gone extends Error {}

/**
 * PostgreSQL, the common case — a node is free now: the allocation is inserted `active` on it, with
 * the backend's claim (placement backend: Placement's allocation of the node), by ONE statement
 * in its own implicit transaction (store/one-statement-allocation.ts): one round trip where the
 * general path makes five, or seven with Placement's claim. Undefined when it stepped aside — no
 * node free now, a uuid or name clash, the claim refused or not expressible so, a lost race: the
 * general path then decides and words the answer.
 */
export async function allocateAtOnce(
  ctx: BaremetalContext,
  row: Omit<AllocationRecord, 'id' | 'traits' | 'node_uuid'> & Pick<AllocationValues, 'resource_class' | 'conductor_affinity'>,
  candidates: string[],
  traits: string[],
): Promise<AllocationRecord | undefined> {
  const inStatement = await ctx.backend.claimInStatement(ctx.database, row);
  if (!inStatement) return undefined;
  const values: AllocationValues = { ...row, now: row.created_at };
  const wanted: NodeWanted = { resourceClass: row.resource_class, candidates, owner: row.owner, traits, name: row.name };
  const done = await tryFastPath(
    ctx.database,
    async (tx) => {
      const { allocationId, node } = await allocateOnFreeNode(tx, values, wanted, inStatement.claim);
      const allocation: AllocationRecord = {
        ...row,
        id: allocationId,
        node_id: node.id,
        state: 'active',
        updated_at: row.created_at,
        traits,
        node_uuid: node.uuid,
      };
      noteActive(tx, ctx, allocation);
      return allocation;
    },
    { oneStatement: true },
  );
  return done?.value;
}

/**
 * The rest of the claim, in the transaction that reserved `node` for the allocation (and wrote the
 * requested traits into its instance_info): claim it in the backend and make the allocation active
 * — guarded by this conductor's affinity (the spec's guarded update). The allocation as it now is.
 */
export async function takeNode(tx: Tx, ctx: BaremetalContext, allocation: AllocationRecord, node: ReservedNode): Promise<AllocationRecord> {
  if (!(await ctx.backend.claim(tx, allocation, node))) throw new Unsuitable();
  const now = tx.clock.nowIso();
  if (!(await finishAllocation(tx, allocation.id, ctx.conductorId, { state: 'active', nodeId: node.id }, now))) throw new Gone();
  noteActive(tx, ctx, allocation);
  return { ...allocation, state: 'active', node_id: node.id, node_uuid: node.uuid, last_error: null, updated_at: now };
}

/** Once the transaction that made `allocation` active commits: the metrics, and a request waiting for it is woken. */
export function noteActive(tx: Tx, ctx: BaremetalContext, allocation: { id: number; created_at: string }): void {
  tx.afterCommit(() => {
    ctx.allocationEnds.ended(allocation.id);
    ctx.metrics.baremetalAllocationsFinished.inc({ state: 'active' });
    ctx.metrics.baremetalAllocationSeconds.observe(Math.max(0, tx.clock.nowMs() - Date.parse(allocation.created_at)) / 1000);
  });
}
