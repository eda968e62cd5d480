// Reproduction (not a benchmark): GET /resource_providers?resources=… on PostgreSQL becomes
// quadratic in the number of providers once the tables have statistics and some allocations.
//
//   npm run build && npx tsx bench/repro/provider-list-plan.ts [providers=1000] [claims=300]
//
// Starts a throwaway PostgreSQL and allot from dist/, creates the providers as bench:placement
// does, makes `claims` claims, times the request before and after ANALYZE, and prints the plan of
// the SQL allot runs for it. The filters `amount % step_size = 0` and
// `capacity >= amount + (correlated sum of allocations)` are estimated at about one row, so the
// planner nests loops (Materialize) over every provider for each provider.
// Measured 2026-11-22: 1 000 providers 100 ms → 484 ms after ANALYZE; 10 000 providers 148 s.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, startEmbeddedPostgres } from '../../test/helpers/postgres.js';
import { PlacementClient } from '../lib/http.js';
import { makeLogDir, startAllot } from '../lib/targets.js';
import { Workload } from '../lib/workload.js';

const providers = Number(process.argv[2] ?? 1000);
const claims = Number(process.argv[3] ?? 300);

const postgres = await startEmbeddedPostgres();
const url = await createTestDatabase(postgres.adminUrl, 'repro');
const allot = await startAllot({ name: 'allot', root: path.resolve('.'), db: url, logDir: makeLogDir() });
const client = new PlacementClient({ baseUrl: allot.url, microversion: '1.39', token: 'admin', maxSockets: 8, timeoutMs: 600_000 });
try {
  const setupOnly = {
    sizes: [providers], concurrency: [1], largeConcurrency: [1], stepSeconds: 1, maxOps: 1, minSamples: 1, setupConcurrency: 8,
    loopLimit: 50, pick: 'auto' as const, maxRetries: 1, contentionProviders: 1, contentionFreeUnits: 1,
    steps: new Set(['setup'] as const), runId: 'repro', microversion: '1.39',
  };
  await new Workload(client, setupOnly, { log: console.log, usage: async () => null }).run();

  const query = '/resource_providers?resources=VCPU:1,MEMORY_MB:512,DISK_GB:10';
  const time = async (label: string) => {
    const r = await client.request('GET', query);
    console.log(`${label}: GET ${query} → ${r.status} in ${r.ms.toFixed(0)} ms`);
  };
  const all = JSON.parse((await client.request('GET', '/resource_providers')).body) as { resource_providers: Array<{ uuid: string }> };
  for (let i = 0; i < claims; i++) {
    const rp = all.resource_providers[i % all.resource_providers.length]!.uuid;
    await client.request('PUT', `/allocations/${randomUUID()}`, {
      allocations: { [rp]: { resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 10 } } },
      project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE',
    });
  }
  await time(`${providers} providers, ${claims} claims, before ANALYZE`);
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  await sql.query('ANALYZE');
  await time('after ANALYZE');
  const fits = (classId: number, amount: number) =>
    `select i.resource_provider_id from inventories as i where i.resource_class_id = ${classId} and i.min_unit <= ${amount} and i.max_unit >= ${amount}` +
    ` and ${amount} % i.step_size = 0 and (i.total - i.reserved) * i.allocation_ratio >= ${amount} + coalesce((select sum(al.used) from allocations al` +
    ` where al.resource_provider_id = i.resource_provider_id and al.resource_class_id = i.resource_class_id), 0)`;
  const plan = await sql.query(
    `explain analyze select rp.id from resource_providers rp left join resource_providers parent on parent.id = rp.parent_provider_id` +
      ` inner join resource_providers root on root.id = rp.root_provider_id` +
      ` where rp.id in (${fits(1, 1)}) and rp.id in (${fits(2, 512)}) and rp.id in (${fits(3, 10)}) order by rp.id`,
  );
  console.log((plan.rows as Array<Record<string, string>>).map((r) => r['QUERY PLAN']).join('\n'));
  await sql.end();
} finally {
  client.close();
  await allot.stop();
  await postgres.stop();
}
