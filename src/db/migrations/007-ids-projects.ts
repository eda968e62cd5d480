// Identifier pools per project: `ids_pools.project_id` is the Keystone project that owns the pool
// (its readers read it, its members allocate from it); null is a shared pool, every project's.
// Existing pools stay shared. Indexed: a project's pool list filters on it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ids_pools').addColumn('project_id', 'varchar(64)').execute();
  await db.schema.createIndex('ids_pools_project').on('ids_pools').column('project_id').execute();
}
