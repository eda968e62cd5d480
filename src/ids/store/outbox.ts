// The durable outbox of deallocations owed to external inventories. Entries are written in the
// same transaction as the state change that frees the value; workers in any process claim due
// entries with one statement (PostgreSQL: FOR UPDATE SKIP LOCKED, so processes never claim the
// same entry; SQLite: its single writer), deliver them, and mark them done or schedule the next
// attempt with exponential backoff. A claim is a lease: a process that dies mid-delivery leaves
// its entries to be claimed again when the lease runs out (deallocation is idempotent).
import { type Selectable, sql } from 'kysely';
import type { Database, Db } from '../../db/database.js';
import type { IdsOutboxTable } from '../../db/schema.js';
import { transaction } from '../../db/transaction.js';
import { idsError, notFoundError } from '../errors.js';
import { finishTermination } from './service-instances.js';

export type OutboxRow = Selectable<IdsOutboxTable>;

export async function claimDue(database: Database, worker: string, limit: number, leaseMs: number): Promise<OutboxRow[]> {
  const now = database.clock.nowIso();
  const until = new Date(database.clock.nowMs() + leaseMs).toISOString();
  const skipLocked = database.dialect === 'postgres' ? sql`for update skip locked` : sql``;
  return transaction(database, async (tx) => {
    const res = await sql<OutboxRow>`update ids_outbox set claimed_by = ${worker}, claimed_until = ${until}, updated_at = ${now}
      where id in (select id from ids_outbox where state = 'pending' and next_attempt_at <= ${now}
                   and (claimed_until is null or claimed_until < ${now})
                   order by next_attempt_at, id limit ${limit} ${skipLocked})
      returning *`.execute(tx.db);
    return res.rows;
  });
}

export async function markDelivered(database: Database, entry: OutboxRow, worker: string): Promise<void> {
  await transaction(database, async (tx) => {
    const now = database.clock.nowIso();
    const res = await tx.db
      .updateTable('ids_outbox')
      .set((eb) => ({ state: 'done', completed_at: now, updated_at: now, claimed_by: null, claimed_until: null, last_error: null, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', entry.id)
      .where('claimed_by', '=', worker)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1 && entry.instance_id) await finishTermination(tx, entry.instance_id);
  });
}

/** Exponential backoff with jitter: base·2^(attempts−1), capped, times 0.5–1. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  return Math.max(1, Math.round(exp * (0.5 + random() / 2)));
}

export async function markFailed(database: Database, entry: OutboxRow, worker: string, error: string, baseMs: number, maxMs: number): Promise<void> {
  const attempts = entry.attempts + 1;
  const next = new Date(database.clock.nowMs() + retryDelayMs(attempts, baseMs, maxMs)).toISOString();
  await transaction(database, async (tx) => {
    await tx.db
      .updateTable('ids_outbox')
      .set({ attempts, next_attempt_at: next, last_error: error.slice(0, 2000), claimed_by: null, claimed_until: null, updated_at: tx.clock.nowIso() })
      .where('id', '=', entry.id)
      .where('claimed_by', '=', worker)
      .where('state', '=', 'pending')
      .execute();
  });
}

export function outboxView(row: OutboxRow) {
  return {
    id: row.id,
    inventory: row.inventory,
    operation: row.operation,
    owner: row.owner_key,
    attribute: row.attribute,
    instance_id: row.instance_id,
    value: row.value === null ? null : (JSON.parse(row.value) as unknown),
    state: row.state,
    attempts: row.attempts,
    next_attempt_at: row.state === 'pending' ? row.next_attempt_at : null,
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}

export async function listOutbox(db: Db, filter: { state?: string; instance?: string }, after: number | null, limit: number) {
  let q = db.db.selectFrom('ids_outbox').selectAll();
  if (filter.state) q = q.where('state', '=', filter.state);
  if (filter.instance) q = q.where('instance_id', '=', filter.instance);
  if (after !== null) q = q.where('id', '>', after);
  const rows = await q.orderBy('id').limit(limit + 1).execute();
  return { items: rows.slice(0, limit).map(outboxView), next: rows.length > limit ? rows[limit - 1]!.id : null };
}

export async function getOutboxEntry(db: Db, id: number) {
  const row = await db.db.selectFrom('ids_outbox').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFoundError(`outbox entry ${id}`);
  return outboxView(row);
}

/** Make a pending entry due now (after fixing the inventory, say). */
export async function retryNow(database: Database, id: number) {
  return transaction(database, async (tx) => {
    const row = await tx.db.selectFrom('ids_outbox').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFoundError(`outbox entry ${id}`);
    if (row.state !== 'pending') throw idsError(409, 'ids.invalid_state', `Outbox entry ${id} is already delivered`, { state: row.state });
    await tx.db.updateTable('ids_outbox').set({ next_attempt_at: tx.clock.nowIso(), updated_at: tx.clock.nowIso() }).where('id', '=', id).execute();
    return outboxView(await tx.db.selectFrom('ids_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
  });
}

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
