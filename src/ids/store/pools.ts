// SQL of pools: reading them, locking them for a write, and writing their rows. Every write to a
// pool's holdings runs with the pool's row locked (PostgreSQL `FOR UPDATE`; SQLite's one writer),
// so racers for one pool queue while other pools are untouched, and ends with `flushPool`, which
// moves the pool's generation with a compare-and-set and stores its counters.
import type { Compilable, Selectable } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import type { Db, Tx } from '../../db/database.js';
import { bumpGeneration, bumpGenerationQuery } from '../../db/generation.js';
import { type ClosingWrites, placeholders, readStatement, type Statement, writeStatement, writeTogether } from '../../db/statement.js';
import type { IdsPoolTable } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';

import { idsDomainError } from '../core/domain-errors.js';
import { type PoolSpace, type Strategy, deserializeSpace } from '../core/pool-space.js';
import type { PoolScope } from '../core/scope.js';

export type PoolRow = Selectable<IdsPoolTable>;
export type NewPool = Omit<PoolRow, 'id' | 'generation' | 'used_count' | 'allocation_count' | 'last_key' | 'created_at' | 'updated_at'>;

/** A pool inside a write transaction: its row locked, its counters kept here until `flushPool`. */
export interface LockedPool {
  id: number;
  name: string;
  /** the owning project (null: shared) */
  project: string | null;
  space: PoolSpace;
  /** the space as stored (what a write decided without the lock checks it against) */
  definition: string;
  strategy: Strategy;
  generation: number;
  used: bigint;
  allocationCount: number;
  lastKey: string | null;
  /** upper bound of the alignment class any free span can have (bit length of the largest range) */
  maxK: number;
  /** the counters or last_key changed: `flushPool` must store them and move the generation */
  dirty: boolean;
  /** a reservation of the pool had run out when it was locked (see lockingSelect) */
  hasExpiredLeases: boolean;
}

/** What a view of an allocation needs of its pool. */
export interface PoolRef {
  name: string;
  space: PoolSpace;
}

function maxKOf(space: PoolSpace): number {
  let max = 0n;
  for (const r of space.ranges) if (r.last - r.first + 1n > max) max = r.last - r.first + 1n;
  return max.toString(2).length - 1;
}

export async function findPoolRow(db: Db, name: string): Promise<PoolRow | undefined> {
  return db.db.selectFrom('ids_pools').selectAll().where('name', '=', name).executeTakeFirst();
}

/** The pool of this name; `pool_not_found` when there is none. */
export async function getPoolRow(db: Db, name: string): Promise<PoolRow> {
  const row = await findPoolRow(db, name);
  if (!row) throw idsDomainError('pool_not_found', { pool: name });
  return row;
}

export async function poolRowById(db: Db, id: number): Promise<PoolRow> {
  return db.db.selectFrom('ids_pools').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The project owning the pool with this id (null: shared). */
export async function poolProjectById(db: Db, id: number): Promise<string | null> {
  return (await db.db.selectFrom('ids_pools').select('project_id').where('id', '=', id).executeTakeFirstOrThrow()).project_id;
}

export async function poolRefById(db: Db, id: number): Promise<PoolRef> {
  const row = await db.db.selectFrom('ids_pools').select(['name', 'definition']).where('id', '=', id).executeTakeFirstOrThrow();
  return { name: row.name, space: deserializeSpace(row.definition) };
}

/** The names and spaces of these pools, in one statement. */
export async function poolRefsById(db: Db, ids: readonly number[]): Promise<Map<number, PoolRef>> {
  if (!ids.length) return new Map();
  const rows = await db.db.selectFrom('ids_pools').select(['id', 'name', 'definition']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, { name: r.name, space: deserializeSpace(r.definition) }]));
}

export async function listPools(db: Db, after: string | null, limit: number, scope: PoolScope, kind?: string): Promise<PoolRow[]> {
  let q = db.db.selectFrom('ids_pools').selectAll();
  if (!scope.all) {
    const project = scope.project;
    q = project === null ? q.where('project_id', 'is', null) : q.where((eb) => eb.or([eb('project_id', 'is', null), eb('project_id', '=', project)]));
  }
  if (after !== null) q = q.where('name', '>', after);
  if (kind) q = q.where('kind', '=', kind);
  return q.orderBy('name').limit(limit).execute();
}

