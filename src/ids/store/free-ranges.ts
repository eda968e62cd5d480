// The free spans of a pool, one row each (band, first, last, size, largest aligned block). Every
// question a strategy asks is one or a few walks of a B-tree index (walkIndex: the same plan
// whatever PostgreSQL's statistics say), never a scan of what is allocated: "the span at or after
// X", "the span holding X", "the first span that can hold an aligned block of 2^k" (one LIMIT 1
// probe per k' ≥ k on the (aligned, first) index).
import { type Compilable, type RawBuilder, sql } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import { plainArray, textArray, walkIndex } from '../../db/sql-helpers.js';
import { rawRead, writeStatement } from '../../db/statement.js';

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

/** PostgreSQL: free spans as one array per column (see plainArray): one statement whatever their number. */
const INSERT_FREE_PG = writeStatement(
  `insert into ids_free_ranges (pool_id, band, first_key, last_key, size_key, aligned)
   select ?::integer, * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::integer[])`,
);

export async function insertFree(tx: Tx, poolId: number, spans: readonly BandedSpan[]): Promise<void> {
  if (tx.dialect === 'postgres') {
    if (spans.length === 0) return;
    const bands: string[] = [];
    const firsts: string[] = [];
    const lasts: string[] = [];
    const sizes: string[] = [];
    const aligned: number[] = [];
    for (const s of spans) {
      bands.push(s.band);
      firsts.push(keyOf(s.first));
      lasts.push(keyOf(s.last));
      sizes.push(sizeKeyOf(s.last - s.first + 1n));
      aligned.push(maxAlignedLog2(s));
    }
    await INSERT_FREE_PG.run(tx, [poolId, plainArray(bands), plainArray(firsts), plainArray(lasts), plainArray(sizes), plainArray(aligned)]);
    return;
  }
  // 6 columns a row; SQLite allows 32766 bound parameters per statement.
  for (let i = 0; i < spans.length; i += 5000) {
    await tx.db
      .insertInto('ids_free_ranges')
      .values(spans.slice(i, i + 5000).map((s) => rowOf(poolId, s)))
      .execute();
  }
}

async function deleteFree(tx: Tx, poolId: number, row: FreeRow): Promise<void> {
  await tx.db.deleteFrom('ids_free_ranges').where('pool_id', '=', poolId).where('band', '=', row.band).where('first_key', '=', keyOf(row.first)).execute();
}

const DELETE_FREE_PG = writeStatement('delete from ids_free_ranges where pool_id = ? and band = ? and first_key = any(?::text[])');

/** Delete many free rows at once (bulk imports touch one row per imported value). */
async function deleteFreeMany(tx: Tx, poolId: number, rows: readonly FreeRow[]): Promise<void> {
  for (const band of ['auto', 'static'] as const) {
    const keys = rows.filter((r) => r.band === band).map((r) => keyOf(r.first));
    // PostgreSQL: one statement a band, the keys one array (an index probe each)
    if (tx.dialect === 'postgres') {
      if (keys.length) await DELETE_FREE_PG.run(tx, [poolId, band, plainArray(keys)]);
      continue;
    }
    for (let i = 0; i < keys.length; i += PROBE_CHUNK) {
      await tx.db
        .deleteFrom('ids_free_ranges')
        .where('pool_id', '=', poolId)
        .where('band', '=', band)
        .where('first_key', 'in', keys.slice(i, i + PROBE_CHUNK))
        .execute();
    }
  }
}

const cols = ['band', 'first_key', 'last_key'] as const;

/** A key above every value's key (keys are 32 hex digits): where a walk down from a band's top starts. */
const ABOVE_EVERY_KEY = 'g';

/** A walk of one pool's free spans of one band, along the primary key or, within one alignment class, the aligned index. */
interface Walk {
  poolId: number;
  band: Band;
  /** walk the (pool, band, aligned, first) index within this class; absent: the primary key */
  aligned?: number;
  direction: 'up' | 'down';
  /** the first key the walk may meet (a value's key or an SQL expression); absent: the band's end */
  from?: unknown;
  /** start after `from`, not at it */
  exclusive?: boolean;
  limit: number;
}

