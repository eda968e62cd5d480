// Providers filled straight into the database with set-based SQL, for tests that need many more
// than the API would create in their time (candidates at scale, the index's background reload).
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/open.js';
import { migrate } from '../../src/db/migrate.js';
import { transaction } from '../../src/db/transaction.js';
import { syncStandardNames } from '../../src/placement/services/standard-names.js';

/** `count` more root providers (named scale-N) with 64 VCPU each, the even ids with 60 used, every fourth (id % 4 = 1) with AVX2. */
export async function fillProviders(url: string, dialect: 'sqlite' | 'postgres', count: number): Promise<void> {
  // a bulk fill: statements over every row, which a loaded machine may take minutes over
  const database = await openDatabase(url, { sqliteSync: 'off', statementTimeoutMs: 600_000, idleInTransactionTimeoutMs: 600_000 });
  try {
    await database.measureClock?.();
    await migrate(database);
    await syncStandardNames(database);
    const now = new Date().toISOString();
    await transaction(database, async ({ db }) => {
      const numbers =
        dialect === 'sqlite'
          ? sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count}) select i from n`
          : sql`select i from generate_series(1, ${count}) as i`;
      const hex = (width: number) => (dialect === 'sqlite' ? sql.raw(`printf('%0${width}x', i)`) : sql.raw(`lpad(to_hex(i), ${width}, '0')`));
      await sql`insert into resource_providers (uuid, name, generation, created_at, updated_at)
        select ${hex(8)} || '-0000-4000-8000-' || ${hex(12)}, 'scale-' || i, 0, ${now}, ${now} from (${numbers}) as n`.execute(db);
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
  } finally {
    await database.close();
  }
}
