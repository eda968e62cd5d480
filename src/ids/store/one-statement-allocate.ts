// An automatic allocation on PostgreSQL whose pool lock is held only while SQL runs (issue 15).
//
// The locked path (allocate.ts) holds the pool's row lock across BEGIN/lock → probe → write →
// COMMIT: three round trips and as many turns of a busy event loop. Measured with 48 clients over
// 3 processes: 0.16 ms of SQL per write and 0.07 ms per probe, but ~235 ms per allocation waiting
// for the lock (docs/performance.md). Here the strategy still decides in JS, from one probe
// statement run WITHOUT the lock (probeAuto), and the chosen block is then taken by ONE statement
// in its own implicit transaction, which:
//
// - moves the pool's counters and generation (this locks the pool's row first, so it queues
//   behind the locked path's `FOR UPDATE` and never the other way round: no deadlock), but only
//   while the pool's definition is the one decided with;
// - takes the block out of the free span as a compare-and-set: the span row must still be exactly
//   the one probed (PostgreSQL re-checks the WHERE on the latest row version after a lock wait;
//   rows inserted after the statement's snapshot are invisible to it, so the check can only fail
//   safe), and the span's remainder is written as takeWrites does;
// - inserts the allocation with `on conflict do nothing`: a concurrent owner+purpose (or value)
//   makes it insert nothing;
//
// and `allot_assert`s that the allocation was inserted, else raises and nothing is kept. The
// caller then probes again (the repeat is then answered as the idempotent one, or as
// `ids.idempotency_mismatch`), a bounded number of times, then takes the locked path.
import type { Db, Tx } from '../../db/database.js';
import { writeStatement } from '../../db/statement.js';
import { maxAlignedLog2 } from '../core/ranges.js';
import { blockSize } from '../core/pool-space.js';
import { keyOf, sizeKeyOf } from '../core/values.js';
import { type AllocationOutcome, type AllocationRequest, newAllocationRow, pickAutomatic, repeatAnswer, requestParams } from './allocate.js';
import type { LockedPool } from './pools.js';

const POOL = `pool as (
    update ids_pools set used_count = (used_count::numeric + ?::numeric)::text, allocation_count = allocation_count + 1,
      last_key = ?, generation = generation + 1, updated_at = ?
    where id = ? and definition = ? returning id)`;
const SPAN = `pool_id = ? and band = 'auto' and first_key = ? and last_key = ? and exists (select 1 from pool)`;
const INSERT = `inserted as (
    insert into ids_allocations (id, pool_id, first_key, last_key, block_log2, owner, purpose, state, expires_at, version, source, request_hash, metadata, created_at, updated_at)
    select ?, pool_id, ?, ?, ?::integer, ?, ?, ?, ?, 1, ?, ?, ?, ?, ? from taken
    on conflict do nothing returning id)
  select allot_assert(exists (select 1 from inserted), 'identifier claim refused') as ok`;
const FREE_ROW = `?, ?, ?, ?::integer`;

/** The three shapes of taking a block: the span goes, it shrinks, or it splits in two. */
const TAKE = {
  whole: writeStatement(`with ${POOL}, taken as (delete from ids_free_ranges where ${SPAN} returning pool_id), ${INSERT}`),
  shrink: writeStatement(
    `with ${POOL}, taken as (update ids_free_ranges set (first_key, last_key, size_key, aligned) = (${FREE_ROW}) where ${SPAN} returning pool_id), ${INSERT}`,
  ),
  split: writeStatement(
    `with ${POOL}, taken as (update ids_free_ranges set (first_key, last_key, size_key, aligned) = (${FREE_ROW}) where ${SPAN} returning pool_id),
     added as (insert into ids_free_ranges (pool_id, band, first_key, last_key, size_key, aligned) select pool_id, 'auto', ${FREE_ROW} from taken), ${INSERT}`,
  ),
};

/** The SQLSTATE of `allot_assert` (migration 004): the statement kept nothing. */
const REFUSED = 'P0001';

const freeRow = (first: bigint, last: bigint) => [keyOf(first), keyOf(last), sizeKeyOf(last - first + 1n), maxAlignedLog2({ first, last })];

/** A new allocation and the one statement that takes it; `write` raises REFUSED when it lost the block. */
export interface OneStatementClaim {
  outcome: AllocationOutcome;
  write: (tx: Tx) => Promise<void>;
}

/** Did `write` lose its block (taken, or the pool changed, between the probe and the write)? */
export const lostTheBlock = (err: unknown) => (err as { code?: string }).code === REFUSED;

/**
 * Decide an automatic allocation of `req` in `pool` (read without its lock): the answer to an
 * idempotent repeat, the claim to write, or null when nothing free was seen (the locked path then
 * decides and words it).
 */
export async function automaticClaim(db: Db, pool: LockedPool, req: AllocationRequest): Promise<AllocationOutcome | OneStatementClaim | null> {
  const block = blockSize(pool.space, req);
  const params = requestParams(req, block, null);
  const { chosen, heldId } = await pickAutomatic(db, pool, block, req.strategy ?? pool.strategy, { owner: req.owner, purpose: req.purpose ?? '' });
  if (heldId !== null) return repeatAnswer(db, pool, heldId, params);
  if (!chosen) return null;
  const { row: span, span: taken } = chosen;
  const row = newAllocationRow(db, pool.id, req, taken, block, params, 'api');
  const rest = [
    ...(taken.first > span.first ? [freeRow(span.first, taken.first - 1n)] : []),
    ...(taken.last < span.last ? [freeRow(taken.last + 1n, span.last)] : []),
  ];
  const statement = rest.length === 0 ? TAKE.whole : rest.length === 1 ? TAKE.shrink : TAKE.split;
  const values = [
    ...[block.toString(), row.last_key, row.updated_at, pool.id, pool.definition],
    ...(rest[0] ?? []),
    ...[pool.id, keyOf(span.first), keyOf(span.last)],
    ...(rest[1] ?? []),
    ...[row.id, row.first_key, row.last_key, row.block_log2, row.owner, row.purpose, row.state, row.expires_at],
    ...[row.source, row.request_hash, row.metadata, row.created_at, row.updated_at],
  ];
  return {
    outcome: { row, created: true },
    write: async (tx) => void (await statement.one(tx, values)),
  };
}
