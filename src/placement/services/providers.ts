// Writes to resource providers: each one transaction; the rules and SQL are in store/providers.ts.
// On PostgreSQL a new provider is first tried as one statement (store/one-statement-registration.ts).
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction, tryFastPath } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { type OneStatement, oneStatementCreate } from '../store/one-statement-registration.js';
import {
  type NewProvider,
  type ProviderUpdate,
  type ProviderView,
  changeProvider,
  deleteProvider,
  findProvider,
  insertProvider,
  nameTaken,
  uuidTaken,
} from '../store/providers.js';

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
