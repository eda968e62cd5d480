// Allocation operations, each one transaction: allocate (one or many requests across pools, all
// or nothing, optionally as a dry run), read, list, confirm/extend/annotate, release, import, and
// the lease-expiry pass of the worker.
import { DomainError, RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import type { ClosingWrites } from '../../db/statement.js';
import type { Db, Tx } from '../../db/database.js';
import { refreshStaleStatistics } from '../../db/sql-helpers.js';
import { StepAside, fastStep, transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { type ImportConflict, idsDomainError, isIdsError } from '../core/domain-errors.js';
import { patchedMetadata } from '../core/metadata.js';
import { type IfMatch, requireMatch, matches } from '../core/if-match.js';
import { blockSize, deserializeSpace, formatValue, parseRequestedValue, parseValueParameter } from '../core/pool-space.js';
import { type Span, fromKey, keyOf, log2Exact } from '../core/values.js';
import { type ForcedRelease, forcedReleasesOf, instanceOfOwner, setsReferencing } from '../core/instance-values.js';
import { isLive } from '../core/lifecycle.js';
import type { Band } from '../core/ranges.js';
import { EVERY_POOL, type PoolScope, inScope } from '../core/scope.js';
import {
  type AllocationRequest,
  type AllocationRow,
  type AutomaticPlan,
  type Picked,
  allocateInPool,
  expireLeasesInPool,
  planAutomatic,
  releaseInPool,
  requestParams,
  allocationValue,
  whyNotFree,
} from '../store/allocate.js';
import * as store from '../store/allocations.js';
import * as instances from '../store/service-instances.js';
import { type FreeRow, freeSpansHolding, holderKey, probeTogether, takeMany } from '../store/free-ranges.js';
import { type AutomaticTake, type Taken, lostTheBlock, takeAutomatic } from '../store/one-statement-allocate.js';
import { allocateWithoutLock, forgetPool, poolAsRead } from './automatic-allocations.js';

export type { AllocationRequest };
import { type LockedPool, type PoolRef, flushPool, getPoolRow, lockPool, lockPoolById, lockPools, poolProjectById, poolRefById } from '../store/pools.js';

/** An allocation with what its view needs of its pool. */
export interface PooledAllocation {
  pool: PoolRef;
  row: AllocationRow;
}

export interface AllocationResult extends PooledAllocation {
  created: boolean;
}

class DryRun extends Error {
  constructor(readonly results: AllocationResult[]) {
    super('dry run');
  }
}

/** Allocate every request or none. Pools are locked in id order; leases past due are released first. */
export async function allocate(
  ctx: IdsContext,
  requests: AllocationRequest[],
  options: { dryRun?: boolean; scope?: PoolScope } = {},
): Promise<AllocationResult[]> {
  const [only] = requests;
  if (ctx.database.dialect === 'postgres' && requests.length === 1 && only && only.value === undefined && !options.dryRun) {
    const result = await allocateWithoutLock(ctx, only, options.scope ?? EVERY_POOL);
    if (result) return [result];
  }
  try {
    return await transaction(ctx.database, async (tx) => {
      const results = await allocateInTx(tx, requests, 'api', options.scope);
      if (options.dryRun) throw new DryRun(results);
      return results;
    });
  } catch (err) {
    if (err instanceof DryRun) return err.results;
    throw err;
  }
}

/**
 * `allocate` inside a caller's transaction (service instances allocate with their own changes).
 * `closing`: each pool's last write is held back for the statement that closes the transaction.
 */
export async function allocateInTx(
  tx: Tx,
  requests: AllocationRequest[],
  source = 'api',
  scope: PoolScope = EVERY_POOL,
  closing?: ClosingWrites,
): Promise<AllocationResult[]> {
  const pools = await lockPools(
    tx,
    requests.map((r) => r.pool),
  );
  for (const pool of pools.values()) if (!inScope(scope, pool.project)) throw idsDomainError('pool_not_found', { pool: pool.name });
  for (const pool of pools.values()) await expireLeasesInPool(tx, pool);
  // Each pool's last request stores the pool's counters with its own writes: one round trip less
  // per pool under the pools' locks (a reservation's VLAN and address: two).
  const lastOfPool = new Map(requests.map((r, i) => [r.pool, i]));
  const asked = await askFirstTogether(tx, requests, pools);
  const results: AllocationResult[] = [];
  for (const [index, req] of requests.entries()) {
    const pool = pools.get(req.pool)!;
    try {
      const { row, created } = await allocateInPool(tx, pool, req, source, lastOfPool.get(req.pool) === index, closing, asked.get(index));
      results.push({ pool, row, created });
    } catch (err) {
      if (err instanceof DomainError && requests.length > 1) throw idsDomainError('in_batch', { index, error: err });
      throw err;
    }
  }
  // pools whose last request wrote nothing (it was a repeat) and lease expiries
  for (const pool of pools.values()) await flushPool(tx, pool);
  return results;
}

/**
 * PostgreSQL, a reservation's fast path (issue 31): `requests` (each automatic, lowest, highest or
 * next_after_last; one block size and strategy per pool) taken by ONE statement that locks each
 * pool in id order and chooses its blocks under the lock (store/one-statement-allocate.ts
 * takeAutomatic), with the pools as this process last read them (the statement checks them). The
 * pools' rows are then locked from that statement to the commit: one round trip less under them
 * than allocateInTx's lock, probe and closing parts. Null, having sent nothing, for requests it
 * does not take (an explicit value, random, mixed sizes or strategies in a pool, a pool out of
 * `scope` or not found, one holding leases past due): allocateInTx decides them. A refused
 * statement, or an owner+purpose that holds a value already (a repeat), is StepAside: the
 * transaction runs again the general way, which answers it. A request no block is left for is
 * `pool_exhausted`, as allocateInTx words it: the statement saw the pool under its lock, leases
 * past due released.
 */
export async function takeAutomaticInTx(
  ctx: IdsContext,
  tx: Tx,
  requests: AllocationRequest[],
  source: string,
  scope: PoolScope,
): Promise<AllocationResult[] | null> {
  const pools = new Map<string, LockedPool>();
  for (const name of new Set(requests.map((r) => r.pool))) {
    const pool = await poolAsRead(ctx, tx, name);
    if (!pool || pool.hasExpiredLeases || !inScope(scope, pool.project)) return null;
    pools.set(name, pool);
  }
  // per pool: its requests (by their index in `requests`), one block size and strategy
  const takes = new Map<string, AutomaticTake & { reqs: AllocationRequest[]; indexes: number[] }>();
  for (const [index, req] of requests.entries()) {
    const pool = pools.get(req.pool)!;
    const strategy = req.strategy ?? pool.strategy;
    if (req.value !== undefined || strategy === 'random') return null;
    let block: bigint;
    try {
      block = blockSize(pool.space, req);
    } catch {
      return null;
    }
    const take = takes.get(req.pool);
    if (!take) takes.set(req.pool, { pool, strategy, block, reqs: [req], indexes: [index] });
    else if (take.strategy !== strategy || take.block !== block) return null;
    else {
      take.reqs.push(req);
      take.indexes.push(index);
    }
  }
  const ordered = [...takes.values()].sort((a, b) => a.pool.id - b.pool.id);
  const taken = await fastStep(() =>
    takeAutomatic(tx, ordered, source).catch((err: unknown) => {
      // a pool may have changed: read it again next time
      if (lostTheBlock(err)) for (const take of ordered) forgetPool(ctx, take.pool.name);
      throw err;
    }),
  );
  const answers: Taken[] = [];
  for (const [t, take] of ordered.entries()) for (const [i, answer] of taken[t]!.entries()) answers[take.indexes[i]!] = answer;
  // the first request, in the caller's order, that took no new value decides, as in allocateInTx
  const results: AllocationResult[] = [];
  for (const [index, answer] of answers.entries()) {
    const take = takes.get(requests[index]!.pool)!;
    if (answer.kind === 'new') results.push({ pool: take.pool, row: answer.row, created: true });
    else if (answer.kind === 'held') throw new StepAside();
    else {
      const err = idsDomainError('pool_exhausted', { pool: take.pool.name, size: take.block.toString() });
      throw requests.length > 1 ? idsDomainError('in_batch', { index, error: err }) : err;
    }
  }
  return results;
}

/**
 * The probes of the first automatic request of each pool, asked of all those pools in ONE
 * statement when there are several (a reservation's VLAN and addresses): one round trip under the
 * pools' locks instead of one per pool. A later request of a pool asks after its predecessor's
 * write; a request whose parameters are wrong is left to its turn, which words the error.
 */
async function askFirstTogether(tx: Tx, requests: AllocationRequest[], pools: Map<string, LockedPool>): Promise<Map<number, Picked>> {
  const plans: Array<{ index: number; plan: AutomaticPlan }> = [];
  const seen = new Set<string>();
  for (const [index, req] of requests.entries()) {
    if (seen.has(req.pool)) continue;
    seen.add(req.pool);
    if (req.value !== undefined) continue;
    const pool = pools.get(req.pool)!;
    try {
      const holder = { owner: req.owner, purpose: req.purpose ?? '' };
      plans.push({ index, plan: planAutomatic(tx, pool, blockSize(pool.space, req), req.strategy ?? pool.strategy, [holder]) });
    } catch {
      // its turn answers it
    }
  }
  if (plans.length < 2) return new Map();
  const answers = await probeTogether(
    tx,
    plans.map((p) => p.plan.probe),
  );
  return new Map(plans.map((p, i) => [p.index, p.plan.pick(answers[i]!)]));
}

/** Pools by id, each read once per call (a page of allocations names few pools). */
function poolLookup(ctx: IdsContext): (id: number) => Promise<PoolRef> {
  const seen = new Map<number, Promise<PoolRef>>();
  return (id) => {
    let p = seen.get(id);
    if (!p) seen.set(id, (p = poolRefById(ctx.database, id)));
    return p;
  };
}

/** Has the row's lease run out at `now` (an ISO time)? An expired reservation reads as released. */
const leaseRanOut = (row: AllocationRow, now: string) => row.expires_at !== null && row.expires_at <= now;

/**
 * What a reader may answer of these rows, read after `now`: those still held at `now`, in their
 * order. A reservation whose lease looks run out is not called released while a writer that may
 * keep it holds its row (issue 33): a confirmation passed the lease check at its COMMIT (migration
 * 014), but becomes visible only once the WAL is flushed (and a synchronous standby answered), and
 * a reader in between would see the value released, then confirmed. So such rows are read again
 * once no writer holds them (store afterTheirWriters: PostgreSQL waits for the row's lock) and
 * judged on what the writer left — confirmed or extended, kept (when `keep` still selects it);
 * else released. Rows that look held cost nothing more: the common read is unchanged.
 *
 * "now" is read before the rows, never after: a reader judges a lease at a moment its read could
 * have seen every change committed before (a reader held up after its read — a pause — would
 * otherwise call expired a lease whose confirmation committed in time).
 */
async function liveRows(db: Db, rows: AllocationRow[], now: string, keep: (row: AllocationRow) => boolean = () => true): Promise<AllocationRow[]> {
  const doubtful = rows.filter((r) => leaseRanOut(r, now));
  if (doubtful.length === 0) return rows;
  const latest = new Map((await store.afterTheirWriters(db, doubtful)).map((r) => [r.id, r]));
  return rows.flatMap((r) => {
    if (!leaseRanOut(r, now)) return [r];
    const left = latest.get(r.id);
    return left && !leaseRanOut(left, now) && keep(left) ? [left] : [];
  });
}

export async function getAllocation(ctx: IdsContext, id: string, scope: PoolScope): Promise<PooledAllocation> {
  const now = ctx.database.clock.nowIso();
  const found = await store.findAllocation(ctx.database, id);
  const [row] = found ? await liveRows(ctx.database, [found], now) : [];
  if (!row || !inScope(scope, await poolProjectById(ctx.database, row.pool_id))) throw idsDomainError('allocation_not_found', { id });
  return { pool: await poolRefById(ctx.database, row.pool_id), row };
}

export interface AllocationFilter {
  pool?: string;
  scope: PoolScope;
  owner?: string;
  purpose?: string;
  state?: string;
  /** with `pool`: only the allocations holding this value (or, a prefix, part of it), as the pool's kind writes it */
  value?: string;
}

/** The pool of this name, if the scope reaches it (else `pool_not_found`, as for a pool that does not exist). */
async function visiblePool(db: Db, name: string, scope: PoolScope) {
  const row = await getPoolRow(db, name);
  if (!inScope(scope, row.project_id)) throw idsDomainError('pool_not_found', { pool: name });
  return row;
}

/** What `?value=` selects in a pool: the allocations overlapping the span it names (leases that look run out included). */
async function overlappingFilter(db: Db, poolId: number, span: Span) {
  const first = keyOf(span.first);
  const holder = await store.allocationHolding(db, poolId, first);
  return { from: holder?.first_key ?? first, first, last: keyOf(span.last) };
}

/**
 * A page of allocations ordered by (pool, first value); `next` is the last row's position. Rows
 * are read with reservations that look run out, which liveRows judges; when it drops some, the
 * page reads on after the last row read until it is full or the rows end.
 */
export async function listAllocations(ctx: IdsContext, filter: AllocationFilter, after: store.AllocationPosition | null, limit: number) {
  const now = ctx.database.clock.nowIso();
  const { pool: poolName, value, ...rest } = filter;
  let poolId: number | undefined;
  let overlapping: store.AllocationFilter['overlapping'];
  if (poolName !== undefined) {
    const row = await visiblePool(ctx.database, poolName, filter.scope);
    poolId = row.id;
    if (value !== undefined) overlapping = await overlappingFilter(ctx.database, row.id, parseValueParameter(deserializeSpace(row.definition), value));
  }
  // a confirmation committed meanwhile is no longer a reservation
  const stillSelected = (row: AllocationRow) => rest.state === undefined || row.state === rest.state;
  const rows: AllocationRow[] = [];
  for (let position = after; ; ) {
    const asked = limit + 1 - rows.length;
    const read = await store.listAllocations(ctx.database, { ...rest, poolId, overlapping }, position, asked);
    rows.push(...(await liveRows(ctx.database, read, now, stillSelected)));
    const last = read[read.length - 1];
    if (read.length < asked || rows.length > limit || !last) break;
    position = { poolId: last.pool_id, key: last.first_key };
  }
  const pool = poolLookup(ctx);
  const page = rows.slice(0, limit);
  const items: PooledAllocation[] = [];
  for (const row of page) items.push({ pool: await pool(row.pool_id), row });
  const last = page[page.length - 1];
  return { items, next: rows.length > limit && last ? { poolId: last.pool_id, key: last.first_key } : null };
}

/**
 * Lock the allocation's pool and read the allocation again under the lock (not found when gone or
 * expired). The pool's "has leases past due" flag comes from before the lock was granted (store/
 * pools.ts): a lease that ran out while this waited for the lock is released here.
 */
async function lockAllocation(tx: Tx, id: string, scope: PoolScope = EVERY_POOL): Promise<{ pool: LockedPool; row: AllocationRow }> {
  const poolId = await store.poolIdOfAllocation(tx, id);
  if (poolId === undefined) throw idsDomainError('allocation_not_found', { id });
  const pool = await lockPoolById(tx, poolId);
  if (!inScope(scope, pool.project)) throw idsDomainError('allocation_not_found', { id });
  await expireLeasesInPool(tx, pool);
  const now = tx.clock.nowIso();
  let row = await store.findAllocation(tx, id);
  if (row && leaseRanOut(row, now)) {
    await releaseInPool(tx, pool, row);
    row = undefined;
  }
  if (!row) {
    await flushPool(tx, pool);
    throw idsDomainError('allocation_not_found', { id });
  }
  return { pool, row };
}

/**
 * Release an allocation. A value that attribute sets of a live service instance refer to is
 * refused (`value_held_by_instance`) unless `force`; a forced release is recorded on the
 * instance (its version moves) so that its next validation notices.
 */
export async function releaseAllocation(ctx: IdsContext, id: string, ifMatch: IfMatch, scope: PoolScope, force = false): Promise<void> {
  await release(ctx, async (tx) => (await store.findAllocation(tx, id)) ?? { id, owner: undefined }, ifMatch, scope, force);
}

/**
 * Release the allocation of a pool whose value is `value`, as the pool's kind writes it (the
 * allocation's `value`: its first value, or its prefix); the same rules as a release by id. A
 * value inside a larger block does not release the block: `value_not_allocated` names it.
 */
export async function releaseAllocationByValue(ctx: IdsContext, poolName: string, value: string, ifMatch: IfMatch, scope: PoolScope, force = false) {
  await release(
    ctx,
    async (tx) => {
      const now = tx.clock.nowIso();
      const pool = await visiblePool(tx, poolName, scope);
      const space = deserializeSpace(pool.definition);
      const span = parseValueParameter(space, value);
      const [found] = await store.listAllocations(tx, { poolId: pool.id, overlapping: await overlappingFilter(tx, pool.id, span) }, null, 1);
      // an allocation's value is its first value (and count), or its prefix: the whole span
      const named = found && found.first_key === keyOf(span.first) && (space.kind !== 'prefix' || found.last_key === keyOf(span.last));
      // its lease, if it looks run out, is judged under the pool's lock (lockAllocation)
      if (named) return { ...found, byValue: true };
      // refused at once: judged here (this transaction then takes no other lock)
      const [held] = found ? await liveRows(tx, [found], now) : [];
      const ref = { name: poolName, space };
      return idsDomainError('value_not_allocated', {
        pool: poolName,
        value: formatValue(space, span.first, span.last - span.first + 1n),
        overlapping: held ? { allocation_id: held.id, value: allocationValue(ref, held) } : null,
      });
    },
    ifMatch,
    scope,
    force,
  );
}

/**
 * The release both kinds share. `find` names the allocation, read before any lock (its owner
 * decides which instance to lock first), or the refusal; under the pool's lock it is read again by
 * id. Released meanwhile (or its lease found run out under the lock), an allocation found by value
 * is looked for again: with no holder now, the refusal is the answer (and the lease's expiry is
 * kept); a new holder is released by a new attempt, which locks its instance first. One named by
 * id is not found.
 */
async function release(
  ctx: IdsContext,
  find: (tx: Tx) => Promise<{ id: string; owner: string | undefined; byValue?: boolean } | DomainError>,
  ifMatch: IfMatch,
  scope: PoolScope,
  force: boolean,
): Promise<void> {
  // The expiry of leases found on the way must be kept even when this release is refused.
  const refusal = await transaction(ctx.database, async (tx) => {
    const found = await find(tx);
    if (found instanceof DomainError) return found;
    const { id, owner } = found;
    // Lock order everywhere: the instance, then its pools (as every change of an instance does).
    const instanceId = owner === undefined ? null : instanceOfOwner(owner);
    const instance = instanceId === null ? undefined : await instances.lockInstanceIfPresent(tx, instanceId);
    let locked: { pool: LockedPool; row: AllocationRow };
    try {
      locked = await lockAllocation(tx, id, scope);
    } catch (err) {
      if (!found.byValue || !isIdsError(err, 'allocation_not_found')) return err;
      const again = await find(tx);
      if (again instanceof DomainError) return again;
      throw new RetryableConflict('released while being released by value', () => idsDomainError('changed_concurrently', { resource: 'allocation' }));
    }
    if (!matches(ifMatch, locked.row.version)) {
      await flushPool(tx, locked.pool);
      return idsDomainError('version_mismatch', { current: locked.row.version });
    }
    if (instance && locked.row.owner === owner && isLive(instance.state)) {
      const value = allocationValue(locked.pool, locked.row);
      const sets = setsReferencing(instance, locked.row.purpose, value);
      if (sets.length > 0) {
        const facts = { pool: locked.pool.name, value, allocation_id: locked.row.id, instance: instance.id, attribute: locked.row.purpose };
        if (!force) {
          await flushPool(tx, locked.pool);
          return idsDomainError('value_held_by_instance', { ...facts, sets });
        }
        const { instance: _, ...released } = facts;
        const record: ForcedRelease = { ...released, sets, released_at: tx.clock.nowIso(), key: locked.row.first_key };
        await instances.saveInstance(tx, instance, { forced_releases: JSON.stringify([...forcedReleasesOf(instance.forced_releases), record]) });
      }
    }
    await releaseInPool(tx, locked.pool, locked.row);
    await flushPool(tx, locked.pool);
    return null;
  });
  if (refusal) throw refusal;
}

export interface AllocationPatch {
  state?: 'allocated';
  ttl_seconds?: number;
  /** null: every label removed (merge patches only) */
  metadata?: Record<string, unknown> | null;
}

/**
 * Confirm a reservation (`state: allocated`), extend its lease, or replace (or merge into) the
 * metadata. A reservation whose lease has run out is not found (it reads as released), whether
 * that is seen under the pool's lock or only when the change commits: the lease is checked under
 * the lock, but the commit may land later (a slow or lost network, a paused server), and readers
 * meanwhile see the value released. On PostgreSQL a deferred trigger (migration 014) refuses the
 * commit of a change to a reservation whose lease ran out by the database's clock — the clock
 * every process reads "now" on (db/database-clock.ts) — so no reader sees the value released and
 * then confirmed (issue 33). SQLite needs no such check: its one connection is held from the
 * check to the commit, and every read waits for it.
 */
export async function patchAllocation(
  ctx: IdsContext,
  id: string,
  patch: AllocationPatch,
  ifMatch: IfMatch,
  scope: PoolScope,
  merge = false,
): Promise<PooledAllocation> {
  try {
    return await transaction(ctx.database, async (tx) => {
      const { pool, row } = await lockAllocation(tx, id, scope);
      await flushPool(tx, pool);
      requireMatch(ifMatch, row.version);
      const changes: Parameters<typeof store.updateAllocation>[2] = {};
      if (patch.state === 'allocated') {
        changes.state = 'allocated';
        changes.expires_at = null;
      }
      if (patch.ttl_seconds !== undefined) {
        if (row.state !== 'reserved' || patch.state === 'allocated') throw idsDomainError('not_reserved', {});
        changes.expires_at = new Date(tx.clock.nowMs() + patch.ttl_seconds * 1000).toISOString();
      }
      if (patch.metadata !== undefined) changes.metadata = patchedMetadata(row.metadata, patch.metadata, merge);
      return { pool, row: await store.updateAllocation(tx, row, changes) };
    });
  } catch (err) {
    if (store.isLeaseRanOutAtCommit(err)) throw idsDomainError('allocation_not_found', { id });
    throw err;
  }
}

// --- import of values already in use (brownfield) ---

import type { ImportItem } from '../../client/ids-wire.js';

export type { ImportItem };

export interface ImportOutcome {
  imported: number;
  unchanged: number;
  conflicts: ImportConflict[];
}

/** Conflicts of one import that are explained one by one; beyond, each reads "not free". */
const MAX_DETAILED_CONFLICTS = 1000;

/**
 * Record values already in use. Every item is checked; conflicts (a value held by someone else,
 * outside the pool or excluded, an owner+purpose holding another value, two items overlapping)
 * are reported item by item. With `onConflict: 'abort'` any conflict is `import_conflicts` and
 * nothing is imported; with 'skip' the rest is imported and the conflicts come back in the answer.
 */
export async function importAllocations(ctx: IdsContext, poolName: string, items: ImportItem[], onConflict: 'abort' | 'skip'): Promise<ImportOutcome> {
  // Plan this import on statistics of what the tables it grows hold now (up to a second ago), not
  // of what they held when the db-statistics worker last looked.
  await refreshStaleStatistics(ctx.database, ['ids_allocations', 'ids_free_ranges']);
  return transaction(ctx.database, async (tx) => {
    const pool = await lockPool(tx, poolName);
    await expireLeasesInPool(tx, pool);
    const conflicts: ImportConflict[] = [];
    const conflict = (index: number, err: unknown) => {
      if (!(err instanceof DomainError)) throw err;
      conflicts.push({ index, value: items[index]!.value, error: err });
    };

    // Parse, and drop items that repeat an owner+purpose or overlap an earlier item of the batch.
    interface Candidate {
      index: number;
      span: Span;
      block: bigint;
      item: ImportItem;
      /** owner + purpose */
      holder: string;
    }
    const candidates: Candidate[] = [];
    const holders = new Set<string>();
    for (const [index, item] of items.entries()) {
      try {
        const block = blockSize(pool.space, item);
        const span = parseRequestedValue(pool.space, item.value, block);
        const holder = holderKey({ owner: item.owner, purpose: item.purpose ?? '' });
        if (holders.has(holder)) throw idsDomainError('import_repeats_owner', { owner: item.owner, purpose: item.purpose ?? '' });
        holders.add(holder);
        candidates.push({ index, span, block, item, holder });
      } catch (err) {
        conflict(index, err);
      }
    }
    candidates.sort((a, b) => (a.span.first < b.span.first ? -1 : a.span.first > b.span.first ? 1 : 0));
    const distinct: Candidate[] = [];
    for (const c of candidates) {
      const prev = distinct[distinct.length - 1];
      if (prev && c.span.first <= prev.span.last) conflict(c.index, idsDomainError('import_overlaps_item', { item: prev.index }));
      else distinct.push(c);
    }

    // Owners that already hold something in this pool: the same value is "unchanged", another is a conflict.
    const held = new Map<string, AllocationRow>();
    for (const r of await store.heldByHolders(
      tx,
      pool.id,
      distinct.map((c) => ({ owner: c.item.owner, purpose: c.item.purpose ?? '' })),
    ))
      held.set(holderKey(r), r);
    let unchanged = 0;
    const fresh: Candidate[] = [];
    for (const c of distinct) {
      const existing = held.get(c.holder);
      if (!existing) fresh.push(c);
      else if (fromKey(existing.first_key) === c.span.first && existing.block_log2 === log2Exact(c.block)) unchanged++;
      else conflict(c.index, idsDomainError('owner_holds_other_value', { owner: c.item.owner, pool: pool.name }));
    }

    // Which fresh items lie inside one free span: one index probe each, 5000 to a statement.
    // (a pool without a static band has no static free spans to probe)
    const bands: Band[] = pool.space.staticBand.length > 0 ? ['auto', 'static'] : ['auto'];
    const holding = await freeSpansHolding(
      tx,
      pool.id,
      bands,
      fresh.map((c) => c.span),
    );
    const accepted: Array<{ c: Candidate; row: FreeRow }> = [];
    let rejected = 0;
    for (const [i, c] of fresh.entries()) {
      const row = holding[i];
      if (row) accepted.push({ c, row });
      else conflict(c.index, rejected++ < MAX_DETAILED_CONFLICTS ? await whyNotFree(tx, pool, c.span) : idsDomainError('value_not_free', {}));
    }
    conflicts.sort((a, b) => a.index - b.index);
    if (conflicts.length && onConflict === 'abort') throw idsDomainError('import_conflicts', { conflicts });

    await takeMany(
      tx,
      pool.id,
      accepted.map(({ c, row }) => ({ row, span: c.span })),
    );
    const now = tx.clock.nowIso();
    await store.insertAllocations(
      tx,
      accepted.map(({ c }) => ({
        id: newUuid(),
        pool_id: pool.id,
        first_key: keyOf(c.span.first),
        last_key: keyOf(c.span.last),
        block_log2: log2Exact(c.block),
        owner: c.item.owner,
        purpose: c.item.purpose ?? '',
        state: 'allocated',
        expires_at: null,
        version: 1,
        source: 'import',
        request_hash: requestParams({ metadata: c.item.metadata }, c.block, c.span),
        metadata: JSON.stringify(c.item.metadata ?? {}),
        created_at: now,
        updated_at: now,
      })),
    );
    for (const { c } of accepted) pool.used += c.block;
    pool.allocationCount += accepted.length;
    // Leases expired above may already have changed the pool: only ever raise the flag here.
    if (accepted.length > 0) pool.dirty = true;
    await flushPool(tx, pool);
    return { imported: accepted.length, unchanged, conflicts };
  });
}

/** Worker: release every reservation whose lease has run out, one transaction per pool. */
export async function expireLeases(ctx: IdsContext): Promise<number> {
  let released = 0;
  for (const poolId of await store.poolsWithExpiredLeases(ctx.database)) {
    released += await transaction(ctx.database, async (tx) => {
      const pool = await lockPoolById(tx, poolId);
      const n = await expireLeasesInPool(tx, pool);
      await flushPool(tx, pool);
      return n;
    });
  }
  return released;
}
