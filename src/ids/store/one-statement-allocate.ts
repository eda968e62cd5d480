// Automatic allocations on PostgreSQL whose pool lock is held only while SQL runs (issues 15, 32).
//
// The locked path (allocate.ts) holds the pool's row lock across BEGIN/lock → probe → write →
// COMMIT: three round trips and as many turns of a busy event loop. Measured with 48 clients over
// 3 processes: 0.16 ms of SQL per write and 0.07 ms per probe, but ~235 ms per allocation waiting
// for the lock (docs/performance.md). Here a batch of requests is taken by ONE statement in its own
// implicit transaction, which locks the pool's row first (so it queues behind the locked path's
// `FOR UPDATE` and never the other way round: no deadlock), only while the pool's definition is the
// one the caller read, and moves its counters and generation by what it took:
//
// - lowest, highest, next_after_last (takeAutomatic; also a reservation's pools on its fast path,
//   each pool a call in one statement, services/allocations.ts takeAutomaticInTx, issue 31):
//   `allot_take_auto` (migration 015) chooses
//   the blocks AFTER the lock was granted, on a snapshot that sees every earlier holder's commit,
//   so it never loses them. Chosen in JS from a probe read without the lock and taken by a
//   compare-and-set on the probed span (until 2026-11-29), every process's batch chose the same
//   run and all but one lost: at 4 094 values, 0.08 refused statements per allocation out of 0.17,
//   each loser reading the pool, probing and writing again (docs/performance.md, "Hot pools").
// - random (randomClaims): the draws are made in JS from one probe and each probed span is a
//   compare-and-set of its own (RANDOM_TAKE): draws fall apart, so few are lost, and a lost one is
//   asked again.
//
// The unique indexes judge the allocations too; one they refuse (a concurrent owner+purpose)
// refuses the whole statement (`allot_assert`) and nothing is kept. The caller then asks again
// (the repeat is then answered as the idempotent one, or as `ids.idempotency_mismatch`), a bounded
// number of times, then takes the locked path.
//
// The pool's counters stay on its row, although every batch then holds that row's lock through
// its commit: measured with 48 clients over 3 processes (lowest), the statement ran 0.24 ms on
// average, lock wait included, and 0.13 backends waited for a lock at any moment (27.7 with the
// locked path). The row is not what bounds the rate; keeping counters elsewhere would make every
// reader of them add up deltas for nothing.
import type { Db, Tx } from '../../db/database.js';
import { writeStatement } from '../../db/statement.js';
import { maxAlignedLog2 } from '../core/ranges.js';
import type { Strategy } from '../core/pool-space.js';
import { type Span, keyOf, log2Exact, sizeKeyOf } from '../core/values.js';
import { type AllocationRequest, type AllocationRow, type Choice, newAllocationRow, randomDraws, requestParams } from './allocate.js';
import { holderKey, probeAuto } from './free-ranges.js';
import type { LockedPool } from './pools.js';
import { isAssertRefusal } from '../../db/sql-helpers.js';

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
const freeRow = (first: bigint, last: bigint) => [keyOf(first), keyOf(last), sizeKeyOf(last - first + 1n), maxAlignedLog2({ first, last })];

/**
 * New allocations (random draws) and the one statement that takes their blocks. `write` answers
 * the ids of those it took, those whose spans were still as probed (RANDOM_TAKE); it raises
 * (allot_assert) when a conflict refused them all.
 */
export interface OneStatementClaim {
  rows: AllocationRow[];
  write: (tx: Tx) => Promise<Set<string>>;
}

/** Did a claim's statement refuse (the pool changed since it was read, or a unique index refused an allocation)? Then it kept nothing. */
export const lostTheBlock = isAssertRefusal;

/** What random draws decided for one request (randomClaims). */
export type ClaimDecision =
  /** the owner+purpose holds this allocation already (an idempotent repeat, or a mismatch) */
  | { kind: 'held'; id: string; params: string }
  /** the index of its row in the claim */
  | { kind: 'new'; row: number }
  /** no block seen free for it: the locked path decides (and words the exhaustion) */
  | { kind: 'none' }
  /** the run of blocks ended before it: ask again */
  | { kind: 'later' };

/** What takeAutomatic did for one request. */
export type Taken =
  /** the owner+purpose holds this allocation already (an idempotent repeat, or a mismatch) */
  | { kind: 'held'; id: string; params: string }
  /** its new allocation */
  | { kind: 'new'; row: AllocationRow }
  /** no block was free for it under the pool's lock (leases past due released): the pool is exhausted for its size */
  | { kind: 'none' };

