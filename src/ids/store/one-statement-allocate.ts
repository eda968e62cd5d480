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
//
// The pool's counters stay on its row, although every allocation then holds that row's lock
// through its commit: measured with 48 clients over 3 processes (lowest), the statement ran
// 0.24 ms on average, lock wait included, and 0.13 backends waited for a lock at any moment
// (27.7 with the locked path). The row is not what bounds the rate; keeping counters elsewhere
// would make every reader of them add up deltas for nothing.
import type { Db, Tx } from '../../db/database.js';
import { writeStatement } from '../../db/statement.js';
import { maxAlignedLog2 } from '../core/ranges.js';
import type { Strategy } from '../core/pool-space.js';
import { type Span, keyOf, sizeKeyOf } from '../core/values.js';
import { type AllocationRequest, type AllocationRow, newAllocationRow, pickAutomatic, requestParams } from './allocate.js';
import { holderKey } from './free-ranges.js';
import type { LockedPool } from './pools.js';
import { isAssertRefusal } from '../../db/sql-helpers.js';

const POOL = `pool as (
    update ids_pools set used_count = (used_count::numeric + ?::numeric)::text, allocation_count = allocation_count + ?::integer,
      last_key = ?, generation = generation + 1, updated_at = ?
    where id = ? and definition = ? returning id)`;
const SPAN = `pool_id = ? and band = 'auto' and first_key = ? and last_key = ? and exists (select 1 from pool)`;
const ROW_COLUMNS = [
  'id',
  'first_key',
  'last_key',
  'block_log2',
  'owner',
  'purpose',
  'state',
  'expires_at',
  'source',
  'request_hash',
  'metadata',
  'created_at',
  'updated_at',
] as const;
const INSERT = `inserted as (
    insert into ids_allocations (pool_id, version, ${ROW_COLUMNS.join(', ')})
    select pool_id, 1, a.* from taken cross join unnest(${ROW_COLUMNS.map((c) => (c === 'block_log2' ? '?::integer[]' : '?::text[]')).join(', ')}) as a
    on conflict do nothing returning id)
  select allot_assert((select count(*) from inserted) = ?, 'identifier claim refused') as ok`;
const FREE_ROW = `?, ?, ?, ?::integer`;

/** The three shapes of taking a run of blocks: the span goes, it shrinks, or it splits in two. */
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

const freeRow = (first: bigint, last: bigint) => [keyOf(first), keyOf(last), sizeKeyOf(last - first + 1n), maxAlignedLog2({ first, last })];

/** New allocations and the one statement that takes their blocks; `write` raises (allot_assert) when it lost them. */
export interface OneStatementClaim {
  rows: AllocationRow[];
  write: (tx: Tx) => Promise<void>;
}

/** Did `write` lose its blocks (taken, or the pool changed, between the probe and the write)? */
export const lostTheBlock = isAssertRefusal;

/** What automaticClaims decided for one request. */
export type ClaimDecision =
  /** the owner+purpose holds this allocation already (an idempotent repeat, or a mismatch) */
  | { kind: 'held'; id: string; params: string }
  /** the index of its row in the claim */
  | { kind: 'new'; row: number }
  /** no block seen free for it: the locked path decides (and words the exhaustion) */
  | { kind: 'none' }
  /** the run of blocks ended before it: ask again */
  | { kind: 'later' };

/**
 * Decide automatic allocations of `reqs` (one block size and strategy, distinct owner+purpose) in
 * `pool`, read without its lock, from ONE probe: the first free request gets the block its
 * strategy chooses, each next one the block its strategy would choose next — the aligned block
 * right after it (right before it for `highest`) — as long as the chosen span holds it. That is
 * the sequence the locked path would hand out one by one: nothing below the chosen span can hold
 * a block (`lowest`, `next_after_last`), nothing above it (`highest`). The run is taken by one
 * statement; null when there is nothing to write.
 */
export async function automaticClaims(
  db: Db,
  pool: LockedPool,
  reqs: readonly AllocationRequest[],
  strategy: Strategy,
  block: bigint,
): Promise<{ decisions: ClaimDecision[]; claim: OneStatementClaim | null }> {
  const holders = reqs.map((r) => ({ owner: r.owner, purpose: r.purpose ?? '' }));
  const { chosen, held } = await pickAutomatic(db, pool, block, strategy, holders);
  const blocks: Span[] = [];
  const decisions = reqs.map((req, i): ClaimDecision => {
    const params = requestParams(req, block, null);
    const id = held.get(holderKey(holders[i]!));
    if (id !== undefined) return { kind: 'held', id, params };
    if (!chosen) return { kind: 'none' };
    const previous = blocks[blocks.length - 1];
    const first = !previous ? chosen.span.first : strategy === 'highest' ? previous.first - block : previous.last + 1n;
    if (first < chosen.row.first || first + block - 1n > chosen.row.last) return { kind: 'later' };
    blocks.push({ first, last: first + block - 1n });
    return { kind: 'new', row: blocks.length - 1 };
  });
  if (!chosen || blocks.length === 0) return { decisions, claim: null };
  const rows = decisions.flatMap((d, i) =>
    d.kind === 'new' ? [newAllocationRow(db, pool.id, reqs[i]!, blocks[d.row]!, block, requestParams(reqs[i]!, block, null), 'api')] : [],
  );
  const span = chosen.row;
  // the blocks are neighbours, in order (downwards for highest): the run is one span
  const [a, z] = [blocks[0]!, blocks[blocks.length - 1]!];
  const run = strategy === 'highest' ? { first: z.first, last: a.last } : { first: a.first, last: z.last };
  const rest = [...(run.first > span.first ? [freeRow(span.first, run.first - 1n)] : []), ...(run.last < span.last ? [freeRow(run.last + 1n, span.last)] : [])];
  const statement = rest.length === 0 ? TAKE.whole : rest.length === 1 ? TAKE.shrink : TAKE.split;
  const values = [
    ...[(block * BigInt(rows.length)).toString(), rows.length, rows[rows.length - 1]!.last_key, rows[0]!.updated_at, pool.id, pool.definition],
    ...(rest[0] ?? []),
    ...[pool.id, keyOf(span.first), keyOf(span.last)],
    ...(rest[1] ?? []),
    ...ROW_COLUMNS.map((c) => rows.map((r) => r[c])),
    rows.length,
  ];
  return { decisions, claim: { rows, write: async (tx) => void (await statement.one(tx, values)) } };
}
