// What a service instance was created with (`requested_attributes`: the attributes of the create
// request as canonical JSON), so that a repeat with the same client-chosen id is compared with
// that request. Compared with the instance's attribute sets instead, a repeat that left out an
// attribute matched (they gain values as the instance is validated and changed). Instances
// created before this migration have none and are compared with their sets, exactly.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ids_service_instances').addColumn('requested_attributes', 'text').execute();
}
