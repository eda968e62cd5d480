// Resource classes: the standard ones (read-only) and CUSTOM_* ones users create, rename and delete.
import type { Database, Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import { placementError } from '../errors.js';
import { noteProvidersChanged } from './provider-index.js';

export interface ResourceClassRow {
  id: number;
  name: string;
  is_standard: number;
  updated_at: string;
}

export async function listResourceClasses(db: Db): Promise<ResourceClassRow[]> {
  return db.db.selectFrom('resource_classes').select(['id', 'name', 'is_standard', 'updated_at']).orderBy('id').execute();
}

export async function findResourceClass(db: Db, name: string): Promise<ResourceClassRow | undefined> {
  return db.db.selectFrom('resource_classes').select(['id', 'name', 'is_standard', 'updated_at']).where('name', '=', name).executeTakeFirst();
}

const noSuchClass = (name: string) => placementError(404, `No such resource class ${name}.`);
const duplicate = (name: string) => placementError(409, `Conflicting resource class already exists: ${name}`);

export async function requireResourceClass(db: Db, name: string): Promise<ResourceClassRow> {
  const rc = await findResourceClass(db, name);
  if (!rc) throw noSuchClass(name);
  return rc;
}

/** Create a custom class. `ifMissing` (PUT at 1.7) makes an existing class a no-op: returns false. */
export async function createResourceClass(database: Database, name: string, ifMissing = false): Promise<boolean> {
  try {
    const inserted = await transaction(database, async (tx) => {
      const now = tx.clock.nowIso();
      const result = await tx.db
        .insertInto('resource_classes')
        .values({ name, is_standard: 0, created_at: now, updated_at: now })
        .onConflict((oc) => oc.column('name').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    });
    if (inserted) return true;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  if (ifMissing) return false;
  throw duplicate(name);
}

export async function renameResourceClass(database: Database, name: string, newName: string): Promise<ResourceClassRow> {
  try {
    return await transaction(database, async (tx) => {
      const rc = await requireResourceClass(tx, name);
      if (rc.is_standard) throw placementError(400, `Cannot update standard resource class ${name}`);
      if (newName !== name && (await findResourceClass(tx, newName))) throw placementError(409, `Resource class already exists: ${newName}`);
      await tx.db.updateTable('resource_classes').set({ name: newName, updated_at: tx.clock.nowIso() }).where('id', '=', rc.id).execute();
      // inventories are indexed by class name; every process forgets the names it knew
      noteProvidersChanged(tx, 'all');
      return (await findResourceClass(tx, newName))!;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw placementError(409, `Resource class already exists: ${newName}`);
    throw err;
  }
}

export async function deleteResourceClass(database: Database, name: string): Promise<void> {
  await transaction(database, async (tx) => {
    const rc = await requireResourceClass(tx, name);
    if (rc.is_standard) throw placementError(400, `Cannot delete standard resource class ${name}: Cannot delete standard resource class ${name}.`);
    const used =
      (await tx.db.selectFrom('inventories').select('id').where('resource_class_id', '=', rc.id).limit(1).executeTakeFirst()) ??
      (await tx.db.selectFrom('allocations').select('id').where('resource_class_id', '=', rc.id).limit(1).executeTakeFirst());
    if (used) throw placementError(409, `Error in delete resource class: Class is in use in inventory: ${name}`);
    await tx.db.deleteFrom('resource_classes').where('id', '=', rc.id).execute();
    noteProvidersChanged(tx, 'all'); // every process forgets the names it knew
  });
}
