// Small pieces of SQL that differ between the dialects, kept in one place.
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { type Database, type Tx, kyselyOf } from './database.js';

/** Is this a unique-constraint violation (two writers created the same name/uuid)? */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** PostgreSQL's serialization_failure and deadlock_detected: the transaction lost a race and may run again. */
const LOST_RACE = new Set(['40001', '40P01']);

/** Did this PostgreSQL statement lose a race (serialization failure, deadlock)? */
export function isLostRace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && LOST_RACE.has(code);
}

/** Did `allot_assert` (migration 004) refuse a one-statement write? Then the statement kept nothing. */
export function isAssertRefusal(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'P0001';
}

/**
 * Lock rows of a table for the rest of the transaction, always in ascending id order so that two
 * writers locking overlapping sets cannot deadlock. SQLite needs nothing: BEGIN IMMEDIATE already
 * holds the only write lock.
 */
export async function lockRows(tx: Tx, table: 'resource_providers' | 'consumers', ids: readonly number[]): Promise<void> {
  if (tx.dialect !== 'postgres' || ids.length === 0) return;
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  await tx.db.selectFrom(table).select('id').where('id', 'in', sorted).orderBy('id').forUpdate().execute();
}

/**
 * PostgreSQL: gather the planner's statistics of the tables (all of allot's, or those of `tables`)
 * that changed by more rows than they held when last analyzed (and by 1000 at least). Autovacuum
 * analyzes a table at most once a minute (after a tenth of it changed); a bulk load grows a table
 * much faster, and planned on the statistics of a table a fraction of its size (or on none yet), a
 * query takes any index that looks as good for one row — which then reads every row it matches:
 * - an import's "what do these owners hold" walked all 40 000 allocations of its pool, 0.3–0.7 s
 *   per import of 999; imports of 100 ran at 199 values/s (issue 15, seen with auto_explain);
 * - a bare-metal allocation's pick read and sorted every node of its resource class instead of
 *   walking the free-node index (nodes enrolled less than a minute before: 2 000 allocations ran
 *   at 414/s where 600 ran at 770/s).
 * The question is one catalog read; the counters it reads lag by up to a second. Growth by
 * doubling costs a load of N rows about log2(N / 1000) analyses. `skip_locked`: an analysis
 * another process is running already does it. SQLite's planner has no statistics to go stale.
 * Run by the `db-statistics` worker (server/workers.ts) every --statistics-interval, and before
 * each identifier import.
 */
export async function refreshStaleStatistics(database: Database, tables?: readonly string[]): Promise<void> {
  if (database.dialect !== 'postgres') return;
  const db = kyselyOf(database);
  const stale = await db.executeQuery<{ relname: string }>(
    CompiledQuery.raw(
      `select s.relname from pg_stat_user_tables s join pg_class c on c.oid = s.relid
       where s.schemaname = current_schema() and ($1::text[] is null or s.relname = any($1::text[]))
         and s.n_mod_since_analyze > greatest(1000, c.reltuples)`,
      [tables ?? null],
    ),
  );
  // quoted: the schema may hold tables that are not allot's, with any name
  const names = stale.rows.map((r) => `"${r.relname.replaceAll('"', '""')}"`);
  if (names.length > 0) await db.executeQuery(CompiledQuery.raw(`analyze (skip_locked) ${names.join(', ')}`));
}

/** A walk along one index: the rows whose leading columns equal `equal`, from a bound on the next column. */
export interface IndexWalk {
  table: string;
  /** the index's leading columns and the values (or SQL expressions) they must equal */
  equal: ReadonlyArray<readonly [column: string, value: unknown]>;
  /** the index column after them, walked from `from` (absent: the rows are found by `equal` alone) */
  walk?: { column: string; from: unknown; direction: 'up' | 'down'; exclusive?: boolean };
  /** columns of the result, as SQL */
  select: RawBuilder<unknown>;
  limit: number;
}

/**
 * The rows an index walk meets, as a subquery: `select <select> from (…) as w where <equal>`.
 *
 * Written plainly (`pool_id = ? and band = ? and first_key <= ? order by first_key desc limit 1`),
 * such a probe was planned from statistics, and statistics older than the rows (a pool filled by
 * imports or allocations faster than autovacuum analyzes) made the pool look like one row: then
 * any index beginning with the equal columns looks as good, and PostgreSQL took one, read every
 * row of the pool and sorted them — for every probe (issue 15, seen with auto_explain: imports of
 * 100 at 199 values/s). Here the bound is ONE comparison of the index's own column tuple —
 * `(pool_id, band, first_key) <= (?, ?, ?)` — which only an index on those columns in that order
 * serves as a range, so walking it is the plan whatever the statistics (SQLite plans it as the same
 * index range). Rows of the next pool the walk runs into are dropped outside its LIMIT.
 */
export function walkIndex(w: IndexWalk): RawBuilder<unknown> {
  const columns = [...w.equal.map(([c]) => c), ...(w.walk ? [w.walk.column] : [])];
  const bound = [...w.equal.map(([, v]) => v), ...(w.walk ? [w.walk.from] : [])];
  const up = !w.walk || w.walk.direction === 'up';
  const op = sql.raw(up ? (w.walk?.exclusive ? '>' : '>=') : w.walk?.exclusive ? '<' : '<=');
  const tuple = sql.join(columns.map((c) => sql.ref(c)));
  const order = sql.join(columns.map((c) => sql`${sql.ref(c)} ${sql.raw(up ? 'asc' : 'desc')}`));
  const equal = sql.join(
    w.equal.map(([c, v]) => sql`${sql.ref(`w.${c}`)} = ${v}`),
    sql` and `,
  );
  return sql`select ${w.select} from (select * from ${sql.table(w.table)} where (${tuple}) ${op} (${sql.join(bound)}) order by ${order} limit ${w.limit}) as w
    where ${equal}`;
}

/**
 * PostgreSQL: an array literal of values that need no quoting — hex keys, uuids, integers, ISO
 * timestamps, plain words; null is NULL — passed as one text parameter and cast (`?::text[]`).
 * Bulk writes pass a column each: PostgreSQL reads 20 000 rows of arrays 2–4× faster than the same
 * rows as one `json_to_recordset` document (measured on this machine, issue 15), and building it is
 * a join, not the driver's escaping of every element.
 */
export const plainArray = (values: ReadonlyArray<string | number | null>): string =>
  `{${(values.includes(null) ? values.map((v) => (v === null ? 'NULL' : v)) : values).join(',')}}`;

/**
 * PostgreSQL: any strings as a text[] built from one JSON array parameter (`JSON.stringify` of the
 * strings), in their order. Quoting each string into an array literal in JavaScript cost 70–125 ms
 * of the server's one thread for the 20 000 strings of an import of 10 000 (its request
 * parameters are JSON, full of quotes); JSON.stringify takes a few, and PostgreSQL ~20–30 ms more
 * to read them (measured: about even in CPU overall, less on the event loop).
 */
export const TEXT_ARRAY_FROM_JSON = 'array(select e from json_array_elements_text(?::json) with ordinality as t(e, i) order by i)';

const [BEFORE_JSON, AFTER_JSON] = TEXT_ARRAY_FROM_JSON.split('?') as [string, string];

/** TEXT_ARRAY_FROM_JSON of these strings in a `sql` template. */
export const textArray = (values: readonly string[]): RawBuilder<string[]> => sql`${sql.raw(BEFORE_JSON)}${JSON.stringify(values)}${sql.raw(AFTER_JSON)}`;
