// node sqlite-packing.cjs FILE: CPU of the index load's inventory packing on SQLite (20 chunks of 10 000 providers), format() against || and concat_ws, and the scan alone (count).
const Database = require('better-sqlite3');
const db = new Database(process.argv[2], { readonly: true });
const variants = {
  format: `select group_concat(format('%d,%d,%d,%d,%d,%d,%d,%!.17g,%d', resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used), ';') as x from inventories where resource_provider_id > ? and resource_provider_id <= ?`,
  concat: `select group_concat(resource_provider_id || ',' || resource_class_id || ',' || total || ',' || reserved || ',' || min_unit || ',' || max_unit || ',' || step_size || ',' || format('%!.17g', allocation_ratio) || ',' || used, ';') as x from inventories where resource_provider_id > ? and resource_provider_id <= ?`,
  concat_ws: `select group_concat(concat_ws(',', resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, format('%!.17g', allocation_ratio), used), ';') as x from inventories where resource_provider_id > ? and resource_provider_id <= ?`,
  short: `select group_concat(format('%d,%d,%d,%s,%s,%s,%s,%!.17g,%d', resource_provider_id, resource_class_id, total, nullif(reserved, 0), nullif(min_unit, 1), nullif(max_unit, total), nullif(step_size, 1), allocation_ratio, used), ';') as x from inventories where resource_provider_id > ? and resource_provider_id <= ?`,
  count: `select count(*) as x from inventories where resource_provider_id > ? and resource_provider_id <= ?`,
};
const out = {};
for (let round = 0; round < 3; round++)
  for (const [name, sql] of Object.entries(variants)) {
    const st = db.prepare(sql);
    const c0 = process.cpuUsage();
    let len = 0;
    for (let after = 0; after < 200000; after += 10000) { const r = st.get(after, after + 10000); len += typeof r.x === 'string' ? r.x.length : 0; }
    const c = process.cpuUsage(c0);
    (out[name] ??= []).push(Math.round((c.user + c.system) / 1000));
    if (round === 0) out[name + '_chars'] = len;
  }
console.log(JSON.stringify(out));
const a = db.prepare(variants.format).get(0, 10000).x, b = db.prepare(variants.concat).get(0, 10000).x;
console.log('same text:', a === b, a.slice(0, 80), b.slice(0, 80));
