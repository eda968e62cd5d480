// node srv.mjs URL VARIANT…: the backend CPU of packing variants of a part (format, ||, array_agg), over all chunks of 10 000 providers, two rounds
import pg from 'pg';
import { readFileSync } from 'node:fs';
const c = new pg.Client(process.argv[2]); await c.connect();
const pid = (await c.query('select pg_backend_pid() as p')).rows[0].p;
const cpu = () => { const st = readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = st.slice(st.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const max = Number((await c.query('select max(id) m from resource_providers')).rows[0].m);
const W = (c) => `${c} > $1 and ${c} <= $2`;
const V = {
  fmt: `select string_agg(case when reserved = 0 and min_unit = 1 and step_size = 1 and max_unit = total then format('%s,%s:%s,%s,%s', resource_provider_id, resource_class_id, total, allocation_ratio, used) else format('%s,%s,%s,%s,%s,%s,%s,%s,%s', resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used) end, ';') as t from inventories where ${W('resource_provider_id')}`,
  cat: `select string_agg(case when reserved = 0 and min_unit = 1 and step_size = 1 and max_unit = total then resource_provider_id::text || ',' || resource_class_id::text || ':' || total::text || ',' || allocation_ratio::text || ',' || used::text else resource_provider_id::text || ',' || resource_class_id::text || ',' || total::text || ',' || reserved::text || ',' || min_unit::text || ',' || max_unit::text || ',' || step_size::text || ',' || allocation_ratio::text || ',' || used::text end, ';') as t from inventories where ${W('resource_provider_id')}`,
  arr: `select array_agg(resource_provider_id) a, array_agg(resource_class_id) b, array_agg(total) c, array_agg(reserved) d, array_agg(min_unit) e, array_agg(max_unit) f, array_agg(step_size) g, array_agg(allocation_ratio) h, array_agg(used) i from inventories where ${W('resource_provider_id')}`,
  fmt4: `select string_agg(format('%s:%s,%s,%s', resource_class_id, total, allocation_ratio, used), ';') as t from inventories where ${W('resource_provider_id')}`,
  grp: `select string_agg(x, ';') as t from (select format('%s|%s', resource_provider_id, string_agg(format('%s:%s,%s,%s', resource_class_id, total, allocation_ratio, used), '|')) as x from inventories where ${W('resource_provider_id')} group by resource_provider_id) as g`,
  pfmt: `select string_agg(case when parent_provider_id is null and (root_provider_id is null or root_provider_id = id) then format('%s,%s:%s', id, generation, uuid) else format('%s,%s,%s,%s,%s', id, generation, coalesce(parent_provider_id,0), coalesce(root_provider_id,id), uuid) end, ';') t from resource_providers where ${W('id')}`,
  pcat: `select string_agg(case when parent_provider_id is null and (root_provider_id is null or root_provider_id = id) then id::text || ',' || generation::text || ':' || uuid else id::text || ',' || generation::text || ',' || coalesce(parent_provider_id,0)::text || ',' || coalesce(root_provider_id,id)::text || ',' || uuid end, ';') t from resource_providers where ${W('id')}`,
  parr: `select array_agg(id) a, array_agg(generation) b, array_agg(parent_provider_id) c, array_agg(root_provider_id) d, string_agg(uuid, ',') e from resource_providers where ${W('id')}`,
  tfmt: `select string_agg(format('%s,%s', resource_provider_id, trait_id), ';') t from resource_provider_traits where ${W('resource_provider_id')}`,
  tarr: `select array_agg(resource_provider_id) a, array_agg(trait_id) b from resource_provider_traits where ${W('resource_provider_id')}`,
};
const which = process.argv.slice(3);
const rows = {};
for (let r = 0; r < 2; r++) for (const k of which) {
  const c0 = cpu(); const t0 = performance.now(); let chars = 0;
  for (let a = 0; a < max; a += 10000) { const res = await c.query({ text: V[k], values: [a, a + 10000], name: k }); for (const v of Object.values(res.rows[0])) chars += v ? v.length : 0; }
  await new Promise((r) => setTimeout(r, 120));
  console.log(JSON.stringify({ k, r, serverMs: cpu() - c0, ms: Math.round(performance.now() - t0), chars }));
}
await c.end();
