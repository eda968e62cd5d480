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
 * PostgreSQL: gather the planner's statistics of these tables now. A bulk load can grow a table
 * faster than autovacuum analyzes it; planned with the old row counts, the import's probes took
 * bitmap scans over the whole pool (measured: 35–42 ms instead of 0.1–2.3 ms for 100 items at
 * 60 000 rows held). SQLite's planner prefers the indexes without statistics: nothing to do.
 */
export async function refreshStatistics(database: Database, tables: readonly string[]): Promise<void> {
  if (database.dialect !== 'postgres') return;
  await kyselyOf(database).executeQuery(CompiledQuery.raw(`analyze ${tables.join(', ')}`));
}

/**
 * A JSON object column (stored as text) with one key set to `value`, as an SQL expression: the
 * document changes inside the statement that writes the row, with no read before. PostgreSQL
 * writes it back in jsonb's spelling (sorted keys, spaces); readers parse it.
 */
export function jsonWithKey(tx: Tx, column: string, key: string, value: unknown): RawBuilder<string> {
  const json = JSON.stringify(value);
  return tx.dialect === 'postgres'
    ? sql<string>`(${sql.ref(column)}::jsonb || jsonb_build_object(${key}::text, ${json}::jsonb))::text`
    : sql<string>`json_set(${sql.ref(column)}, ${`$.${key}`}, json(${json}))`;
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
