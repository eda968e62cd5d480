// Chassis: read, create, patch, delete, each write one transaction; a chassis with nodes is not deleted.
import { newUuid } from '../../core/uuid.js';
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import type { Page } from '../core/paging.js';
import {
  type ChassisRecord,
  chassisHasNodes,
  chassisNotFound,
  deleteChassisRow,
  findChassis,
  insertChassis,
  listChassis,
  requireChassis,
  updateChassis,
} from '../store/chassis.js';
import { type Edit, asJson, uniquely } from './resource-writes.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export interface ChassisFields {
  description: string | null;
  extra: unknown;
}

export type { ChassisRecord } from '../store/chassis.js';

const chassisTaken = (uuid: string) => baremetalDomainError('chassis_uuid_taken', { uuid }, `a chassis has uuid ${uuid}`);

export async function createChassis(ctx: BaremetalContext, uuid: string | null, f: ChassisFields): Promise<ChassisRecord> {
  const chassisUuid = uuid ?? newUuid();
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        if (await findChassis(tx, chassisUuid)) throw chassisTaken(chassisUuid);
        await insertChassis(tx, { uuid: chassisUuid, description: f.description, extra: asJson(f.extra), created_at: tx.clock.nowIso(), updated_at: null });
        return (await findChassis(tx, chassisUuid))!;
      }),
    async () => chassisTaken(chassisUuid),
  );
}

/** The chassis with this uuid, or chassis_not_found. */
export function getChassis(ctx: BaremetalContext, uuid: string): Promise<ChassisRecord> {
  return requireChassis(ctx.database, uuid);
}

export function listChassisPage(ctx: BaremetalContext, page: Page): Promise<ChassisRecord[]> {
  return listChassis(ctx.database, page);
}

export function chassisDocument(c: ChassisRecord): Record<string, unknown> {
  return { uuid: c.uuid, description: c.description, extra: JSON.parse(c.extra) };
}

export async function patchChassis(ctx: BaremetalContext, uuid: string, edit: (doc: Record<string, unknown>) => Edit<ChassisFields>): Promise<ChassisRecord> {
  return transaction(ctx.database, async (tx) => {
    const chassis = await findChassis(tx, uuid);
    if (!chassis) throw chassisNotFound(uuid);
    const { fields, changed } = edit(chassisDocument(chassis));
    await updateChassis(tx, chassis.id, {
      ...(changed('description') ? { description: fields.description } : {}),
      ...(changed('extra') ? { extra: asJson(fields.extra) } : {}),
      updated_at: tx.clock.nowIso(),
    });
    return (await findChassis(tx, uuid))!;
  });
}

export async function deleteChassis(ctx: BaremetalContext, uuid: string): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const chassis = await findChassis(tx, uuid);
    if (!chassis) throw chassisNotFound(uuid);
    if (await chassisHasNodes(tx, chassis.id)) throw baremetalDomainError('chassis_not_empty', { chassis: chassis.uuid }, `chassis ${chassis.uuid} has nodes`);
    await deleteChassisRow(tx, chassis.id);
  }).catch((err) => {
    // a node put in the chassis concurrently (the foreign key refused the delete)
    if (/foreign key/i.test(String((err as Error).message))) throw baremetalDomainError('chassis_not_empty', { chassis: uuid }, `chassis ${uuid} has nodes`);
    throw err;
  });
}
