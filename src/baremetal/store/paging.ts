// Keyset pagination shared by every Ironic list (routes/listing.ts): order by (sort column, id) in the
// requested direction and continue after the marker row; and the lists' column filters. NULLs sort first in ascending order on
// both dialects (SQLite and PostgreSQL disagree by default), so pages never skip or repeat a row.
import { type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import type { DialectName } from '../../db/database.js';
import type { Schema } from '../../db/schema.js';
import type { ColumnCondition, Page } from '../core/paging.js';

/**
 * The declared column filters a request gives (core/paging.ts `Compare`), each on the main table
 * (aliased `t`); the names are the declarations', never the request's.
 */
export function applyColumns<DB extends Schema, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  conditions: readonly ColumnCondition[],
  dialect: DialectName,
): SelectQueryBuilder<DB, TB, O> {
  let out = q;
  for (const { column, compare, value } of conditions) {
    const col = sql.ref(`t.${column}`);
    const text = String(value);
    let cond: RawBuilder<boolean>;
    if (compare === 'flag') cond = sql<boolean>`${col} = ${value ? 1 : 0}`;
    else if (compare === 'present') cond = value ? sql<boolean>`${col} is not null` : sql<boolean>`${col} is null`;
    else if (compare === 'lower') cond = sql<boolean>`${col} = ${text.toLowerCase()}`;
    // instr() on SQLite, strpos() on PostgreSQL: a substring test without LIKE's wildcards
    else if (compare === 'contains') cond = sql<boolean>`${dialect === 'postgres' ? sql`strpos` : sql`instr`}(${col}, ${text}) > 0`;
    else cond = sql<boolean>`${col} = ${text}`;
    out = out.where(cond);
  }
  return out;
}

/** Order and cut a query whose main table is aliased `t`. */
export function applyPage<DB extends Schema, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>, page: Page): SelectQueryBuilder<DB, TB, O> {
  const col = sql.ref(`t.${page.sortKey}`);
  const id = sql.ref('t.id');
  const nullsFirst = sql<number>`case when ${col} is null then 0 else 1 end`;
  const dir = page.sortDir === 'asc' ? sql`asc` : sql`desc`;
  let out = q;
  if (page.after) {
    const { value, id: afterId } = page.after;
    const later = page.sortDir === 'asc' ? sql`>` : sql`<`;
    const cond =
      page.sortKey === 'id'
        ? sql<boolean>`${id} ${later} ${afterId}`
        : value === null || value === undefined
          ? page.sortDir === 'asc'
            ? sql<boolean>`(${col} is null and ${id} > ${afterId}) or ${col} is not null`
            : sql<boolean>`${col} is null and ${id} < ${afterId}`
          : page.sortDir === 'asc'
            ? sql<boolean>`${col} is not null and (${col} > ${value} or (${col} = ${value} and ${id} > ${afterId}))`
            : sql<boolean>`(${col} is not null and (${col} < ${value} or (${col} = ${value} and ${id} < ${afterId}))) or ${col} is null`;
    // parenthesised: the raw condition is ANDed with the query's filters
    out = out.where(sql<boolean>`(${cond})`);
  }
  if (page.sortKey !== 'id') out = out.orderBy(sql`${nullsFirst} ${dir}`).orderBy(sql`${col} ${dir}`);
  return out.orderBy(sql`${id} ${dir}`).limit(page.limit);
}
