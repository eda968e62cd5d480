// Traits and providers' traits: read, and written. On PostgreSQL a replacement of a provider's traits at
// the client's generation is first tried as one statement that also answers what it wrote
// (store/one-statement-registration.ts).
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { type ProviderSet, oneStatementTraits } from '../store/one-statement-registration.js';
import { checkGeneration, lockProvider } from '../store/providers.js';
import {
  type TraitQuery,
  deleteTrait,
  insertTrait,
  listTraits,
  readProviderTraits,
  replaceProviderTraits,
  traitExists,
  traitNotFound,
} from '../store/traits.js';
import { inOneStatement } from './providers.js';

export type { ProviderSet, TraitQuery };

/** The traits' names that pass the query. */
export function list(ctx: PlacementContext, query: TraitQuery): Promise<string[]> {
  return listTraits(ctx.database, query);
}

/** The trait exists (404 when it does not). */
export async function show(ctx: PlacementContext, name: string): Promise<void> {
  if (!(await traitExists(ctx.database, name))) throw traitNotFound(name);
}

/** The provider's traits as they are now (404 when it does not exist). */
export async function readForProvider(ctx: PlacementContext, uuid: string): Promise<ProviderSet> {
  const { provider, traits } = await readProviderTraits(ctx.database, uuid);
  return { generation: provider.generation, members: traits, updatedAt: provider.updated_at };
}

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

/** Replace a provider's traits at the client's generation (PUT …/traits); answers them as they are then. */
export async function replaceForProvider(ctx: PlacementContext, uuid: string, names: string[], clientGeneration: number): Promise<ProviderSet> {
  const written = await inOneStatement(ctx, await oneStatementTraits(ctx.database, ctx.names, uuid, names, clientGeneration));
  if (written) return written.value;
  await setForProvider(ctx, uuid, names, clientGeneration);
  return readForProvider(ctx, uuid);
}
