// Writes to a provider's aggregates.
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { replaceProviderAggregates } from '../store/aggregates.js';
import { checkGeneration, lockProvider } from '../store/providers.js';

/**
 * Replace a provider's aggregates. `generation`: 'bump' with an optional client generation to
 * check (1.19+), or 'keep' to leave the generation alone (older microversions).
 */
export function setForProvider(
  ctx: PlacementContext,
  uuid: string,
  aggregateUuids: string[],
  generation: { mode: 'bump'; client?: number } | { mode: 'keep' },
): Promise<number> {
  return transaction(ctx.database, async (tx) => {
    const provider = await lockProvider(tx, uuid);
    if (generation.mode === 'bump') checkGeneration(provider, generation.client);
    return replaceProviderAggregates(tx, provider, aggregateUuids, generation.mode === 'bump');
  });
}
