// The free spans of a pool, one row each (band, first, last, size, largest aligned block). Every
// question a strategy asks is one or a few probes of a B-tree index, never a scan of what is
// allocated: "the span at or after X", "the span holding X", "the first span that can hold an
// aligned block of 2^k" (one LIMIT 1 probe per k' ≥ k on the (aligned, first) index).
import { sql } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import { rawRead } from '../../db/statement.js';

import { type Band, type BandedSpan, maxAlignedLog2, splitByBand } from '../core/ranges.js';
import { type Span, fromKey, keyOf, sizeKeyOf } from '../core/values.js';

export interface FreeRow extends BandedSpan {}

interface RawFree {
  band: string;
  first_key: string;
  last_key: string;
}

const toFree = (r: RawFree): FreeRow => ({ band: r.band as Band, first: fromKey(r.first_key), last: fromKey(r.last_key) });

const rowOf = (poolId: number, s: BandedSpan) => ({
  pool_id: poolId,
  band: s.band,
  first_key: keyOf(s.first),
  last_key: keyOf(s.last),
  size_key: sizeKeyOf(s.last - s.first + 1n),
  aligned: maxAlignedLog2(s),
});

export async function insertFree(tx: Tx, poolId: number, spans: readonly BandedSpan[]): Promise<void> {
  // 6 columns a row; SQLite allows 32766 bound parameters per statement.
  for (let i = 0; i < spans.length; i += 1000) {
    await tx.db
      .insertInto('ids_free_ranges')
      .values(spans.slice(i, i + 1000).map((s) => rowOf(poolId, s)))
      .execute();
  }
}

async function deleteFree(tx: Tx, poolId: number, row: FreeRow): Promise<void> {
  await tx.db.deleteFrom('ids_free_ranges').where('pool_id', '=', poolId).where('band', '=', row.band).where('first_key', '=', keyOf(row.first)).execute();
}

/** Delete many free rows at once (bulk imports touch one row per imported value). */
async function deleteFreeMany(tx: Tx, poolId: number, rows: readonly FreeRow[]): Promise<void> {
  for (const band of ['auto', 'static'] as const) {
    const keys = rows.filter((r) => r.band === band).map((r) => keyOf(r.first));
    for (let i = 0; i < keys.length; i += 1000) {
      await tx.db
        .deleteFrom('ids_free_ranges')
        .where('pool_id', '=', poolId)
        .where('band', '=', band)
        .where('first_key', 'in', keys.slice(i, i + 1000))
        .execute();
    }
  }
}

const cols = ['band', 'first_key', 'last_key'] as const;

/** The free span of `band` holding value `v`, if any. */
export async function freeSpanHolding(db: Db, poolId: number, band: Band, v: bigint): Promise<FreeRow | null> {
  const r = await db.db
    .selectFrom('ids_free_ranges')
    .select(cols)
    .where('pool_id', '=', poolId)
    .where('band', '=', band)
    .where('first_key', '<=', keyOf(v))
    .orderBy('first_key', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!r) return null;
  const row = toFree(r);
  return row.last >= v ? row : null;
}

/** The first free span of `band` that starts at or after `from` and holds a 2^k aligned block. */
export async function firstSpanFrom(db: Db, poolId: number, band: Band, from: bigint, k: number, maxK: number): Promise<FreeRow | null> {
  if (k === 0) {
    const r = await db.db
      .selectFrom('ids_free_ranges')
      .select(cols)
      .where('pool_id', '=', poolId)
      .where('band', '=', band)
      .where('first_key', '>=', keyOf(from))
      .orderBy('first_key')
      .limit(1)
      .executeTakeFirst();
    return r ? toFree(r) : null;
  }
  // One index probe per alignment class that can hold the block; the lowest start wins.
  const probes = [];
  for (let a = k; a <= maxK; a++) {
    probes.push(sql<RawFree>`select * from (select band, first_key, last_key from ids_free_ranges
      where pool_id = ${poolId} and band = ${band} and aligned = ${a} and first_key >= ${keyOf(from)}
      order by first_key limit 1) as p${sql.raw(String(a))}`);
  }
  if (probes.length === 0) return null;
  const rows = await rawRead(db, sql<RawFree>`${sql.join(probes, sql` union all `)}`);
  let best: FreeRow | null = null;
  for (const r of rows) {
    const row = toFree(r);
    if (!best || row.first < best.first) best = row;
  }
  return best;
}

/** The highest free span of `band` that holds a 2^k aligned block (the `highest` strategy). */
export async function lastSpan(db: Db, poolId: number, band: Band, k: number, maxK: number): Promise<FreeRow | null> {
  const probes = [];
  for (let a = k; a <= Math.max(k, maxK); a++) {
    probes.push(sql<RawFree>`select * from (select band, first_key, last_key from ids_free_ranges
      where pool_id = ${poolId} and band = ${band} and aligned = ${a}
      order by first_key desc limit 1) as p${sql.raw(String(a))}`);
  }
  const rows =
    k === 0
      ? await db.db
          .selectFrom('ids_free_ranges')
          .select(cols)
          .where('pool_id', '=', poolId)
          .where('band', '=', band)
          .orderBy('first_key', 'desc')
          .limit(1)
          .execute()
      : await rawRead(db, sql<RawFree>`${sql.join(probes, sql` union all `)}`);
  let best: FreeRow | null = null;
  for (const r of rows) {
    const row = toFree(r);
    if (!best || row.first > best.first) best = row;
  }
  return best;
}