/** The free spans a walk meets (band, first_key, last_key and `extra`), planned as that walk whatever the statistics (walkIndex). */
function walkSpans(w: Walk, extra: RawBuilder<unknown> = sql``): RawBuilder<RawFree> {
  return walkIndex({
    table: 'ids_free_ranges',
    equal: [['pool_id', w.poolId], ['band', w.band], ...(w.aligned === undefined ? [] : ([['aligned', w.aligned]] as const))],
    walk: { column: 'first_key', from: w.from ?? (w.direction === 'up' ? '' : ABOVE_EVERY_KEY), direction: w.direction, exclusive: w.exclusive },
    select: sql`w.band, w.first_key, w.last_key${extra}`,
    limit: w.limit,
  }) as RawBuilder<RawFree>;
}

/** The free span of `band` holding value `v`, if any. */
export async function freeSpanHolding(db: Db, poolId: number, band: Band, v: bigint): Promise<FreeRow | null> {
  const [r] = await rawRead(db, walkSpans({ poolId, band, direction: 'down', from: keyOf(v), limit: 1 }));
  if (!r) return null;
  const row = toFree(r);
  return row.last >= v ? row : null;
}

/** An owner+purpose as one string (a key of `probeAuto`'s `held`). */
export const holderKey = (h: { owner: string; purpose: string }) => JSON.stringify([h.owner, h.purpose]);

/**
 * The allocations these owner+purpose pairs hold in a pool, as a query selecting `select` (columns
 * of `w`). PostgreSQL: each pair looked up by walking the (pool, owner, purpose) index (walkIndex),
 * the pairs as two JSON array parameters — planned as such whatever the statistics (an import's
 * lookup of 999 owners once read all 40 000 allocations of its pool for each). SQLite's planner,
 * which has no statistics, takes that index for the plain list.
 */
export function heldByQuery<Row>(
  db: Db,
  poolId: number,
  holders: ReadonlyArray<{ owner: string; purpose: string }>,
  select: RawBuilder<unknown>,
): RawBuilder<Row> {
  if (db.dialect === 'postgres') {
    const walk = walkIndex({
      table: 'ids_allocations',
      equal: [
        ['pool_id', poolId],
        ['owner', sql`h.owner`],
        ['purpose', sql`h.purpose`],
      ],
      select: sql`w.*`,
      limit: 1,
    });
    const owners = textArray(holders.map((h) => h.owner));
    const purposes = textArray(holders.map((h) => h.purpose));
    return sql`select ${select} from unnest(${owners}, ${purposes}) as h(owner, purpose) cross join lateral (${walk}) as w`;
  }
  // one pair (an allocation, a reservation's attribute) as equalities: a row-value IN list of one
  // took SQLite four times as long
  const [only] = holders;
  const match =
    holders.length === 1 && only
      ? sql`w.owner = ${only.owner} and w.purpose = ${only.purpose}`
      : sql`(w.owner, w.purpose) in (${sql.join(holders.map((h) => sql`(${h.owner}, ${h.purpose})`))})`;
  return sql`select ${select} from ids_allocations as w where w.pool_id = ${poolId} and ${match}`;
}

/** One question an automatic allocation asks of the `auto` band's free spans. */
export type Probe =
  /** the span holding `at`, if any */
  | { kind: 'holding'; at: bigint }
  /** the first span starting at or after `from` that can hold a 2^k aligned block */
  | { kind: 'from'; from: bigint; k: number }
  /** the highest span that can hold a 2^k aligned block */
  | { kind: 'last'; k: number };

/** The free span holding a point, and the first one starting after it. */
export interface SpansAround {
  holding: FreeRow | null;
  next: FreeRow | null;
}

/**
 * The free spans around each of `points`, tagged `base + 2i` (the span at or before point i) and
 * `base + 2i + 1` (the first after it). PostgreSQL: two lateral walks over one array parameter,
 * whatever the number of points (a batch of random draws asks about hundreds: as two union parts
 * each, its statement took ~250 ms to plan and run at load 10); SQLite, which has no lateral
 * joins, gets the two walks of each point as parts of their own (the locked path asks about a few).
 */
function aroundParts(db: Db, poolId: number, points: readonly bigint[], base: number): Array<RawBuilder<unknown>> {
  const walk = (direction: 'up' | 'down', from: unknown, extra?: RawBuilder<unknown>) =>
    walkSpans({ poolId, band: 'auto', direction, from, exclusive: direction === 'up', limit: 1 }, extra);
  const sides = ['down', 'up'] as const;
  if (db.dialect !== 'postgres') {
    return points.flatMap((p, i) =>
      sides.map(
        (direction, odd) => sql`select * from (${walk(direction, keyOf(p), sql`, ${sql.lit(base + 2 * i + odd)} as tag`)}) as ${sql.ref(`a${2 * i + odd}`)}`,
      ),
    );
  }
  const keys = plainArray(points.map(keyOf));
  return sides.map(
    (direction, odd) =>
      sql`select a.*, (${sql.lit(base + odd)} + 2 * (p.i - 1))::integer as tag from unnest(${keys}::text[]) with ordinality as p(k, i)
        cross join lateral (${walk(direction, sql`p.k`)}) as a`,
  );
}

