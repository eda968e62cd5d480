// One row that readiness checks write (GET /readyz): a write that commits proves the database takes
// writes now — not a standby, not a demoted primary, not a full disk.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('allot_health')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('checked_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await sql`insert into allot_health (id, checked_at) values (1, '')`.execute(db);
}