/** Free spans in order, for listings (`after` is an exclusive cursor on the first value). */
export async function listFree(db: Db, poolId: number, band: Band | null, after: bigint | null, limit: number): Promise<FreeRow[]> {
  let q = db.db.selectFrom('ids_free_ranges').select(cols).where('pool_id', '=', poolId);
  if (band) q = q.where('band', '=', band);
  if (after !== null) q = q.where('first_key', '>', keyOf(after));
  const rows = await q.orderBy('first_key').limit(limit).execute();
  return rows.map(toFree);
}

async function allFree(db: Db, poolId: number): Promise<FreeRow[]> {
  const rows = await db.db.selectFrom('ids_free_ranges').select(cols).where('pool_id', '=', poolId).orderBy('first_key').execute();
  return rows.map(toFree);
}

/**
 * For each span (in ascending order, not overlapping), the free span that holds all of it, or
 * null. `walkAll` reads every free span of the pool once (what a large import costs: the pool's
 * fragmentation); otherwise each span is one or two index probes.
 */
export async function freeSpansHolding(db: Db, poolId: number, spans: readonly Span[], walkAll: boolean): Promise<Array<FreeRow | null>> {
  const out: Array<FreeRow | null> = [];
  if (walkAll) {
    const free = await allFree(db, poolId);
    let i = 0;
    for (const s of spans) {
      while (i < free.length && free[i]!.last < s.first) i++;
      const row = free[i];
      out.push(row && row.first <= s.first && s.last <= row.last ? row : null);
    }
    return out;
  }
  for (const s of spans) {
    let found: FreeRow | null = null;
    for (const band of ['auto', 'static'] as const) {
      const row = await freeSpanHolding(db, poolId, band, s.first);
      if (row && row.last >= s.last) found = row;
    }
    out.push(found);
  }
  return out;
}

/** The size of the largest free span of a band (what a contiguous request could still get). */
export async function largestFree(db: Db, poolId: number, band: Band): Promise<bigint> {
  const r = await db.db
    .selectFrom('ids_free_ranges')
    .select('size_key')
    .where('pool_id', '=', poolId)
    .where('band', '=', band)
    .orderBy('size_key', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r ? fromKey(r.size_key) : 0n;
}

/** Take `span` out of the free span `row` that holds it: delete the row, keep what is left. */
export async function takeFrom(tx: Tx, poolId: number, row: FreeRow, span: Span): Promise<void> {
  await deleteFree(tx, poolId, row);
  const rest: BandedSpan[] = [];
  if (span.first > row.first) rest.push({ band: row.band, first: row.first, last: span.first - 1n });
  if (span.last < row.last) rest.push({ band: row.band, first: span.last + 1n, last: row.last });
  if (rest.length) await insertFree(tx, poolId, rest);
}

/** Give `span` back: cut at the static band's edges, merge each piece with its free neighbours. */
export async function giveBack(tx: Tx, poolId: number, span: Span, staticBand: readonly Span[]): Promise<void> {
  for (const piece of splitByBand(span, staticBand)) {
    let { first, last } = piece;
    if (first > 0n) {
      const left = await freeSpanHolding(tx, poolId, piece.band, first - 1n);
      if (left) {
        await deleteFree(tx, poolId, left);
        first = left.first;
      }
    }
    const right = await tx.db
      .selectFrom('ids_free_ranges')
      .select(cols)
      .where('pool_id', '=', poolId)
      .where('band', '=', piece.band)
      .where('first_key', '=', keyOf(last + 1n))
      .executeTakeFirst();
    if (right) {
      const r = toFree(right);
      await deleteFree(tx, poolId, r);
      last = r.last;
    }
    await insertFree(tx, poolId, [{ band: piece.band, first, last }]);
  }
}

/**
 * Take many blocks at once (an import), each out of the free span that holds it: every touched
 * span is replaced by what is left of it.
 */
export async function takeMany(tx: Tx, poolId: number, blocks: ReadonlyArray<{ row: FreeRow; span: Span }>): Promise<void> {
  const byRow = new Map<string, { row: FreeRow; taken: Span[] }>();
  for (const { row, span } of blocks) {
    const k = `${row.band}/${row.first}`;
    const entry = byRow.get(k) ?? { row, taken: [] };
    entry.taken.push(span);
    byRow.set(k, entry);
  }
  const rest: BandedSpan[] = [];
  await deleteFreeMany(
    tx,
    poolId,
    [...byRow.values()].map((e) => e.row),
  );
  for (const { row, taken } of byRow.values()) {
    let from = row.first;
    for (const t of taken.sort((a, b) => (a.first < b.first ? -1 : 1))) {
      if (t.first > from) rest.push({ band: row.band, first: from, last: t.first - 1n });
      from = t.last + 1n;
    }
    if (from <= row.last) rest.push({ band: row.band, first: from, last: row.last });
  }
  await insertFree(tx, poolId, rest);
}

export async function replaceAllFree(tx: Tx, poolId: number, spans: readonly BandedSpan[]): Promise<void> {
  await tx.db.deleteFrom('ids_free_ranges').where('pool_id', '=', poolId).execute();
  await insertFree(tx, poolId, spans);
}
