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
import { type AllocationRequest, type AllocationRow, type Choice, newAllocationRow, pickAutomatic, randomDraws, requestParams } from './allocate.js';
import { holderKey, probeAuto } from './free-ranges.js';
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

/**
 * New allocations and the one statement that takes their blocks. `write` answers the ids of those
 * it took: all (a run of neighbours, TAKE) or those whose spans were still as probed (random,
 * RANDOM_TAKE); it raises (allot_assert) when it lost them all to a conflict.
 */
export interface OneStatementClaim {
  rows: AllocationRow[];
  write: (tx: Tx) => Promise<Set<string>>;
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
  const write = async (tx: Tx) => {
    await statement.one(tx, values);
    return new Set(rows.map((r) => r.id));
  };
  return { decisions, claim: { rows, write } };
}

/**
 * Random draws of a batch, taken by ONE statement in which each probed span is a compare-and-set
 * of its own: the spans still as probed lose their blocks (the span shrinks to its first remainder
 * or goes, the other remainders are inserted), a span another process changed meanwhile keeps its
 * own and its requests are asked again. Draws of three processes fall in one span together often
 * (a fresh pool is ONE span), and all or nothing per statement made one of them lose every draw
 * for another's one. The pool's row is locked first, as in TAKE, and its counters move by what was
 * inserted; an allocation that conflicts (the same owner+purpose) refuses the whole statement.
 */
const RANDOM_TAKE = writeStatement(`with pool as (select id from ids_pools where id = ? and definition = ? for update),
  shrunk as (
    update ids_free_ranges f set first_key = u.new_first, last_key = u.new_last, size_key = u.size_key, aligned = u.aligned
    from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::integer[]) as u(first_key, last_key, new_first, new_last, size_key, aligned)
    where f.pool_id = (select id from pool) and f.band = 'auto' and f.first_key = u.first_key and f.last_key = u.last_key
    returning u.first_key as span),
  gone as (
    delete from ids_free_ranges f using unnest(?::text[], ?::text[]) as g(first_key, last_key)
    where f.pool_id = (select id from pool) and f.band = 'auto' and f.first_key = g.first_key and f.last_key = g.last_key
    returning g.first_key as span),
  taken as (select span from shrunk union all select span from gone),
  added as (
    insert into ids_free_ranges (pool_id, band, first_key, last_key, size_key, aligned)
    select (select id from pool), 'auto', r.first_key, r.last_key, r.size_key, r.aligned
    from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::integer[]) as r(span, first_key, last_key, size_key, aligned)
    where r.span in (select span from taken)),
  wanted as (
    select a.* from unnest(?::text[], ${ROW_COLUMNS.map((c) => (c === 'block_log2' ? '?::integer[]' : '?::text[]')).join(', ')}) as a(span, ${ROW_COLUMNS.join(', ')})
    where a.span in (select span from taken)),
  inserted as (
    insert into ids_allocations (pool_id, version, ${ROW_COLUMNS.join(', ')})
    select (select id from pool), 1, ${ROW_COLUMNS.map((c) => `w.${c}`).join(', ')} from wanted w
    on conflict do nothing returning id, last_key),
  counted as (
    update ids_pools set used_count = (used_count::numeric + ?::numeric * (select count(*) from inserted))::text,
      allocation_count = allocation_count + (select count(*) from inserted)::integer,
      last_key = (select max(last_key) from inserted), generation = generation + 1, updated_at = ?
    where id = (select id from pool) and exists (select 1 from inserted))
  select coalesce((select array_agg(id) from inserted), '{}') as ids,
    allot_assert((select count(*) from inserted) = (select count(*) from wanted), 'identifier claim refused') as ok`);

/**
 * Decide random automatic allocations of `reqs` (one block size, distinct owner+purpose) in
 * `pool`, read without its lock, from ONE probe: each its own draws (randomDraws), no two the same
 * block; the statement that takes them (RANDOM_TAKE), null when there is nothing to write.
 */
export async function randomClaims(
  db: Db,
  pool: LockedPool,
  reqs: readonly AllocationRequest[],
  block: bigint,
): Promise<{ decisions: ClaimDecision[]; claim: OneStatementClaim | null }> {
  const holders = reqs.map((r) => ({ owner: r.owner, purpose: r.purpose ?? '' }));
  const draws = randomDraws(pool, block, reqs.length);
  const { answers, held, spansAround } = await probeAuto(db, pool, draws.lowest, holders, draws.points);
  // a block fits somewhere (the lowest probe is alignment-aware); when it does, a request left
  // without one only lost it to the batch's earlier requests and asks again
  const anyFree = answers[0] != null;
  const picks = draws.choose(spansAround, answers);
  const rows: AllocationRow[] = [];
  const taking: Choice[] = [];
  const decisions = reqs.map((req, i): ClaimDecision => {
    const params = requestParams(req, block, null);
    const id = held.get(holderKey(holders[i]!));
    if (id !== undefined) return { kind: 'held', id, params };
    const pick = picks[i];
    if (!pick) return anyFree ? { kind: 'later' } : { kind: 'none' };
    rows.push(newAllocationRow(db, pool.id, req, pick.span, block, params, 'api'));
    taking.push(pick);
    return { kind: 'new', row: rows.length - 1 };
  });
  if (rows.length === 0) return { decisions, claim: null };
  // each touched span, and what is left of it once its blocks are out
  const spans = new Map<string, { row: Choice['row']; blocks: Span[] }>();
  for (const { row, span } of taking) {
    const key = keyOf(row.first);
    const entry = spans.get(key) ?? { row, blocks: [] };
    entry.blocks.push(span);
    spans.set(key, entry);
  }
  const shrunk: string[][] = [[], [], [], [], []];
  const aligned: number[] = [];
  const gone: string[][] = [[], []];
  const added: string[][] = [[], [], [], []];
  const addedAligned: number[] = [];
  for (const [key, { row, blocks }] of spans) {
    const rest: Array<[bigint, bigint]> = [];
    let from = row.first;
    for (const b of blocks.sort((x, y) => (x.first < y.first ? -1 : 1))) {
      if (b.first > from) rest.push([from, b.first - 1n]);
      from = b.last + 1n;
    }
    if (from <= row.last) rest.push([from, row.last]);
    const [first, ...others] = rest;
    if (!first) {
      gone[0]!.push(key);
      gone[1]!.push(keyOf(row.last));
      continue;
    }
    const [nf, nl, size, al] = freeRow(first[0], first[1]) as [string, string, string, number];
    for (const [i, v] of [key, keyOf(row.last), nf, nl, size].entries()) shrunk[i]!.push(v);
    aligned.push(al);
    for (const [a, z] of others) {
      const [f, l, sz, k] = freeRow(a, z) as [string, string, string, number];
      for (const [i, v] of [key, f, l, sz].entries()) added[i]!.push(v);
      addedAligned.push(k);
    }
  }
  const values = [
    pool.id,
    pool.definition,
    ...shrunk,
    aligned,
    ...gone,
    ...added,
    addedAligned,
    taking.map((t) => keyOf(t.row.first)),
    ...ROW_COLUMNS.map((c) => rows.map((r) => r[c])),
    block.toString(),
    rows[0]!.updated_at,
  ];
  const write = async (tx: Tx) => {
    const result = (await RANDOM_TAKE.one(tx, values)) as { ids: string[] } | undefined;
    return new Set(result?.ids ?? []);
  };
  return { decisions, claim: { rows, write } };
}
