// Writes to a provider's inventories: each change one transaction under the provider's lock.
import { placementDomainError } from '../core/domain-errors.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { type InventoryChange, changeInventories } from '../store/inventories.js';
import { lockProvider } from '../store/providers.js';

/** Apply one change to the provider `uuid`; returns its new generation. */
export async function change(ctx: PlacementContext, uuid: string, what: InventoryChange, clientGeneration?: number): Promise<number> {
  try {
    return await transaction(ctx.database, async (tx) => changeInventories(tx, await lockProvider(tx, uuid), what, clientGeneration));
  } catch (err) {
    // Two writers added the same class at once: the loser hits the unique key.
    if (isUniqueViolation(err)) throw placementDomainError('inventory_changed_concurrently', { provider: uuid }, 'inventory changed concurrently');
    throw err;
  }
}
