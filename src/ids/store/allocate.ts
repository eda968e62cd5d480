// The allocation engine, inside a transaction that holds the pool's lock: choose a block by
// strategy (or check an explicit one), take it out of the free spans, record the allocation;
// release gives the block back and merges it with its free neighbours. Costs are a handful of
// index probes whatever the pool's size and however many values are taken.
import { createHash, randomInt } from 'node:crypto';
import { canonicalJson } from '../../core/canonical-json.js';
import { type DomainError, RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';

import type * as Wire from '../../client/ids-wire.js';
import type { IdsAllocationTable } from '../../db/schema.js';
import { type Selectable, sql } from 'kysely';
import { idsDomainError } from '../core/domain-errors.js';
import { type PoolSpace, type Strategy, blockSize, formatValue, parseRequestedValue, usable } from '../core/pool-space.js';
import { alignedBlockIn, covers, overlaps, randomIn } from '../core/ranges.js';
import { type Span, fromKey, keyOf, log2Exact } from '../core/values.js';
import { type ClosingWrites, placeholders, rawRead, writeStatement, writeTogether } from '../../db/statement.js';
import {
  type AutoProbe,
  type FreeRow,
  type Probe,
  type ProbeAnswers,
  type SpansAround,
  ask,
  autoProbe,
  freeSpanHolding,
  giveBack,
  heldByQuery,
  holderKey,
  takeWrites,
} from './free-ranges.js';
import { type LockedPool, type PoolRef, flushPoolClosing, flushPoolWith } from './pools.js';

export type AllocationRow = Selectable<IdsAllocationTable>;

/** One allocation asked for: a batch item's shape (the pool named; schemas.ts). */
export type AllocationRequest = Wire.BatchItem;

export interface AllocationOutcome {
  row: AllocationRow;
  created: boolean;
}

/**
 * What an idempotent repeat (same pool, owner, purpose) must agree with, kept with the allocation
 * as JSON (`request_hash`): the block size, the explicit value, the strategy, the lease and the
 * metadata (a SHA-256 of its canonical JSON), each as the first request wrote it. A repeat may
 * leave out `value` (it gets what the owner holds); every other parameter must be the same,
 * absent ones included. Allocations recorded before these were kept (no `v`) compare block and value.
 */
interface RequestParams {
  v: 2;
  block: string;
  value: string | null;
  strategy: Strategy | null;
  ttl_seconds: number | null;
  metadata: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Most requests and imported items carry no metadata: hashed once, not once per item. */
const NO_METADATA_HASH = sha256(canonicalJson({}));
const metadataHash = (metadata: Record<string, unknown> | undefined) =>
  metadata === undefined || Object.keys(metadata).length === 0 ? NO_METADATA_HASH : sha256(canonicalJson(metadata));

export function requestParams(req: Pick<AllocationRequest, 'strategy' | 'ttl_seconds' | 'metadata'>, block: bigint, explicit: Span | null): string {
  const params: RequestParams = {
    v: 2,
    block: block.toString(),
    value: explicit ? explicit.first.toString() : null,
    strategy: req.strategy ?? null,
    ttl_seconds: req.ttl_seconds ?? null,
    metadata: metadataHash(req.metadata),
  };
  return JSON.stringify(params);
}

/** The parameters in which a repeat differs from the request that made `existing`. */
function differences(space: PoolSpace, existing: AllocationRow, asked: string): string[] {
  const held = JSON.parse(existing.request_hash) as Partial<RequestParams> & { block: string };
  const now = JSON.parse(asked) as RequestParams;
  const out: string[] = [];
  if (BigInt(now.block) !== 1n << BigInt(existing.block_log2)) out.push(space.kind === 'prefix' ? 'prefix_length' : 'count');
  if (now.value !== null && BigInt(now.value) !== fromKey(existing.first_key)) out.push('value');
  if (held.v !== 2) return out;
  for (const name of ['strategy', 'ttl_seconds', 'metadata'] as const) if (held[name] !== now[name]) out.push(name);
  return out;
}

const random32 = () => randomInt(0, 2 ** 32);
const RANDOM_TRIES = 8;

/**
 * Allocate for one request in a pool already locked by the caller. Idempotent per owner+purpose.
 * An automatic allocation asks its questions in one statement (probeAuto) and writes in one
 * (writeTogether: the free span, the allocation and, with `flush`, the pool's counters), so the
 * pool's lock is held for two round trips and the commit (issue 15: nine before). With `closing`,
 * that write (with the counters: `flush` must be set) is held back for the transaction's last
 * statement. `asked`: the probe's answer, asked already with other pools' (planAutomatic).
 */
export async function allocateInPool(
  tx: Tx,
  pool: LockedPool,
  req: AllocationRequest,
  source = 'api',
  flush = false,
  closing?: ClosingWrites,
  asked?: Picked,
): Promise<AllocationOutcome> {
  const purpose = req.purpose ?? '';
  const block = blockSize(pool.space, req);
  const explicit = req.value === undefined ? null : parseRequestedValue(pool.space, req.value, block);
  const params = requestParams(req, block, explicit);

  let chosen: Choice | null = null;
  let heldId: string | null;
  if (explicit) heldId = (await heldBy(tx, pool.id, req.owner, purpose))?.id ?? null;
  else {
    const holder = { owner: req.owner, purpose };
    const picked = asked ?? (await pickAutomatic(tx, pool, block, req.strategy ?? pool.strategy, [holder]));
    heldId = picked.held.get(holderKey(holder)) ?? null;
    if (heldId === null) chosen = picked.chosen;
  }
  if (heldId !== null) return repeatAnswer(tx, pool, heldId, params);

  if (explicit) chosen = await takeExplicit(tx, pool, explicit);
  if (!chosen) {
    throw idsDomainError('pool_exhausted', { pool: pool.name, size: block.toString() });
  }
  pool.used += block;
  pool.allocationCount += 1;
  if (!explicit) pool.lastKey = keyOf(chosen.span.last);
  pool.dirty = true;

  const row = newAllocationRow(tx, pool.id, req, chosen.span, block, params, source);
  const writes = [
    ...takeWrites(tx, pool.id, chosen.row, chosen.span),
    INSERT_ALLOCATION.compilable(
      tx,
      allocationColumns.map((c) => row[c]),
    ),
  ];
  if (!flush) await writeTogether(tx, writes);
  else if (closing) flushPoolClosing(tx, pool, writes, closing);
  else await flushPoolWith(tx, pool, writes);
  return { row, created: true };
}

/**
 * The answer to a request whose owner+purpose already holds `heldId`: that allocation when the
 * request agrees with the one that made it, else `idempotency_mismatch`.
 */
export async function repeatAnswer(db: Db, pool: PoolRef & { id: number }, heldId: string, params: string): Promise<AllocationOutcome> {
  const existing = await db.db.selectFrom('ids_allocations').selectAll().where('id', '=', heldId).executeTakeFirst();
  // Released since it was seen: the caller's retry finds the owner holding nothing.
  if (!existing) throw new RetryableConflict('allocation released concurrently', () => idsDomainError('changed_concurrently', { resource: 'allocation' }));
  const differs = differences(pool.space, existing, params);
  if (differs.length > 0) {
    throw idsDomainError('idempotency_mismatch', {
      pool: pool.name,
      owner: existing.owner,
      purpose: existing.purpose,
      held: allocationValue(pool, existing),
      allocation_id: existing.id,
      differs,
    });
  }
  return { row: existing, created: false };
}

/** The row of a new allocation of `span` for `req`. */
/** An allocation's columns, in the order of its insert's values (every one: a key missing here does not compile). */
const allocationColumns = Object.keys({
  id: 0,
  pool_id: 0,
  first_key: 0,
  last_key: 0,
  block_log2: 0,
  owner: 0,
  purpose: 0,
  state: 0,
  expires_at: 0,
  version: 0,
  source: 0,
  request_hash: 0,
  metadata: 0,
  created_at: 0,
  updated_at: 0,
} satisfies Record<keyof AllocationRow, 0>) as Array<keyof AllocationRow>;
// every identifier allocation inserts one: written once, not built and compiled per request (issue 31)
const INSERT_ALLOCATION = writeStatement(`insert into ids_allocations (${allocationColumns.join(', ')}) values (${placeholders(allocationColumns.length)})`);

export function newAllocationRow(db: Db, poolId: number, req: AllocationRequest, span: Span, block: bigint, params: string, source: string): AllocationRow {
  const now = db.clock.nowIso();
  return {
    id: newUuid(),
    pool_id: poolId,
    first_key: keyOf(span.first),
    last_key: keyOf(span.last),
    block_log2: log2Exact(block),
    owner: req.owner,
    purpose: req.purpose ?? '',
    state: req.ttl_seconds !== undefined ? 'reserved' : 'allocated',
    expires_at: req.ttl_seconds !== undefined ? new Date(db.clock.nowMs() + req.ttl_seconds * 1000).toISOString() : null,
    version: 1,
    source,
    request_hash: params,
    metadata: JSON.stringify(req.metadata ?? {}),
    created_at: now,
    updated_at: now,
  };
}

/** What this owner holds in the pool for this purpose, if anything. */
async function heldBy(db: Db, poolId: number, owner: string, purpose: string): Promise<AllocationRow | undefined> {
  return (await rawRead(db, heldByQuery<AllocationRow>(db, poolId, [{ owner, purpose }], sql`w.*`)))[0];
}

/** An allocation's value as the client writes it. */
export const allocationValue = (pool: PoolRef, row: AllocationRow) => formatValue(pool.space, fromKey(row.first_key), 1n << BigInt(row.block_log2));

export interface Choice {
  row: FreeRow;
  span: Span;
}

async function takeExplicit(tx: Tx, pool: LockedPool, span: Span): Promise<Choice> {
  for (const band of ['auto', 'static'] as const) {
    const row = await freeSpanHolding(tx, pool.id, band, span.first);
    if (row && row.last >= span.last) return { row, span };
  }
  throw await whyNotFree(tx, pool, span);
}

/** The error for an explicit value that is not free: outside, excluded, or whose it is. */
export async function whyNotFree(db: Db, pool: LockedPool, span: Span): Promise<DomainError> {
  const value = formatValue(pool.space, span.first, span.last - span.first + 1n);
  if (!covers(pool.space.ranges, span)) return idsDomainError('value_outside_pool', { pool: pool.name, value });
  if (overlaps(pool.space.excluded, span) || !covers(usable(pool.space), span)) return idsDomainError('value_excluded', { pool: pool.name, value });
  const holder = await allocationOverlapping(db, pool.id, span);
  if (holder) return idsDomainError('value_in_use', { pool: pool.name, value, allocation_id: holder.id, owner: holder.owner, purpose: holder.purpose });
  return idsDomainError('value_crosses_static_band', { pool: pool.name, value });
}

async function allocationOverlapping(db: Db, poolId: number, span: Span): Promise<AllocationRow | null> {
  const before = await db.db
    .selectFrom('ids_allocations')
    .selectAll()
    .where('pool_id', '=', poolId)
    .where('first_key', '<=', keyOf(span.last))
    .orderBy('first_key', 'desc')
    .limit(1)
    .executeTakeFirst();
  return before && fromKey(before.last_key) >= span.first ? before : null;
}

/**
 * The block an automatic allocation takes, by strategy, from the answers of one probeAuto
 * statement: every question the strategy may ask (the fallbacks included) is asked at once, with
 * what each of `holders` already holds in the pool.
 */
export async function pickAutomatic(
  db: Db,
  pool: LockedPool,
  block: bigint,
  strategy: Strategy,
  holders: ReadonlyArray<{ owner: string; purpose: string }>,
): Promise<Picked> {
  const plan = planAutomatic(db, pool, block, strategy, holders);
  return plan.pick(await ask(db, plan.probe));
}

/** The block chosen (null: none free), and what the holders hold already (owner+purpose → id). */
export interface Picked {
  chosen: Choice | null;
  held: Map<string, string>;
}

/** pickAutomatic's question, and how its answers choose: several pools' may be asked as one (probeTogether). */
export interface AutomaticPlan {
  probe: AutoProbe;
  pick(answers: ProbeAnswers): Picked;
}

export function planAutomatic(
  db: Db,
  pool: LockedPool,
  block: bigint,
  strategy: Strategy,
  holders: ReadonlyArray<{ owner: string; purpose: string }>,
): AutomaticPlan {
  const k = log2Exact(block);
  const probes: Probe[] = [];
  /**
   * The probes of "the first block at or after `from`": in the span holding `from`, or in a later
   * one. From 0 (lowest, a wrap-around) no span starts before it: one probe, the first span that
   * can hold the block.
   */
  const fitFrom = (from: bigint) => {
    const at = probes.length;
    if (from === 0n) {
      probes.push(lowestFit(k));
      return (answers: Array<FreeRow | null>): Choice | null => firstBlockIn(answers[at], block);
    }
    probes.push({ kind: 'holding', at: from }, { kind: 'from', from: from + 1n, k });
    return (answers: Array<FreeRow | null>): Choice | null => firstBlockIn(answers[at], block, from) ?? firstBlockIn(answers[at + 1], block);
  };
  let choose: (answers: ProbeAnswers) => Choice | null;
  let around: bigint[] = [];
  if (strategy === 'lowest') {
    const lowest = fitFrom(0n);
    choose = ({ answers }) => lowest(answers);
  } else if (strategy === 'highest') {
    probes.push({ kind: 'last', k });
    choose = ({ answers: [row] }) => {
      if (!row) return null;
      const start = alignDown(row.last - block + 1n, block);
      return start >= row.first ? { row, span: { first: start, last: start + block - 1n } } : null;
    };
  } else if (strategy === 'next_after_last') {
    const from = pool.lastKey === null ? 0n : fromKey(pool.lastKey) + 1n;
    const after = fitFrom(from);
    const wrapped = fitFrom(0n);
    choose = ({ answers }) => after(answers) ?? wrapped(answers);
  } else {
    const random = randomDraws(pool, block, 1);
    probes.push(...random.lowest);
    around = random.points;
    choose = ({ answers, spansAround }) => random.choose(spansAround, answers)[0] ?? null;
  }
  return { probe: autoProbe(db, pool, probes, holders, around), pick: (answers) => ({ chosen: choose(answers), held: answers.held }) };
}

const alignDown = (v: bigint, block: bigint) => v - (v % block);

/** The probe of the lowest free span that can hold an aligned block of 2^k. */
const lowestFit = (k: number): Probe => ({ kind: 'from', from: 0n, k });

/** The first aligned block of `block` values in `row` at or after `from`, if it holds one. */
function firstBlockIn(row: FreeRow | null | undefined, block: bigint, from?: bigint): Choice | null {
  const start = row ? alignedBlockIn(row, block, from) : null;
  return row && start !== null ? { row, span: { first: start, last: start + block - 1n } } : null;
}

/**
 * Random draws for `n` requests of one block size. `points`: each request's RANDOM_TRIES draws and
 * one more point, whose free spans around (probeAuto's `around`) `choose` reads together with the
 * answers of `lowest` (probes of the lowest free block, the last fallback). Each request keeps the
 * first of its draws that lands on a free aligned block no earlier request of the batch chose
 * (uniform over free blocks); when all miss (a nearly full pool), the first such block after its
 * last point, or the lowest. null: nothing left for it in what was probed.
 */
export function randomDraws(pool: LockedPool, block: bigint, n: number): RandomDraws {
  const per = RANDOM_TRIES + 1;
  const points = Array.from({ length: n * per }, (_, i) => (i % per < RANDOM_TRIES ? alignDown(randomPoint(pool), block) : randomPoint(pool)));
  const lowest: Probe[] = [lowestFit(log2Exact(block))];
  const choose = (around: SpansAround[], [low]: Array<FreeRow | null>) => {
    const chosen = new Set<bigint>();
    /** the first aligned block at or after `from` in `row` that no earlier request chose */
    const firstIn = (row: FreeRow | null | undefined, from: bigint): Choice | null => {
      let start = row ? alignedBlockIn(row, block, from) : null;
      while (row && start !== null && chosen.has(start)) start = alignedBlockIn(row, block, start + block);
      return row && start !== null ? { row, span: { first: start, last: start + block - 1n } } : null;
    };
    return Array.from({ length: n }, (_, r) => {
      let pick: Choice | null = null;
      for (let i = r * per; i < r * per + RANDOM_TRIES && !pick; i++) {
        const v = points[i]!;
        const holding = around[i]!.holding;
        if (holding && v + block - 1n <= holding.last && !chosen.has(v)) pick = { row: holding, span: { first: v, last: v + block - 1n } };
      }
      const last = r * per + RANDOM_TRIES;
      const after = points[last]!;
      pick ??= firstIn(around[last]!.holding, after) ?? firstIn(around[last]!.next, after) ?? firstIn(low, 0n);
      if (pick) chosen.add(pick.span.first);
      return pick;
    });
  };
  return { points, lowest, choose };
}

export interface RandomDraws {
  /** the points whose free spans around `choose` reads */
  points: bigint[];
  /** the probes of the lowest free block, whose answers `choose` reads */
  lowest: Probe[];
  choose(around: SpansAround[], lowest: Array<FreeRow | null>): Array<Choice | null>;
}

function randomPoint(pool: LockedPool): bigint {
  const ranges = pool.space.ranges;
  let total = 0n;
  for (const r of ranges) total += r.last - r.first + 1n;
  let at = randomIn(0n, total - 1n, random32);
  for (const r of ranges) {
    const size = r.last - r.first + 1n;
    if (at < size) return r.first + at;
    at -= size;
  }
  return ranges[0]!.first;
}

/** Give an allocation's block back to its (locked) pool and delete the allocation. */
export async function releaseInPool(tx: Tx, pool: LockedPool, row: AllocationRow): Promise<void> {
  await tx.db.deleteFrom('ids_allocations').where('id', '=', row.id).execute();
  const span = { first: fromKey(row.first_key), last: fromKey(row.last_key) };
  await giveBack(tx, pool.id, span, pool.space.staticBand);
  pool.used -= span.last - span.first + 1n;
  pool.allocationCount -= 1;
  pool.dirty = true;
}

/**
 * Release the reservations of a locked pool whose lease has run out, in value order: the order
 * readers wait for them in (allocations.ts afterTheirWriters), so the two cannot deadlock.
 */
export async function expireLeasesInPool(tx: Tx, pool: LockedPool): Promise<number> {
  if (!pool.hasExpiredLeases) return 0;
  pool.hasExpiredLeases = false;
  const expired = await tx.db
    .selectFrom('ids_allocations')
    .selectAll()
    .where('pool_id', '=', pool.id)
    .where('expires_at', '<=', tx.clock.nowIso())
    .orderBy('first_key')
    .execute();
  for (const row of expired) await releaseInPool(tx, pool, row);
  return expired.length;
}
