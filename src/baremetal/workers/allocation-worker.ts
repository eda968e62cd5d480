// The allocation worker of one process ("a thread is spawned for the remaining allocation
// process"): what is done with each allocation id in the context's queue, `allocationWorkers` at
// a time — the allocations that could not be finished in their request (no node free at that
// moment, or a configured delay). Each is tried until it is active, failed or gone; while the
// nodes that would do are held by other allocations or still settling their power state (a power
// change under way), it is tried again after a short random pause, so racing workers spread out.
// It fails when no node in the pool could ever do (the error says which filter emptied it) or
// when retries run out. A database fault (unreachable, failing over) fails nothing: the
// allocation waits with backoff until the database answers, and is tried again.
import { backoffDelay } from '../../core/backoff.js';
import { classifyFault } from '../../db/faults.js';
import type { BaremetalContext } from '../context.js';
import { attemptAllocation, failAllocation } from '../services/allocation-attempts.js';
import { allocationUuid } from '../store/allocations.js';
import { type Work, pause } from './queue.js';

/** How long an allocation keeps retrying nodes that other workers hold before it gives up. */
const RETRY_WINDOW_MS = 60_000;
/** Pauses between tries while the nodes that would do are held or settling. */
const RACE_BACKOFF = { baseMs: 10, maxMs: 500 };
/** Waits while the database is unreachable. */
const FAULT_BACKOFF = { baseMs: 100, maxMs: 5_000 };

export function allocationWork(ctx: BaremetalContext): Work<number> {
  const uuidOf = async (id: number) => ({ id, uuid: (await allocationUuid(ctx.database, id)) ?? String(id) });
  return async (id, stopping) => {
    // the spec's allocation is asynchronous; a configured delay keeps it `allocating` for a while
    // so that races, deletes and take-over can be observed
    await pause(ctx.config.allocationDelay, stopping);
    // a node mid power transition is waited for at most as long as a transition takes, on top
    const deadline = ctx.clock.nowMs() + RETRY_WINDOW_MS + ctx.config.transitionTime;
    let faults = 0;
    for (let round = 1; !stopping.aborted; round++) {
      try {
        const attempt = await attemptAllocation(ctx, id);
        if (attempt.kind === 'done' || attempt.kind === 'gone') return;
        if (attempt.kind === 'failed') return void (await failAllocation(ctx, await uuidOf(id), attempt.reason));
        if (ctx.clock.nowMs() > deadline) return void (await failAllocation(ctx, await uuidOf(id), 'could not reserve any of the suitable nodes'));
        // the nodes that would do are held by someone else or settling: back off with jitter, then try again
        await pause(backoffDelay(round, RACE_BACKOFF), stopping);
      } catch (err) {
        if (stopping.aborted) return;
        if (classifyFault(err)) {
          faults++;
          if (faults === 1 || faults % 20 === 0) ctx.log.warn({ err: (err as Error).message, allocation: id, faults }, 'allocation waits for the database');
          await pause(backoffDelay(faults, FAULT_BACKOFF), stopping);
          continue;
        }
        ctx.log.error({ err, allocation: id }, 'allocation failed unexpectedly');
        // If even this fails (the database went away meanwhile), the conductor's heartbeat resumes it.
        await failAllocation(ctx, await uuidOf(id), `Unexpected exception during allocation: ${(err as Error).message}`).catch(() => {});
        return;
      }
    }
  };
}
