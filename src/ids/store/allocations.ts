// SQL of allocations outside the engine (allocate.ts): reading and listing them, changing one,
// bulk inserts of an import, and the questions the services ask (which pools have leases past due,
// what an owner holds).
import { sql } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import type { Db, Tx } from '../../db/database.js';
import { bumpGeneration } from '../../db/generation.js';
import { TEXT_ARRAY_FROM_JSON, isLostRace, plainArray } from '../../db/sql-helpers.js';
import { rawRead, writeStatement } from '../../db/statement.js';

import { idsDomainError } from '../core/domain-errors.js';
import type { PoolScope } from '../core/scope.js';
import { type Span, fromKey } from '../core/values.js';
import type { AllocationRow } from './allocate.js';
import { heldByQuery } from './free-ranges.js';

export async function findAllocation(db: Db, id: string): Promise<AllocationRow | undefined> {
  return db.db.selectFrom('ids_allocations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function poolIdOfAllocation(db: Db, id: string): Promise<number | undefined> {
  return (await db.db.selectFrom('ids_allocations').select('pool_id').where('id', '=', id).executeTakeFirst())?.pool_id;
}

export interface AllocationFilter {
  poolId?: number;
  /**
   * only allocations overlapping the keys `first`…`last`; `from` is the first key of the one
   * holding `first` (allocationHolding), or `first`, so that the scan is one index range
   */
  overlapping?: { from: string; first: string; last: string };
  /** only allocations in pools of this scope */
  scope?: PoolScope;
  owner?: string;
  purpose?: string;
  state?: string;
}

export interface AllocationPosition {
  poolId: number;
  key: string;
}

/**
 * Up to `limit` allocations in (pool, first value) order, after `after` — reservations whose lease
 * looks run out included: whether one still runs is the reader's to judge (liveRows in
 * services/allocations.ts), since a writer may be committing its confirmation.
 */
export async function listAllocations(db: Db, filter: AllocationFilter, after: AllocationPosition | null, limit: number): Promise<AllocationRow[]> {
  let q = db.db.selectFrom('ids_allocations').selectAll();
  if (filter.poolId !== undefined) q = q.where('pool_id', '=', filter.poolId);
  const scope = filter.scope;
  if (scope && !scope.all) {
    q = q.where('pool_id', 'in', (eb) => {
      const pools = eb.selectFrom('ids_pools').select('ids_pools.id');
      const project = scope.project;
      return project === null
        ? pools.where('ids_pools.project_id', 'is', null)
        : pools.where((w) => w.or([w('ids_pools.project_id', 'is', null), w('ids_pools.project_id', '=', project)]));
    });
  }
  const o = filter.overlapping;
  if (o) q = q.where('first_key', '>=', o.from).where('first_key', '<=', o.last).where('last_key', '>=', o.first);
  if (filter.owner !== undefined) q = q.where('owner', '=', filter.owner);
  if (filter.purpose !== undefined) q = q.where('purpose', '=', filter.purpose);
  // The state as a literal (the schema allows two), so that SQLite, like PostgreSQL, proves the
  // partial index `ids_allocations_reserved` applies to `?state=reserved` (migration 009).
  const state = filter.state;
  if (state === 'reserved' || state === 'allocated') q = q.where('state', '=', sql.lit(state));
  else if (state !== undefined) q = q.where('state', '=', state);
  if (after) {
    q = q.where((eb) => eb.or([eb('pool_id', '>', after.poolId), eb.and([eb('pool_id', '=', after.poolId), eb('first_key', '>', after.key)])]));
  }
  return q.orderBy('pool_id').orderBy('first_key').limit(limit).execute();
}

/**
 * The allocation whose block holds the value of `key`, if any (a lease that looks run out
 * included, as listAllocations): blocks do not overlap, so it can only be the one starting nearest
 * at or below it.
 */
export async function allocationHolding(db: Db, poolId: number, key: string): Promise<AllocationRow | undefined> {
  const row = await db.db
    .selectFrom('ids_allocations')
    .selectAll()
    .where('pool_id', '=', poolId)
    .where('first_key', '<=', key)
    .orderBy('first_key', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row || row.last_key < key) return undefined;
  return row;
}

/**
 * These rows as they are once no writer holds them: PostgreSQL waits (`FOR SHARE`, in the
 * statement's own transaction) for any transaction changing or deleting one of them to end, then
 * reads the version it left; a row deleted meanwhile is missing from the answer. A reader asks
 * this of reservations whose lease looks run out before it calls them released (issue 33): a
 * confirmation checks the lease by the database's clock at its COMMIT (migration 014) but becomes
 * visible only after the WAL flush (and a synchronous standby's answer), holding the row's lock
 * until then. The rows are locked in (pool, first value) order, the order the lease expiry
 * deletes them in (expireLeasesInPool); a deadlock with a writer that locks several in another
 * order is waited out one row a statement. The wait is bounded like any statement, by the
 * request's deadline. SQLite: the rows as given — its one connection is held by a writer from its
 * check to its commit, so a read never runs between the two.
 */
export async function afterTheirWriters(db: Db, rows: readonly AllocationRow[]): Promise<AllocationRow[]> {
  if (db.dialect !== 'postgres' || rows.length === 0) return [...rows];
  const waitFor = (ids: string[]) =>
    db.db.selectFrom('ids_allocations').selectAll().where('id', 'in', ids).orderBy('pool_id').orderBy('first_key').forShare().execute();
  const ids = rows.map((r) => r.id);
  try {
    return await waitFor(ids);
  } catch (err) {
    if (!isLostRace(err) || ids.length === 1) throw err;
    const out: AllocationRow[] = [];
    for (const id of ids) out.push(...(await waitFor([id])));
    return out;
  }
}

/**
 * Did the transaction's COMMIT fail because it changed a reservation whose lease had run out by
 * then (PostgreSQL: the deferred trigger `ids_allocations_lease_alive` of migration 014, SQLSTATE
 * ALEXP)? Nothing was committed.
 */
export function isLeaseRanOutAtCommit(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ALEXP';
}

/** Change an allocation read under its pool's lock and move its version. */
export async function updateAllocation(
  tx: Tx,
  row: AllocationRow,
  changes: Partial<Pick<AllocationRow, 'state' | 'expires_at' | 'metadata'>>,
): Promise<AllocationRow> {
  const lost = () => new RetryableConflict('allocation changed', () => idsDomainError('changed_concurrently', { resource: 'allocation' }));
  await bumpGeneration(tx, 'ids_allocations', row.id, row.version, lost, changes);
  return tx.db.selectFrom('ids_allocations').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
}

/** What these owner+purpose pairs hold in a pool (PostgreSQL: one statement; SQLite: 5000 pairs a statement). */
export async function heldByHolders(db: Db, poolId: number, holders: ReadonlyArray<{ owner: string; purpose: string }>): Promise<AllocationRow[]> {
  const out: AllocationRow[] = [];
  const chunk = db.dialect === 'postgres' ? holders.length : 5000;
  for (let i = 0; i < holders.length; i += chunk) {
    out.push(...(await rawRead(db, heldByQuery<AllocationRow>(db, poolId, holders.slice(i, i + chunk), sql`w.*`))));
  }
  return out;
}

/**
 * PostgreSQL: the rows as one array per column, one statement whatever their number. (As one
 * JSON document read by json_to_recordset, PostgreSQL spent 2–4× longer reading the rows; as
 * arrays the driver escaped every element in JavaScript: ~130 ms of an import of 10 000. Here
 * keys, ids, numbers and words go as array literals (plainArray), free text as JSON arrays.)
 */
const T = TEXT_ARRAY_FROM_JSON;
const INSERT_ALLOCATIONS_PG = writeStatement(
  `insert into ids_allocations (id, pool_id, first_key, last_key, block_log2, owner, purpose, state, expires_at, version, source, request_hash, metadata, created_at, updated_at)
   select * from unnest(?::text[], ?::integer[], ?::text[], ?::text[], ?::integer[], ${T}, ${T},
     ?::text[], ?::text[], ?::integer[], ?::text[], ${T}, ${T}, ?::text[], ?::text[])`,
);

/** Insert many allocations (an import): 15 columns a row, SQLite allows 32766 bound parameters, so 2000 a statement. */
export async function insertAllocations(tx: Tx, rows: readonly AllocationRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (tx.dialect === 'postgres') {
    const column = <K extends keyof AllocationRow>(k: K) => rows.map((r) => r[k]);
    await INSERT_ALLOCATIONS_PG.run(tx, [
      plainArray(column('id')),
      plainArray(column('pool_id')),
      plainArray(column('first_key')),
      plainArray(column('last_key')),
      plainArray(column('block_log2')),
      JSON.stringify(column('owner')),
      JSON.stringify(column('purpose')),
      plainArray(column('state')),
      plainArray(column('expires_at')),
      plainArray(column('version')),
      plainArray(column('source')),
      JSON.stringify(column('request_hash')),
      JSON.stringify(column('metadata')),
      plainArray(column('created_at')),
      plainArray(column('updated_at')),
    ]);
    return;
  }
  for (let i = 0; i < rows.length; i += 2000)
    await tx.db
      .insertInto('ids_allocations')
      .values(rows.slice(i, i + 2000))
      .execute();
}

/** The owner of the allocation that starts at this key in the named pool, if any. */
export async function ownerAt(db: Db, poolName: string, key: string): Promise<string | undefined> {
  const r = await db.db
    .selectFrom('ids_allocations')
    .innerJoin('ids_pools', 'ids_pools.id', 'ids_allocations.pool_id')
    .select('ids_allocations.owner')
    .where('ids_pools.name', '=', poolName)
    .where('ids_allocations.first_key', '=', key)
    .executeTakeFirst();
  return r?.owner;
}

/** Every allocation of an owner, in any pool. */
export async function allocationsOfOwner(db: Db, owner: string): Promise<AllocationRow[]> {
  return db.db.selectFrom('ids_allocations').selectAll().where('owner', '=', owner).orderBy('id').execute();
}

/** Every allocation of a pool, in value order (what a change of the pool's ranges must keep inside). */
export async function allocationsOfPool(db: Db, poolId: number) {
  return db.db
    .selectFrom('ids_allocations')
    .select(['id', 'first_key', 'last_key', 'owner', 'purpose'])
    .where('pool_id', '=', poolId)
    .orderBy('first_key')
    .execute();
}

/**
 * A pool's allocations of fewer than 2^log2 values, in value order: a prefix pool's blocks longer
 * than its prefix_length, which its utilization counts apart (core/utilization.ts). A walk of the
 * pool's (pool_id, first_key) index that returns only those.
 */
export async function blocksSmallerThan(db: Db, poolId: number, log2: number): Promise<Span[]> {
  const rows = await db.db
    .selectFrom('ids_allocations')
    .select(['first_key', 'last_key'])
    .where('pool_id', '=', poolId)
    .where('block_log2', '<', log2)
    .orderBy('first_key')
    .execute();
  return rows.map((r) => ({ first: fromKey(r.first_key), last: fromKey(r.last_key) }));
}

/** The pools holding a reservation whose lease ran out by `now`. */
export async function poolsWithExpiredLeases(db: Db): Promise<number[]> {
  const rows = await db.db.selectFrom('ids_allocations').select('pool_id').distinct().where('expires_at', '<=', db.clock.nowIso()).execute();
  return rows.map((r) => r.pool_id);
}
