// For tests of queries planned on stale statistics (PostgreSQL): wait until the db-statistics
// worker has analyzed tables, and count the rows queries read from them.
import assert from 'node:assert/strict';
import type pg from 'pg';

/** Until none of `tables` changed by more rows than it held when last analyzed (the worker's rule), 30 s at most. */
export async function statisticsCurrent(admin: pg.Client, tables: readonly string[]): Promise<void> {
  for (let waited = 0; ; waited += 500) {
    const stale = await admin.query(
      `select s.relname from pg_stat_user_tables s join pg_class c on c.oid = s.relid
       where s.relname = any($1::text[]) and s.n_mod_since_analyze > greatest(1000, c.reltuples)`,
      [tables],
    );
    if (stale.rows.length === 0) return;
    assert.ok(waited < 30_000, `statistics still stale: ${JSON.stringify(stale.rows)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Rows of `tables` read so far (sequential and index fetches), once every connection of the
 * server has reported them: an idle backend reports within 10 s (PostgreSQL's
 * PGSTAT_IDLE_INTERVAL; at most once a second otherwise), so this waits 11 s first.
 */
export async function rowsRead(admin: pg.Client, tables: readonly string[]): Promise<number> {
  await new Promise((r) => setTimeout(r, 11_000));
  const read = await admin.query(
    `select sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::bigint as n from pg_stat_user_tables where relname = any($1::text[])`,
    [tables],
  );
  return Number(read.rows[0].n);
}
