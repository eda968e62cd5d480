// Allocation operations, each one transaction: allocate (one or many requests across pools, all
// or nothing, optionally as a dry run), read, list, confirm/extend/annotate, release, import.
import { ApiError } from '../../http/errors.js';
import { RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import type { Database, Db } from '../../db/database.js';
import { bumpGeneration } from '../../db/generation.js';
import { type Tx, transaction } from '../../db/transaction.js';
import { idsError, notFoundError, preconditionFailed } from '../errors.js';
import { blockSize, deserializeSpace, parseRequestedValue, type PoolSpace } from '../core/pool-space.js';
import type { BandedSpan } from '../core/ranges.js';
import { type Span, fromKey, keyOf, log2Exact } from '../core/values.js';
import {
  type AllocationRequest,
  type AllocationRow,
  type AllocationView,
  allocateInPool,
  allocationView,
  expireLeasesInPool,
  releaseInPool,
  whyNotFree,
} from './allocate.js';
import { type FreeRow, allFree, deleteFreeMany, freeSpanHolding, insertFree } from './free-ranges.js';
import { type LockedPool, flushPool, lockPoolById, lockPools } from './pools.js';

export interface AllocationResult {
  allocation: AllocationView;
  created: boolean;
}

class DryRun extends Error {
  constructor(readonly results: AllocationResult[]) {
    super('dry run');
  }
}

/** Allocate every request or none. Pools are locked in id order; leases past due are released first. */
export async function allocate(database: Database, requests: AllocationRequest[], options: { dryRun?: boolean } = {}): Promise<AllocationResult[]> {
  try {
    return await transaction(database, async (tx) => {
      const results = await allocateInTx(tx, requests);
      if (options.dryRun) throw new DryRun(results);
      return results;
    });
  } catch (err) {
    if (err instanceof DryRun) return err.results;
    throw err;
  }
}

export async function allocateInTx(tx: Tx, requests: AllocationRequest[], source = 'api'): Promise<AllocationResult[]> {
  const pools = await lockPools(tx, requests.map((r) => r.pool));
  for (const pool of pools.values()) await expireLeasesInPool(tx, pool);
  const results: AllocationResult[] = [];
  for (const [i, req] of requests.entries()) {
    const pool = pools.get(req.pool)!;
    try {
      const { row, created } = await allocateInPool(tx, pool, req, source);
      results.push({ allocation: allocationView(pool, row), created });
    } catch (err) {
      if (err instanceof ApiError && requests.length > 1) throw new ApiError(err.status, err.code, `allocations[${i}]: ${err.message}`, { ...err.extra, index: i });
      throw err;
    }
  }
  for (const pool of pools.values()) await flushPool(tx, pool);
  return results;
}

const poolCache = async (db: Db) => {
  const cache = new Map<number, { name: string; space: PoolSpace }>();
  return async (id: number) => {
    let p = cache.get(id);
    if (!p) {
      const row = await db.db.selectFrom('ids_pools').select(['name', 'definition']).where('id', '=', id).executeTakeFirstOrThrow();
      p = { name: row.name, space: deserializeSpace(row.definition) };
      cache.set(id, p);
    }
    return p;
  };
};

const isExpired = (db: Db, row: AllocationRow) => row.expires_at !== null && row.expires_at <= db.clock.nowIso();

export async function getAllocation(db: Db, id: string): Promise<AllocationView> {
  const row = await db.db.selectFrom('ids_allocations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || isExpired(db, row)) throw notFoundError(`allocation ${id}`);
  return allocationView(await (await poolCache(db))(row.pool_id), row);
}

export interface AllocationFilter {
  pool?: string;
  owner?: string;
  purpose?: string;
  state?: string;
}

/** A page of allocations ordered by (pool, first value); the cursor is the last row's position. */
export async function listAllocations(db: Db, filter: AllocationFilter, after: { poolId: number; key: string } | null, limit: number) {
  let q = db.db.selectFrom('ids_allocations').selectAll();
  if (filter.pool !== undefined) {
    const pool = await db.db.selectFrom('ids_pools').select('id').where('name', '=', filter.pool).executeTakeFirst();
    if (!pool) throw notFoundError(`pool ${JSON.stringify(filter.pool)}`);
    q = q.where('pool_id', '=', pool.id);
  }
  if (filter.owner !== undefined) q = q.where('owner', '=', filter.owner);
  if (filter.purpose !== undefined) q = q.where('purpose', '=', filter.purpose);
  if (filter.state !== undefined) q = q.where('state', '=', filter.state);
  q = q.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', db.clock.nowIso())]));
  if (after) {
    q = q.where((eb) => eb.or([eb('pool_id', '>', after.poolId), eb.and([eb('pool_id', '=', after.poolId), eb('first_key', '>', after.key)])]));
  }
  const rows = await q.orderBy('pool_id').orderBy('first_key').limit(limit + 1).execute();
  const pool = await poolCache(db);
  const page = rows.slice(0, limit);
  const items = [];
  for (const r of page) items.push(allocationView(await pool(r.pool_id), r));
  const last = page[page.length - 1];
  return { items, next: rows.length > limit && last ? { poolId: last.pool_id, key: last.first_key } : null };
}

/** Lock the allocation's pool and read the allocation again under the lock (404 when gone or expired). */
async function lockAllocation(tx: Tx, id: string): Promise<{ pool: LockedPool; row: AllocationRow }> {
  const first = await tx.db.selectFrom('ids_allocations').select('pool_id').where('id', '=', id).executeTakeFirst();
  if (!first) throw notFoundError(`allocation ${id}`);
  const pool = await lockPoolById(tx, first.pool_id);
  await expireLeasesInPool(tx, pool);
  const row = await tx.db.selectFrom('ids_allocations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) {
    await flushPool(tx, pool);
    throw notFoundError(`allocation ${id}`);
  }
  return { pool, row };
}

export async function releaseAllocation(database: Database, id: string, ifMatch: number | null): Promise<void> {
  // The expiry of leases found on the way must be kept even when this release is refused.
  const refusal = await transaction(database, async (tx) => {
    let locked;
    try {
      locked = await lockAllocation(tx, id);
    } catch (err) {
      return err;
    }
    if (ifMatch !== null && ifMatch !== locked.row.version) {
      await flushPool(tx, locked.pool);
      return preconditionFailed(locked.row.version);
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
  metadata?: Record<string, unknown>;
}

/** Confirm a reservation (`state: allocated`), extend its lease, or replace the metadata. */
export async function patchAllocation(database: Database, id: string, patch: AllocationPatch, ifMatch: number | null): Promise<AllocationView> {
  return transaction(database, async (tx) => {
    const { pool, row } = await lockAllocation(tx, id);
    await flushPool(tx, pool);
    if (ifMatch !== null && ifMatch !== row.version) throw preconditionFailed(row.version);
    const also: Record<string, unknown> = {};
    if (patch.state === 'allocated') {
      also.state = 'allocated';
      also.expires_at = null;
    }
    if (patch.ttl_seconds !== undefined) {
      if (row.state !== 'reserved' || patch.state === 'allocated') {
        throw idsError(409, 'ids.invalid_state', 'ttl_seconds extends a reservation; this allocation is not (or no longer) reserved');
      }
      also.expires_at = new Date(tx.clock.nowMs() + patch.ttl_seconds * 1000).toISOString();
    }
    if (patch.metadata !== undefined) also.metadata = JSON.stringify(patch.metadata);
    const lost = () => new RetryableConflict('allocation changed', () => idsError(409, 'ids.concurrent_update', 'The allocation changed concurrently; retry.'));
    await bumpGeneration(tx, 'ids_allocations', id, row.version, lost, also);
    const updated = await tx.db.selectFrom('ids_allocations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return allocationView(pool, updated);
  });
}

// --- import of values already in use (brownfield) ---

export interface ImportItem {
  value: number | string;
  owner: string;
  purpose?: string;
  count?: number;
  prefix_length?: number;
  metadata?: Record<string, unknown>;
}

export interface ImportConflict {
  index: number;
  value: unknown;
  code: string;
  detail: string;
  held_by?: unknown;
}

export interface ImportOutcome {
  imported: number;
  unchanged: number;
  conflicts: ImportConflict[];
}

const MAX_DETAILED_CONFLICTS = 1000;

/**
 * Record values already in use. Every item is checked; conflicts (a value held by someone else,
 * outside the pool or excluded, an owner+purpose holding another value, two items overlapping)
 * are reported item by item. With `onConflict: 'abort'` any conflict is a 409 and nothing is
 * imported; with 'skip' the rest is imported and the conflicts come back in the answer.
 */
export async function importAllocations(database: Database, poolName: string, items: ImportItem[], onConflict: 'abort' | 'skip'): Promise<ImportOutcome> {
  return transaction(database, async (tx) => {
    const pool = (await lockPools(tx, [poolName])).get(poolName)!;
    await expireLeasesInPool(tx, pool);
    const conflicts: ImportConflict[] = [];
    const conflict = async (index: number, err: unknown) => {
      if (!(err instanceof ApiError)) throw err;
      conflicts.push({ index, value: items[index]!.value, code: err.code, detail: err.message, ...(err.extra.held_by ? { held_by: err.extra.held_by } : {}) });
    };

    // Parse, and drop items that repeat an owner+purpose or overlap an earlier item of the batch.
    interface Candidate {
      index: number;
      span: Span;
      block: bigint;
      item: ImportItem;
    }
    const candidates: Candidate[] = [];
    const keys = new Set<string>();
    for (const [index, item] of items.entries()) {
      try {
        const block = blockSize(pool.space, item);
        const span = parseRequestedValue(pool.space, item.value, block);
        const key = JSON.stringify([item.owner, item.purpose ?? '']);
        if (keys.has(key)) throw idsError(409, 'ids.idempotency_mismatch', `owner ${JSON.stringify(item.owner)} with purpose ${JSON.stringify(item.purpose ?? '')} appears twice in the import`);
        keys.add(key);
        candidates.push({ index, span, block, item });
      } catch (err) {
        await conflict(index, err);
      }
    }
    candidates.sort((a, b) => (a.span.first < b.span.first ? -1 : a.span.first > b.span.first ? 1 : 0));
    const distinct: Candidate[] = [];
    for (const c of candidates) {
      const prev = distinct[distinct.length - 1];
      if (prev && c.span.first <= prev.span.last) {
        conflicts.push({ index: c.index, value: c.item.value, code: 'ids.value_in_use', detail: `overlaps item ${prev.index} of the same import` });
      } else distinct.push(c);
    }

    // Owners that already hold something in this pool: the same value is "unchanged", another is a conflict.
    const held = new Map<string, AllocationRow>();
    const owners = [...new Set(distinct.map((c) => c.item.owner))];
    for (let i = 0; i < owners.length; i += 500) {
      const rows = await tx.db.selectFrom('ids_allocations').selectAll().where('pool_id', '=', pool.id).where('owner', 'in', owners.slice(i, i + 500)).execute();
      for (const r of rows) held.set(JSON.stringify([r.owner, r.purpose]), r);
    }
    let unchanged = 0;
    const fresh: Candidate[] = [];
    for (const c of distinct) {
      const existing = held.get(JSON.stringify([c.item.owner, c.item.purpose ?? '']));
      if (!existing) fresh.push(c);
      else if (fromKey(existing.first_key) === c.span.first && BigInt(existing.block_log2) === BigInt(log2Exact(c.block))) unchanged++;
      else conflicts.push({ index: c.index, value: c.item.value, code: 'ids.idempotency_mismatch', detail: `owner ${JSON.stringify(c.item.owner)} already holds another value in pool ${pool.name}` });
    }

    // Which fresh items lie inside one free span. A large import walks all free spans once
    // (cost of the pool's fragmentation); a small one probes the index per item.
    const accepted: Array<{ c: Candidate; row: FreeRow }> = [];
    const rejected: Candidate[] = [];
    const bulk = fresh.length * 8 >= pool.allocationCount + pool.space.ranges.length * 2 && fresh.length >= 64;
    if (bulk) {
      const free = await allFree(tx, pool.id);
      let i = 0;
      for (const c of fresh) {
        while (i < free.length && free[i]!.last < c.span.first) i++;
        const row = free[i];
        if (row && row.first <= c.span.first && c.span.last <= row.last) accepted.push({ c, row });
        else rejected.push(c);
      }
    } else {
      for (const c of fresh) {
        let found: FreeRow | null = null;
        for (const band of ['auto', 'static'] as const) {
          const row = await freeSpanHolding(tx, pool.id, band, c.span.first);
          if (row && row.last >= c.span.last) found = row;
        }
        if (found) accepted.push({ c, row: found });
        else rejected.push(c);
      }
    }
    for (const [n, c] of rejected.entries()) {
      if (n < MAX_DETAILED_CONFLICTS) await conflict(c.index, await whyNotFree(tx, pool, c.span));
      else conflicts.push({ index: c.index, value: c.item.value, code: 'ids.value_in_use', detail: 'not free' });
    }
    conflicts.sort((a, b) => a.index - b.index);
    if (conflicts.length && onConflict === 'abort') {
      throw idsError(409, 'ids.import_conflicts', `${conflicts.length} item(s) conflict with the pool; nothing was imported`, { conflicts });
    }

    // Cut the accepted blocks out of their free spans: each touched span is replaced by what is left.
    const byRow = new Map<string, { row: FreeRow; taken: Span[] }>();
    for (const { c, row } of accepted) {
      const k = `${row.band}/${row.first}`;
      const entry = byRow.get(k) ?? { row, taken: [] };
      entry.taken.push(c.span);
      byRow.set(k, entry);
    }
    const rest: BandedSpan[] = [];
    await deleteFreeMany(tx, pool.id, [...byRow.values()].map((e) => e.row));
    for (const { row, taken } of byRow.values()) {
      let from = row.first;
      for (const t of taken.sort((a, b) => (a.first < b.first ? -1 : 1))) {
        if (t.first > from) rest.push({ band: row.band, first: from, last: t.first - 1n });
        from = t.last + 1n;
      }
      if (from <= row.last) rest.push({ band: row.band, first: from, last: row.last });
    }
    await insertFree(tx, pool.id, rest);
    const now = tx.clock.nowIso();
    const rows = accepted.map(({ c }) => ({
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
      request_hash: JSON.stringify({ block: c.block.toString(), value: c.span.first.toString() }),
      metadata: JSON.stringify(c.item.metadata ?? {}),
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 1000) await tx.db.insertInto('ids_allocations').values(rows.slice(i, i + 1000)).execute();
    for (const { c } of accepted) pool.used += c.block;
    pool.allocationCount += accepted.length;
    // Leases expired above may already have changed the pool: only ever raise the flag here.
    if (accepted.length > 0) pool.dirty = true;
    await flushPool(tx, pool);
    return { imported: accepted.length, unchanged, conflicts };
  });
}

/** Worker: release every reservation whose lease has run out, pool by pool. */
export async function expireLeases(database: Database): Promise<number> {
  const pools = await database.db.selectFrom('ids_allocations').select('pool_id').distinct().where('expires_at', '<=', database.clock.nowIso()).execute();
  let released = 0;
  for (const { pool_id } of pools) {
    released += await transaction(database, async (tx) => {
      const pool = await lockPoolById(tx, pool_id);
      const n = await expireLeasesInPool(tx, pool);
      await flushPool(tx, pool);
      return n;
    });
  }
  return released;
}
