// The index an allocation's node pick walks (baremetal/store/candidates.ts): nodes without an
// instance, by resource class and provision state, in uuid order, so that picking the free node
// after a random uuid reads a few index entries however many nodes match (10 vs 10 000 free
// nodes: bench/baremetal.ts --pool-sizes). Partial: taken nodes, most of a busy pool, are not in it.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('baremetal_nodes_free')
    .on('baremetal_nodes')
    .columns(['resource_class', 'provision_state', 'uuid'])
    .where(sql.ref('instance_uuid'), 'is', null)
    .execute();
}
