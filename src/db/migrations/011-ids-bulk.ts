// Cheaper rows for bulk imports of identifiers (issue 15). Every scattered value an import takes
// splits a free span, so an import of 10 000 values writes 10 000 allocations and ~20 000
// free-span rows; per row, the cost is its index entries.
//
// `ids_free_ranges (pool_id, first_key)` (migration 009) is dropped: it served two questions the
// primary key (pool_id, band, first_key) answers with one probe per band, since free spans of the
// two bands never overlap — an import's "the free span holding v" and the listing of both bands in
// value order (a page of each band, merged). One B-tree fewer per free-span row.
//
// The foreign keys to `ids_pools` stay, on both databases, although PostgreSQL checks them once
// per inserted row (a third of an import's insert time, docs/performance.md): a row can then never
// outlive its pool, whatever a future writer forgets.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ids_free_ranges_by_value').execute();
}
