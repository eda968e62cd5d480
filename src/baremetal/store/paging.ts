// Keyset pagination shared by every Ironic list (routes/listing.ts): order by (sort column, id) in the
// requested direction and continue after the marker row. NULLs sort first in ascending order on
// both dialects (SQLite and PostgreSQL disagree by default), so pages never skip or repeat a row.
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Schema } from '../../db/schema.js';
import type { Page } from '../core/paging.js';

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
