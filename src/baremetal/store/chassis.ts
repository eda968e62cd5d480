// SQL for chassis (and whether nodes are in one).
import type { Insertable, Selectable, Updateable } from 'kysely';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';
import type { BaremetalChassisTable } from '../../db/schema.js';
import type { Page } from '../core/paging.js';
import { applyPage } from './paging.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export type ChassisRecord = Selectable<BaremetalChassisTable>;

export const chassisNotFound = (ident: string) => baremetalDomainError('chassis_not_found', { ident }, `no chassis ${ident}`);

export async function findChassis(db: Db, uuid: string): Promise<ChassisRecord | undefined> {
  if (!isUuidLike(uuid)) return undefined;
  return db.db.selectFrom('baremetal_chassis').selectAll().where('uuid', '=', normalizeUuid(uuid)).executeTakeFirst();
}

export async function requireChassis(db: Db, uuid: string): Promise<ChassisRecord> {
  const found = await findChassis(db, uuid);
  if (!found) throw chassisNotFound(uuid);
  return found;
}

export async function listChassis(db: Db, page: Page): Promise<ChassisRecord[]> {
  return applyPage(db.db.selectFrom('baremetal_chassis as t').selectAll('t'), page).execute();
}

export async function insertChassis(tx: Tx, values: Insertable<BaremetalChassisTable>): Promise<void> {
  await tx.db.insertInto('baremetal_chassis').values(values).execute();
}

export async function updateChassis(tx: Tx, id: number, changes: Updateable<BaremetalChassisTable>): Promise<void> {
  await tx.db.updateTable('baremetal_chassis').set(changes).where('id', '=', id).execute();
}

export async function chassisHasNodes(db: Db, id: number): Promise<boolean> {
  return (await db.db.selectFrom('baremetal_nodes').select('id').where('chassis_id', '=', id).limit(1).executeTakeFirst()) !== undefined;
}

export async function deleteChassisRow(tx: Tx, id: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_chassis').where('id', '=', id).execute();
}