const toLocked = (row: PoolRow): Omit<LockedPool, 'hasExpiredLeases'> => {
  const space = deserializeSpace(row.definition);
  return {
    id: row.id,
    name: row.name,
    project: row.project_id,
    space,
    definition: row.definition,
    strategy: row.strategy as Strategy,
    generation: row.generation,
    used: BigInt(row.used_count),
    allocationCount: row.allocation_count,
    lastKey: row.last_key,
    maxK: maxKOf(space),
    dirty: false,
  };
};

/**
 * "The pool holds a lease past due", asked as its earliest lease: one probe of the (pool_id,
 * expires_at) partial index in every plan. As `exists (… expires_at <= now)`, a plan made without
 * the values (a prepared statement's generic plan) expects a third of the pool's allocations to
 * match and scans them all, none matching (migration 017; allot_take_auto asks it the same way).
 */
const leasesPastDue = (pool: string, now: string) =>
  `coalesce((select min(a.expires_at) from ids_allocations as a where a.pool_id = ${pool} and a.expires_at is not null) <= ${now}, false)`;

/**
 * The pools' rows, locked (PostgreSQL `FOR UPDATE`; SQLite's one writer), with whether each holds
 * a lease past due — asked in the same statement to spare an allocation the round trip of looking
 * for expired leases when there are none (nearly always). On PostgreSQL that flag comes from the
 * statement's snapshot, taken before the lock was granted: a lease that ran out meanwhile is missed
 * and released by the next writer or the lease worker instead; one never handed out is never freed.
 * Every identifier write (a reservation's two pools) sends it: written once per shape, not built
 * and compiled per request (issue 31); the lease's time is its first parameter.
 */
const selectPools = `select *, ${leasesPastDue('ids_pools.id', '?')} as has_expired_leases from ids_pools`;
type PoolWithLeases = PoolRow & { has_expired_leases: unknown };
const lockById = {
  sqlite: writeStatement<PoolWithLeases>(`${selectPools} where id = ?`),
  postgres: writeStatement<PoolWithLeases>(`${selectPools} where id = ? for update`),
};
/** by the number of names locked (a reservation: one per pool attribute) */
const lockByNames = new Map<string, Statement<PoolWithLeases, Tx>>();
function lockingByNames(tx: Tx, n: number): Statement<PoolWithLeases, Tx> {
  const key = `${tx.dialect} ${n}`;
  let statement = lockByNames.get(key);
  if (!statement) {
    statement = writeStatement(`${selectPools} where name in (${placeholders(n)}) order by id${tx.dialect === 'postgres' ? ' for update' : ''}`);
    lockByNames.set(key, statement);
  }
  return statement;
}

const lockedOf = (r: PoolWithLeases): LockedPool => ({ ...toLocked(r), hasExpiredLeases: Boolean(r.has_expired_leases) });

/** Lock pools by name, in id order (so two multi-pool writers cannot deadlock). `pool_not_found` for a missing one. */
export async function lockPools(tx: Tx, names: readonly string[]): Promise<Map<string, LockedPool>> {
  const unique = [...new Set(names)];
  const rows = await lockingByNames(tx, unique.length).all(tx, [tx.clock.nowIso(), ...unique]);
  const out = new Map<string, LockedPool>();
  for (const r of rows) out.set(r.name, lockedOf(r));
  for (const n of unique) if (!out.has(n)) throw idsDomainError('pool_not_found', { pool: n });
  return out;
}

export async function lockPool(tx: Tx, name: string): Promise<LockedPool> {
  return (await lockPools(tx, [name])).get(name)!;
}

/**
 * A pool as it is now, without its lock: what an allocation that takes its block with one
 * compare-and-set (one-statement-allocate.ts) decides with. Its counters are not for writing back.
 */
export async function readPool(db: Db, name: string): Promise<LockedPool | undefined> {
  const row = await READ_BY_NAME.one(db, [db.clock.nowIso(), name]);
  return row && lockedOf(row);
}
const READ_BY_NAME = readStatement<PoolWithLeases>(`${selectPools} where name = ?`);

