// The candidates bench's providers, filled with set-based SQL: a statement per table instead of
// thousands of 500-row inserts (which took 20 minutes for 1 000 000 providers on PostgreSQL on a
// busy machine, bench/results/2026-11-28-index-1m/postgres-w34index-fill.json).
import { sql } from 'kysely';
import { bulkFill } from '../../test/helpers/bulk-fill.js';

/**
 * `n` root providers (cn0…): 64 VCPU (ratio 4), 256 GiB MEMORY_MB (ratio 1.5), 2 TB DISK_GB; every
 * 4th (cn0, cn4, …) has AVX2; every 2nd runs one consumer's 4 VCPU, 8 GiB and 100 GB (its
 * allocations, and the inventories' `used` to match).
 */
export async function fillCandidateProviders(url: string, dialect: 'sqlite' | 'postgres', n: number): Promise<void> {
  await bulkFill(url, dialect, async ({ db }, { numbers: series, uuid, now }) => {
    const numbers = series(0, n - 1);
    await sql`insert into resource_providers (uuid, name, generation, created_at, updated_at)
        select ${uuid('i', '8000')}, 'cn' || i, 1, ${now}, ${now} from (${numbers}) as n order by i`.execute(db);
    await sql`update resource_providers set root_provider_id = id where root_provider_id is null`.execute(db);
    const ids = Object.fromEntries(
      (await db.selectFrom('resource_classes').select(['id', 'name']).where('name', 'in', ['VCPU', 'MEMORY_MB', 'DISK_GB']).execute()).map((r) => [
        r.name,
        r.id,
      ]),
    );
    const avx2 = (await db.selectFrom('traits').select('id').where('name', '=', 'HW_CPU_X86_AVX2').executeTakeFirstOrThrow()).id;
    // cn<k>: k is the provider's place in the fill
    const place = 'cast(substr(p.name, 3) as integer)';
    const k = sql.raw(place);
    await sql`insert into consumers (uuid, project_id, user_id, generation, created_at, updated_at)
        select ${uuid('i', '9000')}, 'bench', 'bench', 1, ${now}, ${now} from (${numbers}) as n where i % 2 = 0 order by i`.execute(db);
    // one row per provider and class, in provider order: a provider's rows lie together, as when
    // each provider's inventories are written by one request (filled class by class, SQLite's scan
    // of a chunk's inventories took 2.6× as long: 690 against 261 ms for 200 000 providers)
    const classes = sql.join(
      [
        ['VCPU', 64, 4, 4],
        ['MEMORY_MB', 262144, 1.5, 8192],
        ['DISK_GB', 2000, 1, 100],
      ].map(
        ([name, total, ratio, used], order) =>
          sql`select ${sql.lit(order)} as o, ${sql.lit(ids[name as string])} as class_id, ${sql.lit(total)} as total, ${sql.lit(ratio)} as ratio, ${sql.lit(used)} as used`,
      ),
      sql` union all `,
    );
    await sql`insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used, created_at, updated_at)
        select p.id, c.class_id, c.total, 0, 1, c.total, 1, c.ratio, case when ${k} % 2 = 0 then c.used else 0 end, ${now}, ${now}
        from resource_providers p cross join (${classes}) as c where p.name like 'cn%' order by p.id, c.o`.execute(db);
    await sql`insert into allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at)
        select p.id, co.id, c.class_id, c.used, ${now}, ${now}
        from resource_providers p join consumers co on co.uuid = ${uuid(place, '9000')} cross join (${classes}) as c
        where p.name like 'cn%' and ${k} % 2 = 0 order by p.id, c.o`.execute(db);
    await sql`insert into resource_provider_traits (resource_provider_id, trait_id)
        select p.id, ${sql.lit(avx2)} from resource_providers p where p.name like 'cn%' and ${k} % 4 = 0`.execute(db);
  });
}
