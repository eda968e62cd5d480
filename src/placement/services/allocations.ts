// Allocations: a consumer's and a provider's, read; the writes of PUT /allocations/{c}, POST
// /allocations, DELETE /allocations/{c}, and the bare-metal allocator's claims. On PostgreSQL a scheduler's writes — a claim for new consumers,
// a move between consumers at known generations, a delete — are first tried as one statement
// (store/one-statement-writes.ts); anything else, and any write that statement steps aside from,
// is written by store/allocations.ts in one transaction.
import type { Tx } from '../../db/database.js';
import { transaction, tryFastPath } from '../../db/transaction.js';
import { claimOutcome } from '../../metrics/metrics.js';
import type { PlacementContext } from '../context.js';
import { placementDomainError } from '../core/domain-errors.js';
import { type ConsumerAllocations, INCOMPLETE_CONSUMER_ID, deleteConsumer, providerAllocations, readConsumer, writeAllocations } from '../store/allocations.js';
import { oneStatementDelete, oneStatementWrite } from '../store/one-statement-writes.js';
import { requireProvider } from '../store/providers.js';

export { type ConsumerAllocations, INCOMPLETE_CONSUMER_ID };

/** A consumer's allocations by provider; null when there is no such consumer. */
export function ofConsumer(ctx: PlacementContext, consumerUuid: string) {
  return readConsumer(ctx.database, consumerUuid);
}

/** The allocations against the provider `uuid` by consumer, with the provider (404 when it does not exist). */
export async function ofProvider(ctx: PlacementContext, uuid: string) {
  const provider = await requireProvider(ctx.database, uuid);
  return { provider, ...(await providerAllocations(ctx.database, provider.id)) };
}

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
    writes.flatMap((w) => [...w.allocations.keys()]),
  );
  if (await inOneStatement(ctx, await oneStatementWrite(ctx.database, ctx.names, writes), retried)) return;
  await transaction(ctx.database, (tx) => writeAllocations(tx, ctx.names, writes), { onRetry: retried });
}

/** Remove every allocation of a consumer. */
export async function removeConsumer(ctx: PlacementContext, consumerUuid: string): Promise<void> {
  if (await inOneStatement(ctx, oneStatementDelete(ctx.database, consumerUuid))) return;
  await transaction(ctx.database, (tx) => deleteConsumer(tx, consumerUuid));
}

/**
 * Run a one-statement write in a transaction of its own: true when it committed, false when the
 * general write is to decide (there is no such statement for this write, or it stepped aside).
 */
async function inOneStatement(ctx: PlacementContext, statement: ((tx: Tx) => Promise<void>) | null, retried?: () => void): Promise<boolean> {
  if (!statement) return false;
  return (await tryFastPath(ctx.database, statement, { oneStatement: true, onStepAside: retried })) !== undefined;
}

/**
 * Refuse (409) an API write that would put allocations on a provider another service owns.
 * Checked before the write: which providers are owned never changes while they exist (a node's
 * provider is made with the node), and only the owner itself writes allocations on them. A
 * consumer the owner's claim made is not this check's: it is marked `held_by` the owner's holder,
 * and the write refuses it under the consumer's row lock (store/allocations.ts `consumer_held`),
 * so a consumer that gets its claim while the write runs is refused too.
 */
export async function refuseOwnedProviders(ctx: PlacementContext, providerUuids: readonly string[]): Promise<void> {
  if (!ctx.owners.length) return;
  const touched = [...new Set(providerUuids)];
  if (!touched.length) return;
  for (const owner of ctx.owners) {
    const owned = await owner.owned(ctx.database, touched);
    if (owned.length)
      throw placementDomainError('provider_owned', { providers: owned.sort(), owner: owner.name }, `providers ${owned.join(', ')} belong to ${owner.name}`);
  }
}
