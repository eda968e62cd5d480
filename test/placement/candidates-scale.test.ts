// Allocation candidates past the size where every request used to fail (a spread of every
// remaining anchor into one push() threw "Maximum call stack size exceeded" beyond ~150 000
// providers): 250 000 flat providers, filled directly in the database, on both databases. Speed
// at a million is the benchmark's business (bench/candidates.ts); this proves requests succeed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { transaction } from '../../src/db/transaction.js';
import { syncStandardNames } from '../../src/placement/services/standard-names.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';

const PROVIDERS = Number(process.env.SCALE_PROVIDERS ?? 250_000);

/** PROVIDERS root providers with 64 VCPU each, half of them with 60 used, a quarter with room and AVX2: set-based SQL. */
async function fill(url: string, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const database = await openDatabase(url, { sqliteSync: 'off' });
  try {
    await migrate(database);
    await syncStandardNames(database);
    const now = new Date().toISOString();
    await transaction(database, async ({ db }) => {
      const numbers =
        dialect === 'sqlite'
          ? sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${PROVIDERS}) select i from n`
          : sql`select i from generate_series(1, ${PROVIDERS}) as i`;
      const hex = (width: number) => (dialect === 'sqlite' ? sql.raw(`printf('%0${width}x', i)`) : sql.raw(`lpad(to_hex(i), ${width}, '0')`));
      await sql`insert into resource_providers (uuid, name, generation, created_at, updated_at)
        select ${hex(8)} || '-0000-4000-8000-' || ${hex(12)}, 'scale-' || i, 0, ${now}, ${now} from (${numbers}) as n`.execute(db);
      await sql`update resource_providers set root_provider_id = id`.execute(db);
      const vcpu = (await db.selectFrom('resource_classes').select('id').where('name', '=', 'VCPU').executeTakeFirstOrThrow()).id;
      const avx2 = (await db.selectFrom('traits').select('id').where('name', '=', 'HW_CPU_X86_AVX2').executeTakeFirstOrThrow()).id;
      await sql`insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used, created_at, updated_at)
        select id, ${vcpu}, 64, 0, 1, 64, 1, 1.0, case when id % 2 = 0 then 60 else 0 end, ${now}, ${now} from resource_providers`.execute(db);
      await sql`insert into resource_provider_traits (resource_provider_id, trait_id) select id, ${avx2} from resource_providers where id % 4 = 1`.execute(db);
    });
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`allocation candidates over ${PROVIDERS} providers (${dialect})`, () => {
    let server: TestServer;
    let api: PlacementClient;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-scale-'));
    before(async () => {
      // the filler and the server must see one database: a file, not SQLite's in-memory one
      const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'scale.db')}` : await freshDatabaseUrl(dialect);
      await fill(url, dialect);
      server = await startServer({ db: url, maxCandidates: 1000 });
      api = new PlacementClient(server.placementUrl);
    });
    after(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('every strategy answers, limited or not, and only with providers that have room', async () => {
      for (const strategy of ['stable', 'random', 'pack', 'spread']) {
        for (const query of ['resources=VCPU:8&limit=50', 'resources=VCPU:8&required=HW_CPU_X86_AVX2&limit=50', 'resources=VCPU:8']) {
          const res = await api.get(`/allocation_candidates?${query}&allot_strategy=${strategy}`);
          assert.equal(res.status, 200, `${strategy} ${query}: ${res.text.slice(0, 300)}`);
          const expected = query.includes('limit=50') ? 50 : 1000; // the configured cap
          assert.equal(res.body.allocation_requests.length, expected, `${strategy} ${query}: ${res.text.slice(0, 300)}`);
          for (const summary of Object.values(res.body.provider_summaries) as Array<{ resources: { VCPU: { capacity: number; used: number } } }>) {
            assert.ok(summary.resources.VCPU.capacity - summary.resources.VCPU.used >= 8, 'a candidate has room');
          }
        }
      }
    });
  });
}
