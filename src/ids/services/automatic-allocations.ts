// PostgreSQL: single automatic allocations (`POST …/allocations` without `value`) without holding
// the pool's lock across round trips (issue 15). The locked path held it across BEGIN/lock →
// probe → write → COMMIT; with 48 clients over 3 processes ~28 transactions waited for it at any
// moment, ~235 ms per allocation, for 0.23 ms of SQL.
//
// Here the requests of one pool that arrive in a process while a batch of that pool is under way
// make up the next batch (ctx.poolClaims): one read of the pool and one probe, without the lock,
// decide them all (the strategy in JS, store/one-statement-allocate.ts), and ONE statement takes
// them, holding the pool's lock only while it runs. Racers of every strategy but random choose the
// same block, so taking turns within a process leaves only the processes to race one another;
// measured, 48 clients over 3 processes (lowest), one request at a time and no turns: 1 976 of
// 2 000 allocations lost 3 races and took the locked path (52/s, worse than before). Random draws
// of a batch are taken by one statement too, each span a compare-and-set of its own, so a draw
// another process's write overtook is asked again without taking its siblings' blocks with it.
//
// A request whose blocks were lost to another process asks again in the next batch, up to
// MAX_PROBES times; then, and when the pool holds leases past due, nothing free was seen, or the
// database failed before the write, the locked path decides (null).
import { RetryableConflict } from '../../core/errors.js';
import type { BatchHandler, Queued } from '../../core/serial.js';
import { classifyFault, isRetryableFault } from '../../db/faults.js';
import { transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import { type Strategy, blockSize } from '../core/pool-space.js';
import { type PoolScope, inScope } from '../core/scope.js';
import { type AllocationOutcome, type AllocationRequest, repeatAnswer } from '../store/allocate.js';
import { holderKey } from '../store/free-ranges.js';
import { automaticClaims, lostTheBlock, randomClaims } from '../store/one-statement-allocate.js';
import { type LockedPool, readPool } from '../store/pools.js';

/** Probes a request may lose to other processes before the locked path decides it. */
const MAX_PROBES = 10;

/** An allocation with the pool it was decided with (services/allocations.ts's AllocationResult). */
type AllocationResult = AllocationOutcome & { pool: LockedPool };

interface Ask {
  req: AllocationRequest;
  scope: PoolScope;
  probes: number;
}
type Entry = Queued<Ask, AllocationResult | null>;

/** The allocation, or null when the locked path must decide. */
export function allocateWithoutLock(ctx: IdsContext, req: AllocationRequest, scope: PoolScope): Promise<AllocationResult | null> {
  const handle: BatchHandler<Ask, AllocationResult | null> = (batch, again) => claimBatch(ctx, batch, again).catch((err) => readFailed(batch, err));
  return ctx.poolClaims.run(req.pool, { req, scope, probes: 0 }, handle);
}

/**
 * A read failed: on a fault the locked path waits out (with backoff), it decides; anything else is
 * the answer. (Entries already settled keep their outcome.)
 */
function readFailed(entries: Entry[], err: unknown): void {
  const fault = classifyFault(err);
  for (const e of entries) {
    if (fault && isRetryableFault(fault)) e.resolve(null);
    else e.reject(err);
  }
}

async function claimBatch(ctx: IdsContext, batch: Entry[], again: (e: Entry) => void): Promise<void> {
  const name = batch[0]!.item.req.pool;
  const pool = await readPool(ctx.database, name);
  // One group: the first request's strategy and block size, each owner+purpose once; the rest wait.
  const group: Entry[] = [];
  const holders = new Set<string>();
  let strategy: Strategy | null = null;
  let block = 0n;
  for (const e of batch) {
    const { req, scope } = e.item;
    if (!pool || !inScope(scope, pool.project)) {
      e.reject(idsDomainError('pool_not_found', { pool: name }));
      continue;
    }
    if (pool.hasExpiredLeases) {
      e.resolve(null);
      continue;
    }
    let size: bigint;
    try {
      size = blockSize(pool.space, req);
    } catch (err) {
      e.reject(err);
      continue;
    }
    const holder = holderKey({ owner: req.owner, purpose: req.purpose ?? '' });
    strategy ??= req.strategy ?? pool.strategy;
    if (group.length === 0) block = size;
    if (size === block && (req.strategy ?? pool.strategy) === strategy && !holders.has(holder)) {
      group.push(e);
      holders.add(holder);
    } else again(e);
  }
  if (!pool || !strategy || group.length === 0) return;
  await claimGroup(ctx, pool, group, strategy, block, again);
}

async function claimGroup(ctx: IdsContext, pool: LockedPool, group: Entry[], strategy: Strategy, block: bigint, again: (e: Entry) => void): Promise<void> {
  const askAgain = (e: Entry) => (++e.item.probes >= MAX_PROBES ? e.resolve(null) : again(e));
  const reqs = group.map((e) => e.item.req);
  const { decisions, claim } =
    strategy === 'random' ? await randomClaims(ctx.database, pool, reqs, block) : await automaticClaims(ctx.database, pool, reqs, strategy, block);
  const taking: Entry[] = [];
  const repeats: Array<Promise<void>> = [];
  for (const [i, d] of decisions.entries()) {
    const e = group[i]!;
    if (d.kind === 'new') taking.push(e);
    else if (d.kind === 'none') e.resolve(null);
    else if (d.kind === 'later') again(e);
    else {
      repeats.push(
        repeatAnswer(ctx.database, pool, d.id, d.params).then(
          (outcome) => e.resolve({ pool, ...outcome }),
          // released since the probe saw it: ask again
          (err) => (err instanceof RetryableConflict ? askAgain(e) : e.reject(err)),
        ),
      );
    }
  }
  await Promise.all(repeats);
  if (!claim) return;
  try {
    const kept = await transaction(ctx.database, claim.write, { oneStatement: true, maxAttempts: 1 });
    for (const [i, e] of taking.entries()) {
      const row = claim.rows[i]!;
      // random: a draw whose span another process changed since the probe was not taken
      if (kept.has(row.id)) e.resolve({ pool, row, created: true });
      else askAgain(e);
    }
  } catch (err) {
    if (lostTheBlock(err)) {
      for (const e of taking) askAgain(e);
      return;
    }
    // After the statement was sent (commit_unknown), or a fault the locked path could not wait
    // out either: that is the answer. Otherwise nothing was kept and the locked path retries.
    const fault = classifyFault(err);
    for (const e of taking) {
      if (fault && isRetryableFault(fault)) e.resolve(null);
      else e.reject(err);
    }
  }
}
