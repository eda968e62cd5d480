// Resource classes: read; custom ones written.
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import {
  type ResourceClassRow,
  classExists,
  deleteResourceClass,
  insertResourceClass,
  listResourceClasses,
  renameResourceClass,
  requireResourceClass,
} from '../store/resource-classes.js';

export function list(ctx: PlacementContext): Promise<ResourceClassRow[]> {
  return listResourceClasses(ctx.database);
}

/** The class `name` (404 when it does not exist). */
export function show(ctx: PlacementContext, name: string): Promise<ResourceClassRow> {
  return requireResourceClass(ctx.database, name);
}

/** Create a custom class. `ifMissing` (PUT at 1.7) makes an existing class a no-op: returns false. */
export async function create(ctx: PlacementContext, name: string, ifMissing = false): Promise<boolean> {
  let created = false;
  try {
    created = await transaction(ctx.database, (tx) => insertResourceClass(tx, name));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  if (created || ifMissing) return created;
  throw classExists(name);
}

export async function rename(ctx: PlacementContext, name: string, newName: string): Promise<ResourceClassRow> {
  try {
    return await transaction(ctx.database, (tx) => renameResourceClass(tx, name, newName));
  } catch (err) {
    if (isUniqueViolation(err)) throw classExists(newName);
    throw err;
  }
}

export function remove(ctx: PlacementContext, name: string): Promise<void> {
  return transaction(ctx.database, (tx) => deleteResourceClass(tx, name));
}
