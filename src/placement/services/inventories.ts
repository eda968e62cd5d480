// A provider's inventories: read, and changed, each change one transaction under the provider's lock. On
// PostgreSQL a replacement of them all (what every compute node sends at start) is first tried as
// one statement that also answers what it wrote (store/one-statement-registration.ts).
import { placementDomainError } from '../core/domain-errors.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { type InventoryChange, type InventoryRecord, type ProviderInventories, changeInventories, readInventories } from '../store/inventories.js';
import { oneStatementInventories } from '../store/one-statement-registration.js';
import { lockProvider } from '../store/providers.js';
import { findResourceClass } from '../store/resource-classes.js';
import { inOneStatement } from './providers.js';

export type { InventoryChange, InventoryRecord };

/** The provider's inventories as they are now (404 when it does not exist). */
export function read(ctx: PlacementContext, uuid: string): Promise<ProviderInventories> {
  return readInventories(ctx.database, uuid);
}

/**
 * Apply one change to the provider `uuid`; returns its new generation. A class added must exist
 * (400, checked first, as Placement does).
 */
export async function change(ctx: PlacementContext, uuid: string, what: InventoryChange, clientGeneration?: number): Promise<number> {
  try {
    return await transaction(ctx.database, async (tx) => {
      if (what.kind === 'add' && !(await findResourceClass(tx, what.resourceClass)))
        throw placementDomainError('resource_class_not_found', { name: what.resourceClass }, `no resource class ${what.resourceClass}`);
      return changeInventories(tx, await lockProvider(tx, uuid), what, clientGeneration);
    });
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
  return changeAndRead(ctx, uuid, { kind: 'replace-all', inventories }, clientGeneration);
}

/** Apply one change (as `change`) and answer the provider's inventories as they are then. */
export async function changeAndRead(ctx: PlacementContext, uuid: string, what: InventoryChange, clientGeneration?: number): Promise<ProviderInventories> {
  await change(ctx, uuid, what, clientGeneration);
  return read(ctx, uuid);
}
