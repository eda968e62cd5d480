// PostgreSQL: a function that fails the statement it is called from. A claim for new consumers runs
// as one statement (placement/store/one-statement-writes.ts) in its own implicit transaction, and
// calls this with the result of its checks: a refusal raises, and the statement — with every row
// it wrote — is rolled back, without a round trip for BEGIN or ROLLBACK.
import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`
    create or replace function allot_assert(ok boolean, reason text) returns boolean
    language plpgsql volatile as $$
    begin
      if ok is not true then
        raise exception 'allot: %', reason using errcode = 'P0001';
      end if;
      return true;
    end
    $$`.execute(db);
}
