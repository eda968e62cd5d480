// SQL of the durable outbox of deallocations owed to external inventories. Entries are written in
// the same transaction as the state change that frees the value; workers in any process claim due
// entries with one statement (PostgreSQL: FOR UPDATE SKIP LOCKED, so processes never claim the
// same entry; SQLite: its single writer). A claim is a lease: a process that dies mid-delivery
// leaves its entries to be claimed again when the lease runs out (deallocation is idempotent).
import { type Selectable, sql } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import type { IdsOutboxTable } from '../../db/schema.js';

import type { HoldingRow } from './service-instances.js';

export type OutboxRow = Selectable<IdsOutboxTable>;

/** Owe the inventory the deallocation of a holding, due now. */
export async function enqueueDeallocation(tx: Tx, holding: HoldingRow): Promise<void> {
  const now = tx.clock.nowIso();
  await tx.db
    .insertInto('ids_outbox')
    .values({
      inventory: holding.inventory,
      operation: 'deallocate',
      owner_key: holding.owner_key,
      attribute: holding.attribute,
      instance_id: holding.instance_id,
      value: holding.value,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      claimed_by: null,
      claimed_until: null,
      last_error: null,
      completed_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** Claim up to `limit` due entries for `worker` until `until`, in one statement. */
export async function claimDue(tx: Tx, worker: string, limit: number, until: string): Promise<OutboxRow[]> {
  const now = tx.clock.nowIso();
  const skipLocked = tx.dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const res = await sql<OutboxRow>`update ids_outbox set claimed_by = ${worker}, claimed_until = ${until}, updated_at = ${now}
    where id in (select id from ids_outbox where state = 'pending' and next_attempt_at <= ${now}
                 and (claimed_until is null or claimed_until < ${now})
                 order by next_attempt_at, id limit ${limit} ${skipLocked})
    returning *`.execute(tx.db);
  return res.rows;
}

/** Mark an entry this worker claimed as delivered; false when the claim was lost meanwhile. */
export async function markDelivered(tx: Tx, entryId: number, worker: string): Promise<boolean> {
  const now = tx.clock.nowIso();
  const res = await tx.db
    .updateTable('ids_outbox')
    .set((eb) => ({
      state: 'done',
      completed_at: now,
      updated_at: now,
      claimed_by: null,
      claimed_until: null,
      last_error: null,
      attempts: eb('attempts', '+', 1),
    }))
    .where('id', '=', entryId)
    .where('claimed_by', '=', worker)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Release this worker's claim on an entry that failed, with the next attempt's time. */
export async function markFailed(tx: Tx, entryId: number, worker: string, attempts: number, nextAttemptAt: string, error: string): Promise<void> {
  await tx.db
    .updateTable('ids_outbox')
    .set({ attempts, next_attempt_at: nextAttemptAt, last_error: error.slice(0, 2000), claimed_by: null, claimed_until: null, updated_at: tx.clock.nowIso() })
    .where('id', '=', entryId)
    .where('claimed_by', '=', worker)
    .where('state', '=', 'pending')
    .execute();
}

/** Make a pending entry due now. */
export async function makeDue(tx: Tx, entryId: number): Promise<void> {
  await tx.db.updateTable('ids_outbox').set({ next_attempt_at: tx.clock.nowIso(), updated_at: tx.clock.nowIso() }).where('id', '=', entryId).execute();
}

export async function findOutboxEntry(db: Db, id: number): Promise<OutboxRow | undefined> {
  return db.db.selectFrom('ids_outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listOutbox(db: Db, filter: { state?: string; instance?: string }, after: number | null, limit: number): Promise<OutboxRow[]> {
  let q = db.db.selectFrom('ids_outbox').selectAll();
  if (filter.state) q = q.where('state', '=', filter.state);
  if (filter.instance) q = q.where('instance_id', '=', filter.instance);
  if (after !== null) q = q.where('id', '>', after);
  return q.orderBy('id').limit(limit).execute();
}

/** Pending and delivered entries per inventory. */
export async function outboxCounts(db: Db): Promise<Map<string, { pending: number; done: number }>> {
  const rows = await db.db
    .selectFrom('ids_outbox')
    .select(['inventory', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['inventory', 'state'])
    .execute();
  const out = new Map<string, { pending: number; done: number }>();
  for (const r of rows) {
    const e = out.get(r.inventory) ?? { pending: 0, done: 0 };
    if (r.state === 'pending') e.pending = Number(r.n);
    else e.done = Number(r.n);
    out.set(r.inventory, e);
  }
  return out;
}
