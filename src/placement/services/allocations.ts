// Writes of allocations: PUT /allocations/{c}, POST /allocations, DELETE /allocations/{c}, and the
// bare-metal allocator's claims. A scheduler's claim for new consumers is first tried as one
// statement on PostgreSQL (store/one-statement-claim.ts); anything else, and any claim that
// statement steps aside from, is written by store/allocations.ts in one transaction.
import { classifyFault, isRetryableFault } from '../../db/faults.js';
import { transaction } from '../../db/transaction.js';
import { claimOutcome } from '../../metrics/metrics.js';
import type { PlacementContext } from '../context.js';
import { DomainError } from '../../core/errors.js';
import { type ConsumerAllocations, deleteConsumer, providersOfConsumers, writeAllocations } from '../store/allocations.js';
import { oneStatementClaim } from '../store/one-statement-claim.js';

/** PostgreSQL's serialization_failure and deadlock_detected: the one-statement claim lost a race (its refusals are not retries). */
const LOST_RACE = new Set(['40001', '40P01']);

export async function write(ctx: PlacementContext, writes: ConsumerAllocations[]): Promise<void> {
  try {
    await writeOnce(ctx, writes);
    ctx.metrics.placementClaims.inc({ outcome: 'claimed' });
  } catch (err) {
    ctx.metrics.placementClaims.inc({ outcome: claimOutcome(err) });
    throw err;
  }
}

async function writeOnce(ctx: PlacementContext, writes: ConsumerAllocations[]): Promise<void> {
  const retried = () => ctx.metrics.placementClaimRetries.inc();
  await refuseOwnedProviders(
    ctx,
    writes.map((w) => w.consumerUuid),
    writes.flatMap((w) => [...w.allocations.keys()]),
  );
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
      if (fault || LOST_RACE.has((err as { code?: string }).code ?? '')) retried();
    }
  }
  await transaction(ctx.database, (tx) => writeAllocations(tx, ctx.names, writes), { onRetry: retried });
}

/** Remove every allocation of a consumer. */
export async function removeConsumer(ctx: PlacementContext, consumerUuid: string): Promise<void> {
  await refuseOwnedProviders(ctx, [consumerUuid], []);
  await transaction(ctx.database, (tx) => deleteConsumer(tx, consumerUuid));
}

/**
 * Refuse (409) an API write that would put allocations on a provider another service owns, or
 * change the allocations of a consumer that holds one. Checked before the write: which providers
 * are owned never changes while they exist (a node's provider is made with the node), and only
 * the owner itself writes allocations on them.
 */
export async function refuseOwnedProviders(ctx: PlacementContext, consumerUuids: readonly string[], providerUuids: readonly string[]): Promise<void> {
  if (!ctx.owners.length) return;
  const touched = [...new Set([...providerUuids, ...(await providersOfConsumers(ctx.database, consumerUuids))])];
  if (!touched.length) return;
  for (const owner of ctx.owners) {
    const owned = await owner.owned(ctx.database, touched);
    if (owned.length)
      throw new DomainError('provider_owned', { providers: owned.sort(), owner: owner.name }, `providers ${owned.join(', ')} belong to ${owner.name}`);
  }
}
