// The bare-metal allocations' Placement claims are held (issue 30). With `--baremetal-backend
// placement` a node's claim is a Placement consumer named by the allocation's uuid; Placement's
// clients may not change it. That was decided by reading, before the write's transaction, which
// consumers hold a node's provider — so a consumer that got its claim meanwhile was not refused.
// Now the claim marks its consumer `held_by` the allocation (`baremetal-allocation/<uuid>`,
// baremetal/services/backend.ts), and every Placement write refuses a held consumer under its row
// lock (placement/store/allocations.ts `consumer_held`). This marks the claims made before: a
// consumer no one holds, named by a bare-metal allocation's uuid, with allocations on a node's
// provider (the provider's uuid is the node's).
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update consumers set held_by = 'baremetal-allocation/' || uuid
    where held_by is null
      and uuid in (select uuid from baremetal_allocations)
      and exists (
        select 1 from allocations a
        join resource_providers rp on rp.id = a.resource_provider_id
        join baremetal_nodes n on n.uuid = rp.uuid
        where a.consumer_id = consumers.id)`.execute(db);
}
