// The outbox of deallocations owed to external inventories: claiming due entries, recording a
// delivery or a failure (the next attempt after the one backoff, src/core/backoff.ts), and what the
// API shows of it.
import { backoffDelay } from '../../core/backoff.js';
import { transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import * as store from '../store/outbox.js';
import { finishTermination } from '../store/service-instances.js';

export type { OutboxRow } from '../store/outbox.js';

/** Claim up to `limit` due entries for this process's worker, for `leaseMs`. */
export async function claimDue(ctx: IdsContext, limit: number, leaseMs: number): Promise<store.OutboxRow[]> {
  const until = new Date(ctx.database.clock.nowMs() + leaseMs).toISOString();
  return transaction(ctx.database, (tx) => store.claimDue(tx, ctx.workerName, limit, until));
}

/** The inventory confirmed: the entry is done, and an instance waiting only for it is terminated. */
export async function delivered(ctx: IdsContext, entry: store.OutboxRow): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    if ((await store.markDelivered(tx, entry.id, ctx.workerName)) && entry.instance_id) await finishTermination(tx, entry.instance_id);
  });
}

/** The delivery failed: try again after a backoff whose bound doubles with every attempt. */
export async function failed(ctx: IdsContext, entry: store.OutboxRow, error: string): Promise<void> {
  const attempts = entry.attempts + 1;
  const next = new Date(ctx.database.clock.nowMs() + backoffDelay(attempts, ctx.retry)).toISOString();
  await transaction(ctx.database, (tx) => store.markFailed(tx, entry.id, ctx.workerName, attempts, next, error));
}

/** Up to `limit` entries after id `after`; `next` is set when more follow. */
export async function listOutbox(ctx: IdsContext, filter: { state?: string; instance?: string }, after: number | null, limit: number) {
  const rows = await store.listOutbox(ctx.database, filter, after, limit + 1);
  return { items: rows.slice(0, limit), next: rows.length > limit ? rows[limit - 1]!.id : null };
}

export async function getOutboxEntry(ctx: IdsContext, id: number): Promise<store.OutboxRow> {
  const row = await store.findOutboxEntry(ctx.database, id);
  if (!row) throw idsDomainError('outbox_entry_not_found', { id });
  return row;
}

/** Make a pending entry due now (after fixing the inventory, say). */
export async function retryNow(ctx: IdsContext, id: number): Promise<store.OutboxRow> {
  return transaction(ctx.database, async (tx) => {
    const row = await store.findOutboxEntry(tx, id);
    if (!row) throw idsDomainError('outbox_entry_not_found', { id });
    if (row.state !== 'pending') throw idsDomainError('outbox_entry_delivered', { id, state: row.state });
    await store.makeDue(tx, id);
    return (await store.findOutboxEntry(tx, id))!;
  });
}

export const outboxCounts = (ctx: IdsContext) => store.outboxCounts(ctx.database);
