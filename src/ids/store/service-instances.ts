// SQL of service instances and of their holdings in external inventories.
import type { Selectable } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import type { Db, Tx } from '../../db/database.js';
import type { IdsExternalHoldingTable, IdsServiceInstanceTable } from '../../db/schema.js';
import { type ClosingWrites, placeholders, type Statement, writeStatement } from '../../db/statement.js';

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

type NewInstance = Omit<InstanceRow, 'created_at' | 'updated_at'>;

/** The columns a new instance is given, in the order of the insert's values (every one: a key missing here does not compile). */
const newInstanceColumns = Object.keys({
  id: 0,
  service_type: 0,
  spec_id: 0,
  lifecycle: 0,
  state: 0,
  version: 0,
  candidate: 0,
  candidate_validated: 0,
  active: 0,
  rollback: 0,
  last_error: 0,
  terminated_at: 0,
  forced_releases: 0,
  requested_attributes: 0,
  project_id: 0,
} satisfies Record<keyof NewInstance, 0>) as Array<keyof NewInstance>;

// every reservation inserts its instance: a statement written once, not built and compiled per request (issue 31)
const insertIfAbsent = writeStatement<InstanceRow>(
  `insert into ids_service_instances (${newInstanceColumns.join(', ')}, created_at, updated_at)
   values (${placeholders(newInstanceColumns.length + 2)}) on conflict (id) do nothing returning *`,
);

/** Insert a new instance: the row as stored (RETURNING: no read after it), or undefined when one has its id. */
export async function insertInstanceIfAbsent(tx: Tx, row: NewInstance): Promise<InstanceRow | undefined> {
  const now = tx.clock.nowIso();
  return insertIfAbsent.one(tx, [...newInstanceColumns.map((c) => row[c]), now, now]);
}

/**
 * An instance's update of these columns, then its version moved, compare-and-set on the version:
 * every reservation saves its instance once, so the text is made once per set of columns (a few
 * shapes, from the code) instead of built and compiled per request (issue 31). RETURNING: the
 * saved row comes back with the update, no second round trip while the transaction may hold a
 * provider's or a pool's row lock.
 */
const updatesByColumns = new Map<string, Statement<InstanceRow, Tx>>();
const instanceColumns = new Set<string>([...newInstanceColumns, 'created_at', 'updated_at']);
function instanceUpdate(
  tx: Tx,
  row: InstanceRow,
  changes: Partial<InstanceRow>,
): { statement: Statement<InstanceRow, Tx>; params: unknown[]; moved: Partial<InstanceRow> } {
  const moved: Partial<InstanceRow> = { ...changes, version: row.version + 1, updated_at: tx.clock.nowIso() };
  // a column given undefined keeps its value (as the query builder's set() did)
  const columns = Object.keys(moved).filter((c) => moved[c as keyof InstanceRow] !== undefined) as Array<keyof InstanceRow>;
  const key = columns.join(',');
  let statement = updatesByColumns.get(key);
  if (!statement) {
    for (const c of columns) if (!instanceColumns.has(c)) throw new Error(`not a column of ids_service_instances: ${c}`);
    statement = writeStatement<InstanceRow>(
      `update ids_service_instances set ${columns.map((c) => `${c} = ?`).join(', ')} where id = ? and version = ? returning *`,
    );
    updatesByColumns.set(key, statement);
  }
  return { statement, params: [...columns.map((c) => moved[c]), row.id, row.version], moved };
}

/** Change a locked instance and move its version; the row as it is now. */
export async function saveInstance(tx: Tx, row: InstanceRow, changes: Partial<InstanceRow>): Promise<InstanceRow> {
  const { statement, params } = instanceUpdate(tx, row, changes);
  const saved = await statement.one(tx, params);
  if (!saved) throw new RetryableConflict('instance changed under its lock', () => idsDomainError('changed_concurrently', { resource: 'instance' }));
  return saved;
}

/**
 * `saveInstance` as the last of the writes that close the transaction (ClosingWrites), sent
 * together in one statement now; raises (allot_assert) when any of them, this one included, did
 * not happen. The row as it is now.
 */
export async function saveInstanceClosing(tx: Tx, row: InstanceRow, changes: Partial<InstanceRow>, closing: ClosingWrites): Promise<InstanceRow> {
  const { statement, params, moved } = instanceUpdate(tx, row, changes);
  closing.add(statement.compilable(tx, params), 1);
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
