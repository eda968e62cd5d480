// Identifier columns that fit every value the identifier API accepts, and the record of values
// released by force while a service instance still referred to them.
//
// - `ids_free_ranges.size_key`: the size of a free span as a fixed-width hex key. A `::/0` pool has
//   one span of 2^128 values, a 33-digit key; keys become 33 digits wide (existing ones padded) so
//   byte order stays numeric order.
// - `ids_allocations.request_hash`: what an idempotent repeat must agree with (the block, the
//   explicit value, the strategy, the lease, the metadata): as long as the request, so text.
// - `ids_service_instances.forced_releases`: JSON list of the instance's values released with
//   `?force=true`; the next validation reads it (docs/ids.md, "Values held by service instances").
import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`alter table ids_free_ranges alter column size_key type varchar(33) collate "C"`.execute(db);
    await sql`alter table ids_allocations alter column request_hash type text`.execute(db);
  }
  await sql`update ids_free_ranges set size_key = '0' || size_key where length(size_key) = 32`.execute(db);
  await db.schema.alterTable('ids_service_instances').addColumn('forced_releases', 'text').execute();
}
