// PostgreSQL: a change to an identifier reservation commits only while its lease runs (issue 33).
// A confirmation (or an extension, or new metadata) checks the lease under the pool's lock, but
// its COMMIT may land seconds later — a slow or lossy network, a paused server — and every reader
// meanwhile treats the expired reservation as released. Committed anyway, the value would come
// back confirmed after readers were told it was free. This deferred trigger runs at COMMIT and
// refuses it (SQLSTATE ALEXP, read by ids/store/allocations.ts isLeaseRanOutAtCommit) when the
// row's lease before the change has run out by the database's clock: the clock every allot
// process reads "now" on (db/database-clock.ts). SQLite needs nothing: one process, whose one
// connection is held from the check under the lock to the commit, and every read waits for it.
import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`
    create or replace function allot_lease_alive() returns trigger
    language plpgsql as $$
    begin
      if old.expires_at::timestamptz <= clock_timestamp() then
        raise exception 'allot: the lease of allocation % ran out at % before its change committed', old.id, old.expires_at
          using errcode = 'ALEXP';
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create constraint trigger ids_allocations_lease_alive
    after update on ids_allocations
    deferrable initially deferred
    for each row when (old.expires_at is not null)
    execute function allot_lease_alive()`.execute(db);
}
