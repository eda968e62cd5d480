// Resource providers: reads, and writes each in one transaction; the rules and SQL are in
// store/providers.ts. On PostgreSQL a new provider is first tried as one statement
// (store/one-statement-registration.ts).
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction, tryFastPath } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { placementDomainError } from '../core/domain-errors.js';
import { idsByName } from '../store/names.js';
import { type OneStatement, oneStatementCreate } from '../store/one-statement-registration.js';
import {
  type NewProvider,
  type ProviderFilters,
  type ProviderUpdate,
  type ProviderView,
  changeProvider,
  deleteProvider,
  findProvider,
  insertProvider,
  listProviders,
  nameTaken,
  requireProvider,
  uuidTaken,
} from '../store/providers.js';

export type { NewProvider, ProviderUpdate, ProviderView };

/** The provider `uuid` (404 when it does not exist). */
export function show(ctx: PlacementContext, uuid: string): Promise<ProviderView> {
  return requireProvider(ctx.database, uuid);
}

/** `GET /resource_providers`'s filters, parsed, with traits and classes by name. */
export interface ProviderQuery {
  name?: string;
  uuid?: string;
  inTree?: string;
  /** each set: member of at least one of these aggregate uuids */
  aggregatesAnyOf?: string[][];
  forbiddenAggregates?: string[];
  /** all required, none forbidden, one of each any-of set */
  traits?: { required: ReadonlySet<string>; forbidden: ReadonlySet<string>; anyOf: readonly string[][] };
  /** resource class → amount that must still fit */
  resources?: ReadonlyMap<string, number>;
}

/** The providers that pass every filter; an unknown trait or class is the client's 400. */
export async function list(ctx: PlacementContext, q: ProviderQuery): Promise<ProviderView[]> {
  const { traits, resources } = q;
  const filters: ProviderFilters = {
    name: q.name,
    uuid: q.uuid,
    inTree: q.inTree,
    aggregatesAnyOf: q.aggregatesAnyOf,
    forbiddenAggregates: q.forbiddenAggregates,
  };
  if (traits) {
    const names = [...new Set([...traits.required, ...traits.forbidden, ...traits.anyOf.flat()])];
    const ids = await idsByName(ctx.database, 'traits', names);
    const missing = names.filter((n) => !ids.has(n)).sort();
    if (missing.length) throw placementDomainError('unknown_traits', { names: missing }, `no traits ${missing.join(', ')}`);
    filters.requiredTraits = [...traits.required].map((n) => ids.get(n)!);
    filters.forbiddenTraits = [...traits.forbidden].map((n) => ids.get(n)!);
    filters.traitsAnyOf = traits.anyOf.map((set) => set.map((n) => ids.get(n)!));
  }
  if (resources) {
    const ids = await idsByName(ctx.database, 'resource_classes', [...resources.keys()]);
    const missing = [...resources.keys()].find((n) => !ids.has(n));
    if (missing !== undefined) throw placementDomainError('resource_class_not_found', { name: missing }, `no resource class ${missing}`);
    filters.resources = new Map([...resources].map(([name, amount]) => [ids.get(name)!, amount]));
  }
  return listProviders(ctx.database, filters);
}

export async function create(ctx: PlacementContext, input: NewProvider): Promise<ProviderView> {
  const created = await inOneStatement(ctx, oneStatementCreate(ctx.database, input));
  if (created) return created.value;
  try {
    return await transaction(ctx.database, (tx) => insertProvider(tx, input));
  } catch (err) {
    // Two creators raced past the checks in insertProvider; the loser sees the constraint instead.
    if (isUniqueViolation(err)) throw (await findProvider(ctx.database, input.uuid)) ? uuidTaken(input.uuid) : nameTaken(input.name);
    throw err;
  }
}

/** `reparentAllowed`: from 1.37 a provider may be re-parented or un-parented. */
export async function update(ctx: PlacementContext, uuid: string, input: ProviderUpdate, reparentAllowed: boolean): Promise<ProviderView> {
  try {
    return await transaction(ctx.database, (tx) => changeProvider(tx, uuid, input, reparentAllowed));
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
}

export function remove(ctx: PlacementContext, uuid: string): Promise<void> {
  return transaction(ctx.database, (tx) => deleteProvider(tx, uuid));
}

/**
 * Run a one-statement registration write in a transaction of its own: its result, or undefined
 * when the general write is to decide (no such statement for this write, or it stepped aside).
 */
export async function inOneStatement<T>(ctx: PlacementContext, statement: OneStatement<T>): Promise<{ value: T } | undefined> {
  return statement ? tryFastPath(ctx.database, statement, { oneStatement: true }) : undefined;
}
