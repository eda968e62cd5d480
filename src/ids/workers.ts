// Background work of the identifier API, on the one periodic runner: delivering outbox
// deallocations to external inventories (in every process at once: claims never overlap), and
// releasing reservations whose lease ran out. (The planner's statistics of its tables are kept
// current by the process's `db-statistics` worker, server/workers.ts.)
import { periodic } from '../background/periodic.js';
import type { BackgroundWorker } from '../background/worker.js';
import type { IdsContext } from './context.js';
import { problemDetail } from './errors.js';
import { expireLeases } from './services/allocations.js';
import { type OutboxRow, claimDue, delivered, failed } from './services/outbox.js';

/** Entries one worker claims at once. */
const CLAIM_BATCH = 20;

async function deliver(ctx: IdsContext, entry: OutboxRow): Promise<void> {
  const call = { attribute: entry.attribute, ...(entry.instance_id ? { instanceId: entry.instance_id } : {}) };
  try {
    await ctx.inventories.call(entry.inventory, 'deallocate', entry.owner_key, call);
    // "Until the inventory confirms": when it can say whether the owner still holds something, ask.
    if (ctx.inventories.offers(entry.inventory, 'hasAllocation')) {
      const still = await ctx.inventories.call<boolean>(entry.inventory, 'hasAllocation', entry.owner_key, call);
      if (still) throw new Error('the inventory still reports an allocation for this owner after deallocating');
    }
    await delivered(ctx, entry);
    ctx.log.info({ outbox: entry.id, inventory: entry.inventory, owner: entry.owner_key }, 'deallocation delivered');
  } catch (err) {
    const message = problemDetail(err);
    await failed(ctx, entry, message);
    ctx.log.warn({ outbox: entry.id, inventory: entry.inventory, attempts: entry.attempts + 1, err: message }, 'deallocation failed; will retry');
  }
}

export function createIdsWorkers(ctx: IdsContext): BackgroundWorker[] {
  // The claim outlives the slowest delivery (a deallocate and a check, each with its limit).
  const claimMs = 2 * Math.max(1000, ...ctx.inventories.list().map((e) => e.timeoutMs)) + 10_000;
  const outbox = periodic({ name: 'ids-outbox', intervalMs: ctx.workerIntervalMs, log: ctx.log }, async () => {
    for (;;) {
      const due = await claimDue(ctx, CLAIM_BATCH, claimMs);
      if (due.length === 0) return;
      await Promise.all(due.map((e) => deliver(ctx, e)));
    }
  });
  const leases = periodic({ name: 'ids-lease-expiry', intervalMs: ctx.workerIntervalMs, log: ctx.log }, async () => {
    const n = await expireLeases(ctx);
    if (n) ctx.log.info({ released: n }, 'expired reservations released');
  });
  return [outbox, leases];
}
