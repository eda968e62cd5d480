// Indexes that serve each identifier listing one page at a time (issue 15; measured with 1 M
// values held, bench/results/2026-11-24-ids/):
//
// - `ids_free_ranges (pool_id, first_key)`: the free ranges of both bands in value order (the
//   primary key orders by band first, so a listing without `?band=` sorted every free span of the
//   pool: 1.3–4.1 s with 1 M scattered values) and an import's "the free span holding v" probe.
// - `ids_allocations (pool_id, first_key) where state = 'reserved'`: `?state=reserved` in listing
//   order; reservations are few, so the partial index is as small as the number of leases (without
//   it the listing walked every allocation of the pool to find a page of them: 3–6 s).
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('ids_free_ranges_by_value').on('ids_free_ranges').columns(['pool_id', 'first_key']).execute();
  await db.schema
    .createIndex('ids_allocations_reserved')
    .on('ids_allocations')
    .columns(['pool_id', 'first_key'])
    .where(sql.ref('state'), '=', sql.lit('reserved'))
    .execute();
}
