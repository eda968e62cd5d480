// Writes of allocations: PUT /allocations/{c}, POST /allocations, DELETE /allocations/{c}, and the
// bare-metal allocator's claims. A scheduler's claim for new consumers is first tried as one
// statement on PostgreSQL (store/one-statement-claim.ts); anything else, and any claim that
// statement steps aside from, is written by store/allocations.ts in one transaction.
import { classifyFault, isRetryableFault } from '../../db/faults.js';
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { type ConsumerAllocations, deleteConsumer, writeAllocations } from '../store/allocations.js';
import { oneStatementClaim } from '../store/one-statement-claim.js';

export async function write(ctx: PlacementContext, writes: ConsumerAllocations[]): Promise<void> {
  const claim = await oneStatementClaim(ctx.database, ctx.names, writes);
  if (claim) {
    try {
      await transaction(ctx.database, claim, { oneStatement: true, maxAttempts: 1 });
      return;
    } catch (err) {
      // A database fault after the statement was sent (commit_unknown: it may have committed), or
      // one the general write could not wait out either (a timeout, a full disk), is the answer.
      // Stepping aside then would report a claim that may be in place as not done: the general
      // write would meet the outage and answer a plain 503, or find the consumer and answer 409.
      const fault = classifyFault(err);
      if (fault && !isRetryableFault(fault)) throw fault;
      // Refused, lost a race (deadlock, serialization), or no connection was made (nothing was
      // sent; the general write retries it): the general write decides and answers.
    }
  }
  await transaction(ctx.database, (tx) => writeAllocations(tx, ctx.names, writes));
}

/** Remove every allocation of a consumer. */
export function removeConsumer(ctx: PlacementContext, consumerUuid: string): Promise<void> {
  return transaction(ctx.database, (tx) => deleteConsumer(tx, consumerUuid));
}
