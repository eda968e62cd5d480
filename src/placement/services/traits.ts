// Writes to traits and to providers' traits.
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { checkGeneration, lockProvider } from '../store/providers.js';
import { deleteTrait, insertTrait, replaceProviderTraits } from '../store/traits.js';

/** Create a custom trait; false when it existed. */
export function create(ctx: PlacementContext, name: string): Promise<boolean> {
  return transaction(ctx.database, (tx) => insertTrait(tx, name));
}

export function remove(ctx: PlacementContext, name: string): Promise<void> {
  return transaction(ctx.database, (tx) => deleteTrait(tx, name));
}

/** Replace a provider's traits (an empty list removes them all); returns the new generation. */
export function setForProvider(ctx: PlacementContext, uuid: string, names: string[], clientGeneration?: number): Promise<number> {
  return transaction(ctx.database, async (tx) => {
    const provider = await lockProvider(tx, uuid);
    checkGeneration(provider, clientGeneration);
    return replaceProviderTraits(tx, provider, names);
  });
}
