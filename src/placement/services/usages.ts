// Usages: what is allocated per class, of a provider or of a project (and user).
import type { TotalUsages } from '../../client/placement-wire.js';
import type { PlacementContext } from '../context.js';
import { type UsageFilter, projectUsages, providerUsages } from '../store/usages.js';

/** Every class the provider has inventory of, with what is allocated of it, and the provider (404 when it does not exist). */
export function ofProvider(ctx: PlacementContext, uuid: string) {
  return providerUsages(ctx.database, uuid);
}

/** Totals per class for a project (and user); with `byType`, grouped by consumer type (1.38). */
export function ofProject(ctx: PlacementContext, filter: UsageFilter, byType: boolean): Promise<TotalUsages['usages']> {
  return projectUsages(ctx.database, filter, byType);
}
