// Pools: creating, reading, changing and deleting them, and locking them for a write. Every write
// to a pool's holdings runs with the pool's row locked (PostgreSQL `FOR UPDATE`; SQLite's one
// writer), so racers for one pool queue while other pools are untouched, and ends with
// `flushPool`, which moves the pool's generation with a compare-and-set and stores its counters.
import { RetryableConflict } from '../../core/errors.js';
import type { Database, Db } from '../../db/database.js';
import { bumpGeneration } from '../../db/generation.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { type Tx, transaction } from '../../db/transaction.js';
import type { IdsPoolTable } from '../../db/schema.js';
import type { Selectable } from 'kysely';
import { idsError, notFoundError, preconditionFailed } from '../errors.js';
import {
  type PoolDefinitionInput,
  type PoolSpace,
  type Strategy,
  deserializeSpace,
  formatPoint,
  initialFreeSpans,
  parsePoolDefinition,
  serializeSpace,
  usable,
} from '../core/pool-space.js';
import { covers, intersect, normalize, splitByBand, subtract, totalSize } from '../core/ranges.js';
import { type Span, fromKey } from '../core/values.js';
import { insertFree, largestFree, replaceAllFree } from './free-ranges.js';

export type PoolRow = Selectable<IdsPoolTable>;

/** A pool inside a write transaction: its row locked, its counters kept here until `flushPool`. */
export interface LockedPool {
  id: number;
  name: string;
  space: PoolSpace;
  strategy: Strategy;
  generation: number;
  used: bigint;
  allocationCount: number;
  lastKey: string | null;
  /** upper bound of the alignment class any free span can have (bit length of the largest range) */
  maxK: number;
  dirty: boolean;
}

export interface PoolInput extends PoolDefinitionInput {
  name: string;
  strategy?: Strategy;
  description?: string;
  metadata?: Record<string, unknown>;
}

function maxKOf(space: PoolSpace): number {
  let max = 0n;
  for (const r of space.ranges) if (r.last - r.first + 1n > max) max = r.last - r.first + 1n;
  return max.toString(2).length - 1;
}

export async function getPoolRow(db: Db, name: string): Promise<PoolRow> {
  const row = await db.db.selectFrom('ids_pools').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw notFoundError(`pool ${JSON.stringify(name)}`);
  return row;
}