/**
 * Every probe an automatic allocation needs, and what the owner already holds in the pool, in ONE
 * statement (a union of `LIMIT 1` index probes, one per alignment class ≥ k for `from`/`last`).
 * Asked once under the pool's lock, instead of one statement per question (issue 15: the lock was
 * held across up to nine round trips per allocation). `around`: points whose free spans around
 * (aroundParts) are asked in the same statement — random draws.
 */
export async function probeAuto(
  db: Db,
  pool: { id: number; maxK: number },
  probes: readonly Probe[],
  holders: ReadonlyArray<{ owner: string; purpose: string }>,
  around: readonly bigint[] = [],
): Promise<ProbeAnswers> {
  return ask(db, autoProbe(db, pool, probes, holders, around));
}

/** One probe's statement run, its rows read. */
export async function ask(db: Db, asked: AutoProbe): Promise<ProbeAnswers> {
  return asked.read(await rawRead(db, asked.query));
}

/** What probeAuto learns: each probe's answer, what the holders hold, the spans around each point. */
export interface ProbeAnswers {
  answers: Array<FreeRow | null>;
  held: Map<string, string>;
  spansAround: SpansAround[];
}

/** probeAuto's statement, and how its rows are read: several pools' probes may go as one (probeTogether). */
export interface AutoProbe {
  query: RawBuilder<RawFree & { tag: number }>;
  read(rows: ReadonlyArray<RawFree & { tag: number }>): ProbeAnswers;
}

export function autoProbe(
  db: Db,
  pool: { id: number; maxK: number },
  probes: readonly Probe[],
  holders: ReadonlyArray<{ owner: string; purpose: string }>,
  around: readonly bigint[] = [],
): AutoProbe {
  const parts: Array<RawBuilder<unknown>> = [];
  const probe = (tag: number, w: Omit<Walk, 'poolId' | 'band' | 'limit'>) =>
    sql`select * from (${walkSpans({ ...w, poolId: pool.id, band: 'auto', limit: 1 }, sql`, ${sql.lit(tag)} as tag`)}) as ${sql.ref(`p${parts.length}`)}`;
  for (const [tag, p] of probes.entries()) {
    if (p.kind === 'holding') parts.push(probe(tag, { direction: 'down', from: keyOf(p.at) }));
    else {
      const classes = p.k === 0 ? [undefined] : Array.from({ length: Math.max(0, pool.maxK - p.k + 1) }, (_, i) => p.k + i);
      for (const aligned of classes)
        parts.push(p.kind === 'from' ? probe(tag, { aligned, direction: 'up', from: keyOf(p.from) }) : probe(tag, { aligned, direction: 'down' }));
    }
  }
  // what the holders hold: the allocation's id, owner and purpose in the probes' columns (in their order)
  parts.push(heldByQuery(db, pool.id, holders, sql`w.purpose as band, w.id as first_key, w.owner as last_key, -1 as tag`));
  if (around.length) parts.push(...aroundParts(db, pool.id, around, probes.length));
  const read = (rows: ReadonlyArray<RawFree & { tag: number }>): ProbeAnswers => {
    const answers: Array<FreeRow | null> = probes.map(() => null);
    const held = new Map<string, string>();
    const spansAround: SpansAround[] = around.map(() => ({ holding: null, next: null }));
    for (const r of rows) {
      const tag = Number(r.tag);
      if (tag < 0) {
        held.set(holderKey({ owner: r.last_key, purpose: r.band }), r.first_key);
        continue;
      }
      if (tag >= probes.length) {
        const i = (tag - probes.length) >> 1;
        const row = toFree(r);
        if ((tag - probes.length) & 1) spansAround[i]!.next = row;
        else if (row.last >= around[i]!) spansAround[i]!.holding = row;
        continue;
      }
      const row = toFree(r);
      const p = probes[tag]!;
      const best = answers[tag];
      if (p.kind === 'holding') answers[tag] = row.last >= p.at ? row : null;
      else if (!best || (p.kind === 'from' ? row.first < best.first : row.first > best.first)) answers[tag] = row;
    }
    return { answers, held, spansAround };
  };
  return { query: sql<RawFree & { tag: number }>`${sql.join(parts, sql` union all `)}`, read };
}

