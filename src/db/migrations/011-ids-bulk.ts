// Cheaper rows for bulk imports of identifiers (issue 15). Every scattered value an import takes
// splits a free span, so an import of 10 000 values writes 10 000 allocations and ~20 000
// free-span rows; per row, the cost is its index entries and, on PostgreSQL, its foreign-key check.
//
// - `ids_free_ranges (pool_id, first_key)` (migration 009) is dropped: it served two questions the
//   primary key (pool_id, band, first_key) answers with one probe per band, since free spans of
//   the two bands never overlap — an import's "the free span holding v" and the listing of both
//   bands in value order (a page of each band, merged). One B-tree fewer per free-span row.
// - PostgreSQL: the foreign keys from `ids_free_ranges` and `ids_allocations` to `ids_pools` are
//   dropped. PostgreSQL checks one per inserted row (a query of the pool's row each): measured with
//   imports of 10 000 scattered values, the two inserts took 183 + 141 ms without them against
//   417 + 287 ms with them (pg_stat_statements, bench/ids-import-profile.ts). They guarded nothing
//   the writers do not already: every write of these rows holds its pool's row (locked FOR UPDATE,
//   or updated by the same statement), and a pool is deleted only empty, its free spans with it
//   (store/pools.ts deletePoolRows). SQLite keeps them (it cannot drop a constraint without
//   rebuilding the table, and its check is an index probe in the same process).
import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  await db.schema.dropIndex('ids_free_ranges_by_value').execute();
  if (dialect === 'postgres') {
    await sql`alter table ids_free_ranges drop constraint ids_free_ranges_pool_id_fkey`.execute(db);
    await sql`alter table ids_allocations drop constraint ids_allocations_pool_id_fkey`.execute(db);
  }
}
