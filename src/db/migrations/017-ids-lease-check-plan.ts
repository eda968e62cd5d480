// PostgreSQL: the check "does this pool hold a lease past due?" planned the same way whatever the
// statistics say. Asked as `exists (… where pool_id = $1 and expires_at <= $2)`, a plan made
// without the values (a prepared statement's generic plan, and PL/pgSQL's after five calls)
// expects a third of the pool's allocations to match and stops at the first, so a sequential scan
// looks cheap — and reads every allocation of the pool, none of which matches: 3 000 rows per
// allocation in a pool of 3 000 values, held under the pool's lock. Asked as the pool's earliest
// lease (min over the (pool_id, expires_at) partial index) it is one index probe in every plan.
// `allot_take_auto` (015) asks it so now; this makes it again where 015 ran before.
import type { Kysely } from 'kysely';
import { createTakeAuto } from './015-ids-take-auto.js';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await createTakeAuto(db);
}
