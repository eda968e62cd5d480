// node sqlite-raw-rows.cjs FILE: CPU of reading the same inventory rows as arrays (.raw()) into a Float64Array, instead of packed text.
const Database = require('better-sqlite3');
const db = new Database(process.argv[2], { readonly: true });
const st = db.prepare(`select resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used from inventories where resource_provider_id > ? and resource_provider_id <= ?`).raw();
const cnt = db.prepare(`select count(*) as n from inventories where resource_provider_id > ? and resource_provider_id <= ?`).pluck();
for (let round = 0; round < 3; round++) {
  const c0 = process.cpuUsage();
  let total = 0;
  for (let after = 0; after < 200000; after += 10000) {
    const n = cnt.get(after, after + 10000);
    const out = new Float64Array(n * 9);
    let k = 0;
    for (const r of st.iterate(after, after + 10000)) { for (let f = 0; f < 9; f++) out[k++] = r[f]; }
    total += k;
  }
  const c = process.cpuUsage(c0);
  console.log('raw iterate', Math.round((c.user + c.system) / 1000), 'ms', total);
  const c1 = process.cpuUsage();
  for (let after = 0; after < 200000; after += 10000) { const rows = st.all(after, after + 10000); }
  const c2 = process.cpuUsage(c1);
  console.log('raw all', Math.round((c2.user + c2.system) / 1000), 'ms');
}
