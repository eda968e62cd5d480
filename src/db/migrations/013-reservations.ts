// One reservation across the three engines (docs/ids.md "Reservations across the engines"): a
// service instance holds a bare-metal allocation and a Placement consumer besides its pool values.
// - `baremetal_allocations.held_by` and `consumers.held_by`: the holder's name
//   (`service-instance/<id>`), null for what no instance holds. Each engine refuses a change of a
//   held thing through its own API under the row lock its writes already take; the column is the
//   fact it reads, so neither engine knows the identifier API. Indexed: the identifier API finds
//   an instance's holdings by it.
// - `ids_allocation_specs.project_id`, `ids_service_instances.project_id`: the Keystone project a
//   spec or an instance belongs to (null: a spec shared by every project; an instance of no
//   project, made by a caller without one). Existing rows stay null.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('baremetal_allocations').addColumn('held_by', 'varchar(80)').execute();
  await db.schema.createIndex('baremetal_allocations_held_by').on('baremetal_allocations').column('held_by').execute();
  await db.schema.alterTable('consumers').addColumn('held_by', 'varchar(80)').execute();
  await db.schema.alterTable('ids_allocation_specs').addColumn('project_id', 'varchar(64)').execute();
  await db.schema.alterTable('ids_service_instances').addColumn('project_id', 'varchar(64)').execute();
  await db.schema.createIndex('ids_service_instances_project').on('ids_service_instances').column('project_id').execute();
}
