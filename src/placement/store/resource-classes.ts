// Resource classes: the standard ones (read-only) and CUSTOM_* ones users create, rename and delete.
import { placementDomainError } from '../core/domain-errors.js';
import type { Db, Tx } from '../../db/database.js';

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

export const classNotFound = (name: string) => placementDomainError('resource_class_not_found', { name }, `no resource class ${name}`);
export const classExists = (name: string) => placementDomainError('resource_class_exists', { name }, `resource class ${name} exists`);
const isStandard = (name: string) => placementDomainError('resource_class_is_standard', { name }, `${name} is a standard resource class`);

export async function requireResourceClass(db: Db, name: string): Promise<ResourceClassRow> {
  const rc = await findResourceClass(db, name);
  if (!rc) throw classNotFound(name);
  return rc;
}

/** Create a custom class; false when one of that name exists. */
export async function insertResourceClass(tx: Tx, name: string): Promise<boolean> {
  const now = tx.clock.nowIso();
  const result = await tx.db
    .insertInto('resource_classes')
    .values({ name, is_standard: 0, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function renameResourceClass(tx: Tx, name: string, newName: string): Promise<ResourceClassRow> {
  const rc = await requireResourceClass(tx, name);
  if (rc.is_standard) throw isStandard(name);
  if (newName !== name && (await findResourceClass(tx, newName))) throw classExists(newName);
  await tx.db.updateTable('resource_classes').set({ name: newName, updated_at: tx.clock.nowIso() }).where('id', '=', rc.id).execute();
  // inventories are indexed by class name; every process forgets the names it knew
  noteProvidersChanged(tx, 'all');
  return (await findResourceClass(tx, newName))!;
}

/** Delete a custom class that no inventory or allocation uses. */
export async function deleteResourceClass(tx: Tx, name: string): Promise<void> {
  const rc = await requireResourceClass(tx, name);
  if (rc.is_standard) throw isStandard(name);
  const used =
    (await tx.db.selectFrom('inventories').select('id').where('resource_class_id', '=', rc.id).limit(1).executeTakeFirst()) ??
    (await tx.db.selectFrom('allocations').select('id').where('resource_class_id', '=', rc.id).limit(1).executeTakeFirst());
  if (used) throw placementDomainError('resource_class_in_use', { name }, `resource class ${name} is in use`);
  await tx.db.deleteFrom('resource_classes').where('id', '=', rc.id).execute();
  noteProvidersChanged(tx, 'all'); // every process forgets the names it knew
}