/**
 * Several pools' probes in ONE statement (each tagged with its place in `asked`): a request that
 * allocates from two locked pools asks both in one round trip while it holds both locks. SQLite,
 * in-process, has no round trip to save, and runs such a union of unions about ten times slower
 * than its parts one by one (2.1 ms against 0.2 ms for a reservation's VLAN and address, SQLite
 * 3.53): there each probe is its own statement.
 */
export async function probeTogether(db: Db, asked: readonly AutoProbe[]): Promise<ProbeAnswers[]> {
  if (db.dialect !== 'postgres') {
    const answers: ProbeAnswers[] = [];
    for (const a of asked) answers.push(await ask(db, a));
    return answers;
  }
  const parts = asked.map((a, i) => sql`select ${sql.lit(i)} as q, ${sql.ref(`q${i}`)}.* from (${a.query}) as ${sql.ref(`q${i}`)}`);
  const rows = await rawRead(db, sql<RawFree & { tag: number; q: number }>`${sql.join(parts, sql` union all `)}`);
  const byQuery = asked.map((): Array<RawFree & { tag: number }> => []);
  for (const r of rows) byQuery[Number(r.q)]!.push(r);
  return asked.map((a, i) => a.read(byQuery[i]!));
}

/** Free spans in order, for listings (`after` is an exclusive cursor on the first value). */
export async function listFree(db: Db, poolId: number, band: Band | null, after: bigint | null, limit: number): Promise<FreeRow[]> {
  const page = (b: Band) =>
    sql`select * from (${walkSpans({ poolId, band: b, direction: 'up', limit, ...(after === null ? {} : { from: keyOf(after), exclusive: true }) })}) as ${sql.ref(`p_${b}`)}`;
  // Without a band: a page of each (a range scan of the primary key each), merged in one statement.
  const query = band ? page(band) : sql`${page('auto')} union all ${page('static')} order by first_key limit ${limit}`;
  return (await rawRead(db, sql<RawFree>`${query}`)).map(toFree);
}

/** Items an import probes in one statement: a parameter each (SQLite allows 32766, PostgreSQL 65535). */
const PROBE_CHUNK = 5000;

/**
 * For each span (of any band), the free span that holds all of it, or null: two statements per
 * PROBE_CHUNK spans, whatever the pool's size — "the first value of the free span starting at or
 * before each span" (one probe of the primary key per band of `bands` each — a pool without a
 * static band probes once; free spans of both bands never overlap, so the nearer of the two is the
 * only candidate), then those spans by key.
 * An import of 100 costs two statements, not two per item. (As one join, SQLite's planner walked
 * every free span of the pool once per item: 557 ms for 100 items at 9 000 held.)
 */
export async function freeSpansHolding(db: Db, poolId: number, bands: readonly Band[], spans: readonly Span[]): Promise<Array<FreeRow | null>> {
  if (db.dialect === 'postgres') return freeSpansHoldingPg(db, poolId, bands, spans);
  const startOf = new Map<string, string>();
  const byStart = new Map<string, FreeRow>();
  for (let i = 0; i < spans.length; i += PROBE_CHUNK) {
    const keys = spans.slice(i, i + PROBE_CHUNK).map((s) => keyOf(s.first));
    // the nearer of each band's span starting at or before k ('' when neither has one)
    const startIn = (band: Band) =>
      sql`coalesce((select w.first_key from (${walkSpans({ poolId, band, direction: 'down', from: sql`v.k`, limit: 1 })}) as w), '')`;
    const start = bands.length === 1 ? startIn(bands[0]!) : sql`max(${sql.join(bands.map(startIn))})`;
    const starts = await rawRead(
      db,
      sql<{ k: string; start: string }>`with v(k) as (values ${sql.join(
        keys.map((k) => sql`(${k})`),
        sql`, `,
      )})
      select v.k, ${start} as start from v`,
    );
    const wanted = [...new Set(starts.flatMap((r) => (r.start === '' ? [] : [r.start])))];
    for (const r of starts) if (r.start !== '') startOf.set(r.k, r.start);
    if (wanted.length === 0) continue;
    const rows = await db.db
      .selectFrom('ids_free_ranges')
      .select(cols)
      .where('pool_id', '=', poolId)
      .where('band', 'in', bands)
      .where('first_key', 'in', wanted)
      .execute();
    for (const r of rows) byStart.set(r.first_key, toFree(r));
  }
  return spans.map((s) => {
    const start = startOf.get(keyOf(s.first));
    const row = start === undefined ? undefined : byStart.get(start);
    return row && row.first <= s.first && s.last <= row.last ? row : null;
  });
}

