// Providers filled straight into the database with set-based SQL, for tests that need many more
// than the API would create in their time (candidates at scale, the index's background reload).
import { sql } from 'kysely';
import { bulkFill } from './bulk-fill.js';

/** `count` more root providers (named scale-N) with 64 VCPU each, the even ids with 60 used, every fourth (id % 4 = 1) with AVX2. */
export async function fillProviders(url: string, dialect: 'sqlite' | 'postgres', count: number): Promise<void> {
  await bulkFill(url, dialect, async ({ db }, { numbers, uuid, now }) => {
    await sql`insert into resource_providers (uuid, name, generation, created_at, updated_at)
        select ${uuid('i', '8000')}, 'scale-' || i, 0, ${now}, ${now} from (${numbers(1, count)}) as n`.execute(db);
    await sql`update resource_providers set root_provider_id = id where root_provider_id is null`.execute(db);
    const vcpu = (await db.selectFrom('resource_classes').select('id').where('name', '=', 'VCPU').executeTakeFirstOrThrow()).id;
    const avx2 = (await db.selectFrom('traits').select('id').where('name', '=', 'HW_CPU_X86_AVX2').executeTakeFirstOrThrow()).id;
    await sql`insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used, created_at, updated_at)
        select id, ${vcpu}, 64, 0, 1, 64, 1, 1.0, case when id % 2 = 0 then 60 else 0 end, ${now}, ${now} from resource_providers where name like 'scale-%'`.execute(
      db,
    );
    await sql`insert into resource_provider_traits (resource_provider_id, trait_id) select id, ${avx2} from resource_providers where name like 'scale-%' and id % 4 = 1`.execute(
      db,
    );
  });
}
