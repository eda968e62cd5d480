// node bounds.mjs URL: every 10 000th provider id in one statement (row_number over the primary key): its backend CPU
import pg from 'pg';
import { readFileSync } from 'node:fs';
const c = new pg.Client(process.argv[2]); await c.connect();
const pid = (await c.query('select pg_backend_pid() as p')).rows[0].p;
const cpu = () => { const st = readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = st.slice(st.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const V = {
  win: `select id from (select id, row_number() over (order by id) as n from resource_providers) b where n % 10000 = 0`,
  agg: `select array_agg(id) from (select id, row_number() over (order by id) as n from resource_providers) b where n % 10000 = 0`,
};
for (let r = 0; r < 3; r++) for (const k of Object.keys(V)) {
  const c0 = cpu(); const t0 = performance.now();
  const res = await c.query({ text: V[k], name: k });
  await new Promise((r) => setTimeout(r, 50));
  console.log(JSON.stringify({ k, r, serverMs: cpu() - c0, ms: Math.round(performance.now() - t0), rows: res.rows.length }));
}
console.log((await c.query('explain analyze ' + V.win)).rows.map(r => r['QUERY PLAN']).join('\n'));
await c.end();