/**
 * PostgreSQL: the same question as ONE statement whatever the number of spans, the keys passed as
 * one array (issue 15: an import of 10 000 sent 4 statements of 5 000 parameters each, which
 * PostgreSQL parsed and planned each time).
 */
async function freeSpansHoldingPg(db: Db, poolId: number, bands: readonly Band[], spans: readonly Span[]): Promise<Array<FreeRow | null>> {
  const nearestIn = (band: Band) => sql`(${walkSpans({ poolId, band, direction: 'down', from: sql`v.k`, limit: 1 })})`;
  const keys = plainArray(spans.map((s) => keyOf(s.first)));
  const rows = await rawRead(
    db,
    sql<RawFree & { i: string }>`select v.i, g.band, g.first_key, g.last_key from unnest(${keys}::text[]) with ordinality as v(k, i)
      cross join lateral (${sql.join(bands.map(nearestIn), sql` union all `)}) as g`,
  );
  // up to one row per band for each span: the nearer one is the only one that can hold it
  const nearest: Array<RawFree | undefined> = new Array(spans.length);
  for (const r of rows) {
    const i = Number(r.i) - 1;
    const seen = nearest[i];
    if (!seen || seen.first_key < r.first_key) nearest[i] = r;
  }
  return spans.map((s, i) => {
    const r = nearest[i];
    if (!r) return null;
    const row = toFree(r);
    return row.first <= s.first && s.last <= row.last ? row : null;
  });
}

/** The largest free span of a band (what a contiguous request could still get), if any. */
export async function largestFree(db: Db, poolId: number, band: Band): Promise<Span | null> {
  const r = await db.db
    .selectFrom('ids_free_ranges')
    .select(['first_key', 'last_key'])
    .where('pool_id', '=', poolId)
    .where('band', '=', band)
    .orderBy('size_key', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r ? { first: fromKey(r.first_key), last: fromKey(r.last_key) } : null;
}

/**
 * The writes that take `span` out of the free span `row` holding it: the row becomes what is left
 * before the span (or after it), a second row holds what is left after it, or the row goes. Rows
 * change in place rather than being deleted and inserted again, so that one statement
 * (writeTogether) never writes one key twice.
 */
export function takeWrites(tx: Tx, poolId: number, row: FreeRow, span: Span): Compilable[] {
  const rest: BandedSpan[] = [];
  if (span.first > row.first) rest.push({ band: row.band, first: row.first, last: span.first - 1n });
  if (span.last < row.last) rest.push({ band: row.band, first: span.last + 1n, last: row.last });
  const [kept, added] = rest;
  const where = [poolId, row.band, keyOf(row.first)];
  if (!kept) return [TAKE_ALL.compilable(tx, where)];
  const k = rowOf(poolId, kept);
  const writes = [TAKE_PART.compilable(tx, [k.band, k.first_key, k.last_key, k.size_key, k.aligned, ...where])];
  if (added) {
    const a = rowOf(poolId, added);
    writes.push(LEAVE_AFTER.compilable(tx, [a.pool_id, a.band, a.first_key, a.last_key, a.size_key, a.aligned]));
  }
  return writes;
}

// takeWrites' statements: every identifier allocation sends them (a reservation: one pool's each,
// two pools), so they are written once instead of built and compiled per request (issue 31)
const TAKE_ALL = writeStatement('delete from ids_free_ranges where pool_id = ? and band = ? and first_key = ?');
const TAKE_PART = writeStatement(
  'update ids_free_ranges set band = ?, first_key = ?, last_key = ?, size_key = ?, aligned = ? where pool_id = ? and band = ? and first_key = ?',
);
const LEAVE_AFTER = writeStatement('insert into ids_free_ranges (pool_id, band, first_key, last_key, size_key, aligned) values (?, ?, ?, ?, ?, ?)');

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
  const touched = [...byRow.values()].map((e) => e.row);
  await deleteFreeMany(tx, poolId, touched);
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