export async function poolRowById(db: Db, id: number): Promise<PoolRow> {
  return db.db.selectFrom('ids_pools').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

const toLocked = (row: PoolRow): LockedPool => {
  const space = deserializeSpace(row.definition);
  return {
    id: row.id,
    name: row.name,
    space,
    strategy: row.strategy as Strategy,
    generation: row.generation,
    used: BigInt(row.used_count),
    allocationCount: row.allocation_count,
    lastKey: row.last_key,
    maxK: maxKOf(space),
    dirty: false,
  };
};

/** Lock pools by name, in id order (so two multi-pool writers cannot deadlock). 404 for a missing one. */
export async function lockPools(tx: Tx, names: readonly string[]): Promise<Map<string, LockedPool>> {
  const unique = [...new Set(names)];
  let q = tx.db.selectFrom('ids_pools').selectAll().where('name', 'in', unique).orderBy('id');
  if (tx.dialect === 'postgres') q = q.forUpdate();
  const rows = await q.execute();
  const out = new Map<string, LockedPool>();
  for (const r of rows) out.set(r.name, toLocked(r));
  for (const n of unique) if (!out.has(n)) throw notFoundError(`pool ${JSON.stringify(n)}`);
  return out;
}

export async function lockPoolById(tx: Tx, id: number): Promise<LockedPool> {
  let q = tx.db.selectFrom('ids_pools').selectAll().where('id', '=', id);
  if (tx.dialect === 'postgres') q = q.forUpdate();
  return toLocked(await q.executeTakeFirstOrThrow());
}

/** Store a locked pool's counters and move its generation (compare-and-set against what we locked). */
export async function flushPool(tx: Tx, pool: LockedPool): Promise<void> {
  if (!pool.dirty) return;
  pool.generation = await bumpGeneration(
    tx,
    'ids_pools',
    pool.id,
    pool.generation,
    () => new RetryableConflict(`pool ${pool.name} changed under its lock`, () => idsError(409, 'ids.concurrent_update', 'The pool changed concurrently; retry.')),
    { used_count: pool.used.toString(), allocation_count: pool.allocationCount, last_key: pool.lastKey },
  );
  pool.dirty = false;
}

// --- views ---

export interface PoolView {
  name: string;
  kind: string;
  family: 'ipv4' | 'ipv6' | null;
  ranges: Array<{ lower: number | string; upper: number | string }>;
  excluded: Array<{ lower: number | string; upper: number | string }>;
  static: Array<{ lower: number | string; upper: number | string }>;
  prefix_length: number | null;
  strategy: string;
  description: string;
  metadata: Record<string, unknown>;
  generation: number;
  utilization: {
    total: string;
    used: string;
    free: string;
    allocations: number;
    largest_free_block: string;
    used_percent: number;
    static_total: string;
  };
  created_at: string;
  updated_at: string;
}

export async function poolView(db: Db, row: PoolRow): Promise<PoolView> {
  const space = deserializeSpace(row.definition);
  const spans = (list: Span[]) => list.map((s) => ({ lower: formatPoint(space, s.first), upper: formatPoint(space, s.last) }));
  const total = BigInt(row.total_count);
  const used = BigInt(row.used_count);
  const staticTotal = totalSize(intersect(usable(space), space.staticBand));
  return {
    name: row.name,
    kind: row.kind,
    family: space.family === null ? null : space.family === 4 ? 'ipv4' : 'ipv6',
    ranges: spans(space.ranges),
    excluded: spans(space.excluded),
    static: spans(space.staticBand),
    prefix_length: space.prefixLength,
    strategy: row.strategy,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    generation: row.generation,
    utilization: {
      total: total.toString(),
      used: used.toString(),
      free: (total - used).toString(),
      allocations: row.allocation_count,
      largest_free_block: (await largestFree(db, row.id, 'auto')).toString(),
      used_percent: total === 0n ? 0 : Number((used * 10000n) / total) / 100,
      static_total: staticTotal.toString(),
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// --- writes ---

/** Definition fingerprint: what makes two creations of one name "the same pool". */
const fingerprint = (space: PoolSpace, strategy: string) => `${serializeSpace(space)}|${strategy}`;

/** Create a pool. Creating the same name with the same definition again answers the existing one. */
export async function createPool(database: Database, input: PoolInput): Promise<{ row: PoolRow; created: boolean }> {
  const space = parsePoolDefinition(input);
  const strategy = input.strategy ?? 'lowest';
  return transaction(database, async (tx) => {
    const existing = await tx.db.selectFrom('ids_pools').selectAll().where('name', '=', input.name).executeTakeFirst();
    if (existing) {
      if (fingerprint(deserializeSpace(existing.definition), existing.strategy) === fingerprint(space, strategy)) return { row: existing, created: false };
      throw idsError(409, 'ids.pool_exists', `A pool named ${JSON.stringify(input.name)} exists with another definition`);
    }
    const now = tx.clock.nowIso();
    let id: number;
    try {
      const inserted = await tx.db
        .insertInto('ids_pools')
        .values({
          name: input.name,
          kind: space.kind,
          definition: serializeSpace(space),
          strategy,
          description: input.description ?? '',
          metadata: JSON.stringify(input.metadata ?? {}),
          generation: 0,
          total_count: totalSize(usable(space)).toString(),
          used_count: '0',
          allocation_count: 0,
          last_key: null,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      id = inserted.id;
    } catch (err) {
      if (isUniqueViolation(err)) throw new RetryableConflict('pool created concurrently', () => idsError(409, 'ids.pool_exists', 'pool created concurrently'));
      throw err;
    }
    await insertFree(tx, id, initialFreeSpans(space));
    return { row: await poolRowById(tx, id), created: true };
  });
}

export interface PoolPatch {
  strategy?: Strategy;
  description?: string;
  metadata?: Record<string, unknown>;
  ranges?: PoolInput['ranges'];
  excluded?: PoolInput['excluded'];
  static?: PoolInput['static'];
  prefix_length?: number;
}

/**
 * Change a pool. New ranges, exclusions or static band are checked against every allocation (an
 * allocation left outside the new usable set is a 409 naming it) and the free spans are rebuilt:
 * an administrative operation whose cost grows with the number of allocations.
 */
export async function updatePool(database: Database, name: string, patch: PoolPatch, ifMatch: number | null): Promise<PoolRow> {
  return transaction(database, async (tx) => {
    const [pool] = [...(await lockPools(tx, [name])).values()] as [LockedPool];
    if (ifMatch !== null && ifMatch !== pool.generation) throw preconditionFailed(pool.generation);
    const also: Record<string, unknown> = {};
    if (patch.strategy !== undefined) also.strategy = patch.strategy;
    if (patch.description !== undefined) also.description = patch.description;
    if (patch.metadata !== undefined) also.metadata = JSON.stringify(patch.metadata);
    const spaceChanged = patch.ranges !== undefined || patch.excluded !== undefined || patch.static !== undefined || patch.prefix_length !== undefined;
    if (spaceChanged) {
      const old = pool.space;
      const asItems = (spans: Span[]) => spans.map((s) => ({ lower: formatPoint(old, s.first), upper: formatPoint(old, s.last) }));
      const space = parsePoolDefinition({
        kind: old.kind,
        ranges: patch.ranges ?? asItems(old.ranges),
        excluded: patch.excluded ?? asItems(old.excluded),
        static: patch.static ?? asItems(old.staticBand),
        exclude_network_and_broadcast: false,
        ...(old.kind === 'prefix' ? { prefix_length: patch.prefix_length ?? old.prefixLength! } : {}),
        ...(old.kind !== 'prefix' && patch.prefix_length !== undefined ? { prefix_length: patch.prefix_length } : {}),
      });
      const allocations = await tx.db
        .selectFrom('ids_allocations')
        .select(['id', 'first_key', 'last_key', 'owner', 'purpose'])
        .where('pool_id', '=', pool.id)
        .orderBy('first_key')
        .execute();
      const usableSpans = usable(space);
      const outside = allocations.filter((a) => !covers(usableSpans, { first: fromKey(a.first_key), last: fromKey(a.last_key) }));
      if (outside.length) {
        throw idsError(409, 'ids.pool_in_use', `${outside.length} allocation(s) would fall outside the changed pool`, {
          allocations: outside.slice(0, 100).map((a) => ({ id: a.id, owner: a.owner, purpose: a.purpose, value: formatPoint(old, fromKey(a.first_key)) })),
        });
      }
      const taken = normalize(allocations.map((a) => ({ first: fromKey(a.first_key), last: fromKey(a.last_key) })));
      const free = subtract(usableSpans, taken).flatMap((s) => splitByBand(s, space.staticBand));
      await replaceAllFree(tx, pool.id, free);
      also.definition = serializeSpace(space);
      also.total_count = totalSize(usableSpans).toString();
    }
    await bumpGeneration(tx, 'ids_pools', pool.id, pool.generation, () => preconditionFailed(pool.generation + 1), also);
    return poolRowById(tx, pool.id);
  });
}

export async function deletePool(database: Database, name: string, ifMatch: number | null): Promise<void> {
  await transaction(database, async (tx) => {
    const [pool] = [...(await lockPools(tx, [name])).values()] as [LockedPool];
    if (ifMatch !== null && ifMatch !== pool.generation) throw preconditionFailed(pool.generation);
    if (pool.allocationCount > 0) throw idsError(409, 'ids.pool_in_use', `Pool ${JSON.stringify(name)} still has ${pool.allocationCount} allocation(s); release them first`);
    await tx.db.deleteFrom('ids_free_ranges').where('pool_id', '=', pool.id).execute();
    await tx.db.deleteFrom('ids_pools').where('id', '=', pool.id).execute();
  });
}

export async function listPools(db: Db, after: string | null, limit: number, kind?: string): Promise<PoolRow[]> {
  let q = db.db.selectFrom('ids_pools').selectAll();
  if (after !== null) q = q.where('name', '>', after);
  if (kind) q = q.where('kind', '=', kind);
  return q.orderBy('name').limit(limit).execute();
}

