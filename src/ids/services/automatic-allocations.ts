// PostgreSQL: single automatic allocations (`POST …/allocations` without `value`) without holding
// the pool's lock across round trips (issues 15, 32). The locked path held it across BEGIN/lock →
// probe → write → COMMIT; with 48 clients over 3 processes ~28 transactions waited for it at any
// moment, ~235 ms per allocation, for 0.23 ms of SQL.
//
// Here the requests of one pool that arrive in a process while a batch of that pool is under way
// make up the next batch (ctx.poolClaims): one read of the pool without its lock, and ONE
// statement (store/one-statement-allocate.ts) takes them, holding the pool's lock only while it
// runs. lowest, highest and next_after_last: the statement chooses the blocks under the lock
// (takeAutomatic), so it never loses them and needs no probe. random: one probe decides the draws
// in JS and each probed span is a compare-and-set of its own, so a draw another process's write
// overtook is asked again without taking its siblings' blocks with it. Measured, 48 clients over
// 3 processes (lowest), one request at a time and no batches: 1 976 of 2 000 allocations lost 3
// races and took the locked path (52/s, worse than before).
//
// A request asks again in a later batch when its statement was refused (the pool changed, a unique
// index refused an allocation) or its random draw was overtaken, up to MAX_PROBES times; then, and
// when the pool holds leases past due, a random draw saw nothing free, or the database failed
// before the write, the locked path decides (null). A request the statement under the lock found
// no block for is answered `ids.pool_exhausted` as the locked path would.
import { RetryableConflict } from '../../core/errors.js';
import type { BatchHandler, Queued } from '../../core/serial.js';
import { classifyFault, isRetryableFault } from '../../db/faults.js';
import type { Db } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import { type Strategy, blockSize } from '../core/pool-space.js';
import { type PoolScope, inScope } from '../core/scope.js';
import { type AllocationOutcome, type AllocationRequest, repeatAnswer } from '../store/allocate.js';
import { holderKey } from '../store/free-ranges.js';
import { lostTheBlock, randomClaims, takeAutomatic } from '../store/one-statement-allocate.js';
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

/**
 * The pools as this process last read them, by name: what a batch of lowest, highest or
 * next_after_last decides with (its block size, its scope, the pool's strategy), checked by the
 * statement under the pool's lock — which refuses when the pool changed or holds leases past due,
 * and the pool is read again. A batch then costs one round trip, not two.
 */
const poolsRead = new WeakMap<IdsContext, Map<string, LockedPool>>();

function poolsReadBy(ctx: IdsContext): Map<string, LockedPool> {
  let pools = poolsRead.get(ctx);
  if (!pools) poolsRead.set(ctx, (pools = new Map()));
  return pools;
}

/**
 * The pool as this process last read it (read now, on `db`, when it was not), for a statement that
 * checks it under the pool's lock (takeAutomatic); a pool holding leases past due is not kept.
 */
export async function poolAsRead(ctx: IdsContext, db: Db, name: string): Promise<LockedPool | undefined> {
  const known = poolsReadBy(ctx);
  const read = known.get(name);
  if (read) return read;
  const pool = await readPool(db, name);
  if (pool && !pool.hasExpiredLeases) known.set(name, pool);
  return pool;
}

/** A statement that checked the pool refused: it may have changed, and is read again. */
export function forgetPool(ctx: IdsContext, name: string): void {
  poolsReadBy(ctx).delete(name);
}

async function claimBatch(ctx: IdsContext, batch: Entry[], again: (e: Entry) => void): Promise<void> {
  const name = batch[0]!.item.req.pool;
  const known = poolsReadBy(ctx);
  const read = known.get(name);
  const pool = read ?? (await readPool(ctx.database, name));
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
  if (strategy === 'random') {
    // random draws are decided from a probe, and taken by a statement that checks only the
    // pool's definition: they decide with the pool as it is now
    if (read) {
      forgetPool(ctx, name);
      for (const e of group) again(e);
      return;
    }
  } else if (!read && !pool.hasExpiredLeases) known.set(name, pool);
  await claimGroup(ctx, pool, group, strategy, block, again);
}