// one call of allot_take_auto per pool, in the order of the pools' rows (p.n), each on its slice
// [lo:hi] of the requests' arrays: a LATERAL call runs once per row of the pools, in turn
const TAKE_AUTO = writeStatement<{ o_call: number; o_index: number; o_id: string; o_first: string | null; o_last: string | null; o_held: boolean }>(
  `select p.n::integer as o_call, t.o_index, t.o_id, t.o_first, t.o_last, t.o_held
   from unnest(?::integer[], ?::text[], ?::text[], ?::text[], ?::text[], ?::integer[], ?::integer[], ?::integer[], ?::integer[])
     with ordinality as p(pool, definition, pool_strategy, project, strategy, k, max_k, lo, hi, n)
   cross join lateral allot_take_auto(p.pool, p.definition, p.pool_strategy, p.project, p.strategy, p.k, p.max_k,
     (?::text[])[p.lo:p.hi], (?::text[])[p.lo:p.hi], (?::text[])[p.lo:p.hi], (?::text[])[p.lo:p.hi], (?::text[])[p.lo:p.hi],
     (?::text[])[p.lo:p.hi], (?::text[])[p.lo:p.hi], (?::text[])[p.lo:p.hi], ?) as t
   order by p.n, t.o_index`,
);

/** The automatic allocations of one pool that takeAutomatic takes: one block size and strategy, distinct owner+purpose. */
export interface AutomaticTake {
  /** the pool as read, maybe without its lock and earlier */
  pool: LockedPool;
  reqs: readonly AllocationRequest[];
  strategy: Exclude<Strategy, 'random'>;
  block: bigint;
}

/**
 * Automatic allocations of each take's requests (lowest, highest or next_after_last) in its pool,
 * read without its lock, by ONE statement: `allot_take_auto` (migration 015) once per pool, in the
 * order given — pool-id order, the lock order every writer keeps, when there are several (a
 * reservation's VLAN and address). Each call locks its pool's row and then chooses with what every
 * earlier holder of the lock committed: the first request gets the block its strategy chooses, each
 * next one the block it would choose next, as the locked path would hand them out one by one. It
 * cannot lose them to another process; it refuses (allot_assert) only when a pool is no longer as
 * its take says (its definition, default strategy or project), holds leases past due (the locked
 * path releases them), or a unique index refused an allocation. Answers per take, per request.
 */
export async function takeAutomatic(tx: Tx, takes: readonly AutomaticTake[], source: string): Promise<Taken[][]> {
  const params = takes.map(({ reqs, block }) => reqs.map((req) => requestParams(req, block, null)));
  // the rows but for their values, which the statement chooses
  const rows = takes.map(({ pool, reqs, block }, t) =>
    reqs.map((req, i) => newAllocationRow(tx, pool.id, req, { first: 0n, last: 0n }, block, params[t]![i]!, source)),
  );
  const all = rows.flat();
  const column = (c: keyof AllocationRow) => all.map((r) => r[c]);
  let lo = 1;
  const slices = takes.map(({ reqs }) => [lo, (lo += reqs.length) - 1] as const);
  const answers = await TAKE_AUTO.all(tx, [
    takes.map((t) => t.pool.id),
    takes.map((t) => t.pool.definition),
    takes.map((t) => t.pool.strategy),
    takes.map((t) => t.pool.project),
    takes.map((t) => t.strategy),
    takes.map((t) => log2Exact(t.block)),
    takes.map((t) => t.pool.maxK),
    slices.map(([first]) => first),
    slices.map(([, last]) => last),
    ...(['owner', 'purpose', 'id', 'state', 'expires_at', 'source', 'request_hash', 'metadata'] as const).map(column),
    all[0]!.created_at,
  ]);
  const taken: Taken[][] = takes.map(({ reqs }) => reqs.map(() => ({ kind: 'none' })));
  for (const a of answers) {
    const t = a.o_call - 1;
    const i = a.o_index - 1;
    taken[t]![i] = a.o_held
      ? { kind: 'held', id: a.o_id, params: params[t]![i]! }
      : { kind: 'new', row: { ...rows[t]![i]!, first_key: a.o_first!, last_key: a.o_last! } };
  }
  return taken;
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
