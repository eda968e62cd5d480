// node scans.mjs URL: the chunks' scans alone (count, one column through string_agg), backend CPU, with their plans
import pg from 'pg';
import { readFileSync } from 'node:fs';
const c = new pg.Client(process.argv[2]); await c.connect();
const pid = (await c.query('select pg_backend_pid() as p')).rows[0].p;
const cpu = () => { const st = readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = st.slice(st.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const max = Number((await c.query('select max(id) m from resource_providers')).rows[0].m);
console.log((await c.query('select (select count(*) from inventories) i, (select count(*) from resource_provider_traits) t, (select count(*) from resource_provider_aggregates) a, (select count(*) from resource_providers) p')).rows[0]);
const W = (c) => `${c} > $1 and ${c} <= $2`;
const V = {
  count: `select count(*), sum(total) from inventories where ${W('resource_provider_id')}`,
  cnt1: `select count(*) from inventories where ${W('resource_provider_id')}`,
  pcount: `select count(*), sum(generation) from resource_providers where ${W('id')}`,
  sagg: `select string_agg(total::text, ',') from inventories where ${W('resource_provider_id')}`,
};
for (const k of Object.keys(V)) console.log((await c.query('explain (analyze, buffers) ' + V[k].replace('$1', '10000').replace('$2', '20000'))).rows.map(r => r['QUERY PLAN']).join('\n'));
for (let r = 0; r < 2; r++) for (const k of Object.keys(V)) {
  const c0 = cpu(); const t0 = performance.now();
  for (let a = 0; a < max; a += 10000) await c.query({ text: V[k], values: [a, a + 10000], name: k });
  await new Promise((r) => setTimeout(r, 120));
  console.log(JSON.stringify({ k, r, serverMs: cpu() - c0, ms: Math.round(performance.now() - t0) }));
}
await c.end();
