// SQL of service instances and of their holdings in external inventories.
import type { Selectable } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import type { Db, Tx } from '../../db/database.js';
import type { IdsExternalHoldingTable, IdsServiceInstanceTable } from '../../db/schema.js';
import type { ClosingWrites } from '../../db/statement.js';

import { idsDomainError } from '../core/domain-errors.js';

export type InstanceRow = Selectable<IdsServiceInstanceTable>;
export type HoldingRow = Selectable<IdsExternalHoldingTable>;

export async function findInstance(db: Db, id: string): Promise<InstanceRow | undefined> {
  return db.db.selectFrom('ids_service_instances').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The instance of this id; `instance_not_found` when there is none. */
export async function readInstance(db: Db, id: string): Promise<InstanceRow> {
  const row = await findInstance(db, id);
  if (!row) throw idsDomainError('instance_not_found', { id });
  return row;
}

/** Read an instance and lock its row for the rest of the transaction. */
export async function lockInstance(tx: Tx, id: string): Promise<InstanceRow> {
  const row = await lockInstanceIfPresent(tx, id);
  if (!row) throw idsDomainError('instance_not_found', { id });
  return row;
}

/** `lockInstance`, undefined when there is no such instance. */
export async function lockInstanceIfPresent(tx: Tx, id: string): Promise<InstanceRow | undefined> {
  let q = tx.db.selectFrom('ids_service_instances').selectAll().where('id', '=', id);
  if (tx.dialect === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Instances after `after` by id; of one project when `filter.project` is given (null: of none). */
export async function listInstances(
  db: Db,
  filter: { state?: string; service_type?: string; project?: string | null },
  after: string | null,
  limit: number,
): Promise<InstanceRow[]> {
  let q = db.db.selectFrom('ids_service_instances').selectAll();
  if (filter.project !== undefined) {
    const project = filter.project;
    q = q.where((eb) => (project === null ? eb('project_id', 'is', null) : eb('project_id', '=', project)));
  }
  if (filter.state) q = q.where('state', '=', filter.state);
  if (filter.service_type) q = q.where('service_type', '=', filter.service_type);
  if (after !== null) q = q.where('id', '>', after);
  return q.orderBy('id').limit(limit).execute();
}

/** Insert a new instance: the row as stored (RETURNING: no read after it), or undefined when one has its id. */
export async function insertInstanceIfAbsent(tx: Tx, row: Omit<InstanceRow, 'created_at' | 'updated_at'>): Promise<InstanceRow | undefined> {
  const now = tx.clock.nowIso();
  return tx.db
    .insertInto('ids_service_instances')
    .values({ ...row, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Change a locked instance and move its version; the row as it is now. */
export async function saveInstance(tx: Tx, row: InstanceRow, changes: Partial<InstanceRow>): Promise<InstanceRow> {
  // the saved row comes back with the update (RETURNING): no second round trip while the
  // transaction may hold a provider's or a pool's row lock
  const saved = await tx.db
    .updateTable('ids_service_instances')
    .set({ ...changes, version: row.version + 1, updated_at: tx.clock.nowIso() })
    .where('id', '=', row.id)
    .where('version', '=', row.version)
    .returningAll()
    .executeTakeFirst();
  if (!saved) throw new RetryableConflict('instance changed under its lock', () => idsDomainError('changed_concurrently', { resource: 'instance' }));
  return saved;
}

/**
 * `saveInstance` as the last of the writes that close the transaction (ClosingWrites), sent
 * together in one statement now; raises (allot_assert) when any of them, this one included, did
 * not happen. The row as it is now.
 */
export async function saveInstanceClosing(tx: Tx, row: InstanceRow, changes: Partial<InstanceRow>, closing: ClosingWrites): Promise<InstanceRow> {
  const moved = { ...changes, version: row.version + 1, updated_at: tx.clock.nowIso() };
  closing.add(tx.db.updateTable('ids_service_instances').set(moved).where('id', '=', row.id).where('version', '=', row.version), 1);
  await closing.send(tx);
  return { ...row, ...moved };
}

/** A deallocating instance whose deallocations were all delivered is terminated. */
export async function markTerminated(tx: Tx, id: string): Promise<void> {
  await tx.db.updateTable('ids_service_instances').set({ state: 'terminated', terminated_at: tx.clock.nowIso() }).where('id', '=', id).execute();
}

/** The outbox worker delivered the last deallocation of an instance in `deallocating`: terminate it. */
export async function finishTermination(tx: Tx, instanceId: string): Promise<void> {
  if ((await pendingDeallocations(tx, instanceId)) > 0) return;
  await tx.db
    .updateTable('ids_service_instances')
    .set((eb) => ({ state: 'terminated', terminated_at: tx.clock.nowIso(), updated_at: tx.clock.nowIso(), version: eb('version', '+', 1) }))
    .where('id', '=', instanceId)
    .where('state', '=', 'deallocating')
    .execute();
}

/** Keep why a validation failed, unless the instance changed since it was read. */
export async function recordLastError(tx: Tx, id: string, version: number, message: string): Promise<void> {
  await tx.db.updateTable('ids_service_instances').set({ last_error: message }).where('id', '=', id).where('version', '=', version).execute();
}

/** Outbox entries of the instance not delivered yet. */
export async function pendingDeallocations(db: Db, instanceId: string): Promise<number> {
  const r = await db.db
    .selectFrom('ids_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('instance_id', '=', instanceId)
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

// --- holdings in external inventories ---

export async function holdingsOf(db: Db, instanceId: string): Promise<HoldingRow[]> {
  return db.db.selectFrom('ids_external_holdings').selectAll().where('instance_id', '=', instanceId).execute();
}

export async function findHolding(db: Db, instanceId: string, attribute: string, ownerKey: string): Promise<HoldingRow | undefined> {
  return db.db
    .selectFrom('ids_external_holdings')
    .selectAll()
    .where('instance_id', '=', instanceId)
    .where('attribute', '=', attribute)
    .where('owner_key', '=', ownerKey)
    .executeTakeFirst();
}

/** A holding whose value the inventory has not given yet (the call is about to be made). */
export async function insertPendingHolding(tx: Tx, instanceId: string, attribute: string, inventory: string, ownerKey: string): Promise<void> {
  const now = tx.clock.nowIso();
  await tx.db
    .insertInto('ids_external_holdings')
    .values({ instance_id: instanceId, attribute, inventory, owner_key: ownerKey, value: null, created_at: now, updated_at: now })
    .execute();
}

export async function setHoldingValue(tx: Tx, instanceId: string, attribute: string, ownerKey: string, value: string): Promise<void> {
  await tx.db
    .updateTable('ids_external_holdings')
    .set({ value, updated_at: tx.clock.nowIso() })
    .where('instance_id', '=', instanceId)
    .where('attribute', '=', attribute)
    .where('owner_key', '=', ownerKey)
    .execute();
}

export async function deleteHolding(tx: Tx, holdingId: number): Promise<void> {
  await tx.db.deleteFrom('ids_external_holdings').where('id', '=', holdingId).execute();
}
