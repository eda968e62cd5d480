// A provider's aggregates: read, and replaced. On PostgreSQL a replacement at the client's
// generation (1.19+) is first tried as one statement that also answers what it wrote
// (store/one-statement-registration.ts).
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { readProviderAggregates, replaceProviderAggregates } from '../store/aggregates.js';
import { type ProviderSet, oneStatementAggregates } from '../store/one-statement-registration.js';
import { checkGeneration, lockProvider } from '../store/providers.js';
import { inOneStatement } from './providers.js';

export type { ProviderSet };

/** The provider's aggregates as they are now (404 when it does not exist). */
export async function read(ctx: PlacementContext, uuid: string): Promise<ProviderSet> {
  const { provider, aggregates } = await readProviderAggregates(ctx.database, uuid);
  return { generation: provider.generation, members: aggregates, updatedAt: provider.updated_at };
}

/**
 * Replace a provider's aggregates and answer them as they are then. `generation`: 'bump' with an
 * optional client generation to check (1.19+), or 'keep' to leave the generation alone (older
 * microversions).
 */
export async function setForProvider(
  ctx: PlacementContext,
  uuid: string,
  aggregateUuids: string[],
  generation: { mode: 'bump'; client?: number } | { mode: 'keep' },
): Promise<ProviderSet> {
  if (generation.mode === 'bump' && generation.client !== undefined) {
    const written = await inOneStatement(ctx, oneStatementAggregates(ctx.database, uuid, aggregateUuids, generation.client));
    if (written) return written.value;
  }
  await transaction(ctx.database, async (tx) => {
    const provider = await lockProvider(tx, uuid);
    if (generation.mode === 'bump') checkGeneration(provider, generation.client);
    return replaceProviderAggregates(tx, provider, aggregateUuids, generation.mode === 'bump');
  });
  return read(ctx, uuid);
}