export async function lockPoolById(tx: Tx, id: number): Promise<LockedPool> {
  const row = await lockById[tx.dialect].one(tx, [tx.clock.nowIso(), id]);
  if (!row) throw new Error(`pool ${id} not found`);
  return lockedOf(row);
}

/** Store a locked pool's counters and move its generation (compare-and-set against what we locked). */
export async function flushPool(tx: Tx, pool: LockedPool): Promise<void> {
  if (!pool.dirty) return;
  pool.generation = await bumpGeneration(
    tx,
    'ids_pools',
    pool.id,
    pool.generation,
    () => new RetryableConflict(`pool ${pool.name} changed under its lock`, () => idsDomainError('changed_concurrently', { resource: 'pool' })),
    { used_count: pool.used.toString(), allocation_count: pool.allocationCount, last_key: pool.lastKey },
  );
  pool.dirty = false;
}

/**
 * `flushPool` sent with other writes of the pool in one round trip (the compare-and-set last):
 * what an allocation does to save the round trip that flushing alone costs under the lock.
 */
export async function flushPoolWith(tx: Tx, pool: LockedPool, writes: readonly Compilable[]): Promise<void> {
  const counters = { used_count: pool.used.toString(), allocation_count: pool.allocationCount, last_key: pool.lastKey };
  const changed = await writeTogether(tx, [...writes, bumpGenerationQuery(tx, 'ids_pools', pool.id, pool.generation, counters)]);
  if (changed !== 1)
    throw new RetryableConflict(`pool ${pool.name} changed under its lock`, () => idsDomainError('changed_concurrently', { resource: 'pool' }));
  pool.generation += 1;
  pool.dirty = false;
}

/**
 * `flushPoolWith`, held back for the statement that closes the transaction (ClosingWrites): the
 * pool's row is then locked from that statement to the commit, not across the round trips between.
 */
export function flushPoolClosing(tx: Tx, pool: LockedPool, writes: readonly Compilable[], closing: ClosingWrites): void {
  const counters = { used_count: pool.used.toString(), allocation_count: pool.allocationCount, last_key: pool.lastKey };
  for (const w of writes) closing.add(w, 1);
  closing.add(bumpGenerationQuery(tx, 'ids_pools', pool.id, pool.generation, counters), 1);
  pool.generation += 1;
  pool.dirty = false;
}

/** Insert a new, empty pool; its id. A racer that created the name first makes the transaction run again. */
export async function insertPool(tx: Tx, pool: NewPool): Promise<number> {
  const now = tx.clock.nowIso();
  try {
    const inserted = await tx.db
      .insertInto('ids_pools')
      .values({ ...pool, generation: 0, used_count: '0', allocation_count: 0, last_key: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return inserted.id;
  } catch (err) {
    if (isUniqueViolation(err))
      throw new RetryableConflict('pool created concurrently', () => idsDomainError('pool_created_concurrently', { pool: pool.name }));
    throw err;
  }
}

/** Change a locked pool's row and move its generation. */
export async function updatePoolRow(
  tx: Tx,
  pool: LockedPool,
  changes: Partial<Pick<PoolRow, 'strategy' | 'description' | 'metadata' | 'definition' | 'total_count'>>,
): Promise<void> {
  pool.generation = await bumpGeneration(
    tx,
    'ids_pools',
    pool.id,
    pool.generation,
    () => idsDomainError('version_mismatch', { current: pool.generation + 1 }),
    changes,
  );
}

/** Delete a locked pool and its free spans (it holds no allocations). */
export async function deletePoolRows(tx: Tx, poolId: number): Promise<void> {
  await tx.db.deleteFrom('ids_free_ranges').where('pool_id', '=', poolId).execute();
  await tx.db.deleteFrom('ids_pools').where('id', '=', poolId).execute();
}

/** The first `limit` pools by name (the metrics' gauges). */
export async function firstPools(db: Db, limit: number): Promise<PoolRow[]> {
  return db.db.selectFrom('ids_pools').selectAll().orderBy('name').limit(limit).execute();
}