async function claimGroup(ctx: IdsContext, pool: LockedPool, group: Entry[], strategy: Strategy, block: bigint, again: (e: Entry) => void): Promise<void> {
  // entries given back for a later batch are that batch's
  const givenBack = new Set<Entry>();
  const later = (e: Entry) => {
    givenBack.add(e);
    again(e);
  };
  const askAgain = (e: Entry) => (++e.item.probes >= MAX_PROBES ? e.resolve(null) : later(e));
  const reqs = group.map((e) => e.item.req);
  try {
    if (strategy === 'random') await claimRandom(ctx, pool, group, block, later, askAgain);
    else {
      const [taken] = await transaction(ctx.database, (tx) => takeAutomatic(tx, [{ pool, reqs, strategy, block }], 'api'), {
        oneStatement: true,
        maxAttempts: 1,
      });
      const repeats: Array<Promise<void>> = [];
      for (const [i, t] of taken!.entries()) {
        const e = group[i]!;
        if (t.kind === 'new') e.resolve({ pool, row: t.row, created: true });
        // seen under the pool's lock, leases past due released: what the locked path would answer
        // (sent there, the last requests of a filling pool queued on its lock: 150-350 ms each)
        else if (t.kind === 'none') e.reject(idsDomainError('pool_exhausted', { pool: pool.name, size: block.toString() }));
        else repeats.push(answerRepeat(ctx, pool, e, t, askAgain));
      }
      await Promise.all(repeats);
    }
  } catch (err) {
    const unsettled = group.filter((e) => !e.settled && !givenBack.has(e));
    if (lostTheBlock(err)) {
      // the pool may have changed: the next batch reads it again
      forgetPool(ctx, pool.name);
      for (const e of unsettled) askAgain(e);
      return;
    }
    // After the statement was sent (commit_unknown), or a fault the locked path could not wait
    // out either: that is the answer. Otherwise nothing was kept and the locked path retries.
    const fault = classifyFault(err);
    for (const e of unsettled) {
      if (fault && isRetryableFault(fault)) e.resolve(null);
      else e.reject(err);
    }
  }
}

/** The answer to a request whose owner+purpose holds `held.id` already. */
function answerRepeat(ctx: IdsContext, pool: LockedPool, e: Entry, held: { id: string; params: string }, askAgain: (e: Entry) => void): Promise<void> {
  return repeatAnswer(ctx.database, pool, held.id, held.params).then(
    (outcome) => e.resolve({ pool, ...outcome }),
    // released since it was seen: ask again
    (err) => (err instanceof RetryableConflict ? askAgain(e) : e.reject(err)),
  );
}

/** Random draws: decided from one probe, taken by one statement (the draws whose spans are as probed). */
async function claimRandom(
  ctx: IdsContext,
  pool: LockedPool,
  group: Entry[],
  block: bigint,
  again: (e: Entry) => void,
  askAgain: (e: Entry) => void,
): Promise<void> {
  const { decisions, claim } = await randomClaims(
    ctx.database,
    pool,
    group.map((e) => e.item.req),
    block,
  );
  const taking: Entry[] = [];
  const held: Array<{ e: Entry; d: { id: string; params: string } }> = [];
  for (const [i, d] of decisions.entries()) {
    const e = group[i]!;
    if (d.kind === 'new') taking.push(e);
    else if (d.kind === 'none') e.resolve(null);
    else if (d.kind === 'later') again(e);
    else held.push({ e, d });
  }
  const kept = claim ? await transaction(ctx.database, claim.write, { oneStatement: true, maxAttempts: 1 }) : new Set<string>();
  for (const [i, e] of taking.entries()) {
    // a draw whose span another process changed since the probe was not taken
    if (kept.has(claim!.rows[i]!.id)) e.resolve({ pool, row: claim!.rows[i]!, created: true });
    else askAgain(e);
  }
  await Promise.all(held.map(({ e, d }) => answerRepeat(ctx, pool, e, d, askAgain)));
}
