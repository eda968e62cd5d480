// Writes to a provider's inventories: each change one transaction under the provider's lock. On
// PostgreSQL a replacement of them all (what every compute node sends at start) is first tried as
// one statement that also answers what it wrote (store/one-statement-registration.ts).
import { placementDomainError } from '../core/domain-errors.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { type InventoryChange, type InventoryRecord, type ProviderInventories, changeInventories, readInventories } from '../store/inventories.js';
import { oneStatementInventories } from '../store/one-statement-registration.js';
import { lockProvider } from '../store/providers.js';
import { inOneStatement } from './providers.js';

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

/** Replace all of the provider's inventories (PUT …/inventories); answers them as they are then. */
export async function replaceAll(
  ctx: PlacementContext,
  uuid: string,
  inventories: Map<string, InventoryRecord>,
  clientGeneration: number,
): Promise<ProviderInventories> {
  const written = await inOneStatement(ctx, await oneStatementInventories(ctx.database, ctx.names, uuid, inventories, clientGeneration));
  if (written) return written.value;
  await change(ctx, uuid, { kind: 'replace-all', inventories }, clientGeneration);
  return readInventories(ctx.database, uuid);
}
