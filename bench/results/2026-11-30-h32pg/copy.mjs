// node copy.mjs URL VARIANT…: COPY … TO STDOUT (text, binary, binary arrays) of the chunks' inventories or providers,
// 10 000 providers per chunk: the backend's CPU (/proc) and the wall time, two rounds
import pg from 'pg';
import { readFileSync } from 'node:fs';
const c = new pg.Client(process.argv[2]); await c.connect();
const pid = (await c.query('select pg_backend_pid() as p')).rows[0].p;
const cpu = () => { const st = readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = st.slice(st.lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const max = Number((await c.query('select max(id) m from resource_providers')).rows[0].m);
class CopyOut {
  constructor(text) { this.text = text; this.chunks = []; this.done = new Promise((res, rej) => { this.res = res; this.rej = rej; }); }
  submit(connection) { connection.query(this.text); }
  handleCopyData(msg) { this.chunks.push(msg.chunk); }
  handleCommandComplete() {}
  handleReadyForQuery() { this.res(this.chunks); }
  handleError(e) { this.rej(e); }
}
const W = (c, a, b) => `${c} > ${a} and ${c} <= ${b}`;
const V = {
  ibin: (a, b) => `copy (select resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used from inventories where ${W('resource_provider_id', a, b)}) to stdout (format binary)`,
  itxt: (a, b) => `copy (select resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used from inventories where ${W('resource_provider_id', a, b)}) to stdout`,
  pbin: (a, b) => `copy (select id, generation, parent_provider_id, root_provider_id, uuid from resource_providers where ${W('id', a, b)}) to stdout (format binary)`,
  iarr: (a, b) => `copy (select array_agg(resource_provider_id), array_agg(resource_class_id), array_agg(total), array_agg(reserved), array_agg(min_unit), array_agg(max_unit), array_agg(step_size), array_agg(allocation_ratio), array_agg(used) from inventories where ${W('resource_provider_id', a, b)}) to stdout (format binary)`,
  parr: (a, b) => `copy (select array_agg(id), array_agg(generation), array_agg(coalesce(parent_provider_id, 0)), array_agg(coalesce(root_provider_id, id)), string_agg(uuid, ',') from resource_providers where ${W('id', a, b)}) to stdout (format binary)`,
  ptxt: (a, b) => `copy (select id, generation, parent_provider_id, root_provider_id, uuid from resource_providers where ${W('id', a, b)}) to stdout`,
};
for (let r = 0; r < 2; r++) for (const k of process.argv.slice(3)) {
  const c0 = cpu(); const t0 = performance.now(); let bytes = 0, msgs = 0;
  for (let a = 0; a < max; a += 10000) { const q = new CopyOut(V[k](a, a + 10000)); c.query(q); const ch = await q.done; msgs += ch.length; for (const x of ch) bytes += x.length; }
  await new Promise((r) => setTimeout(r, 120));
  console.log(JSON.stringify({ k, r, serverMs: cpu() - c0, ms: Math.round(performance.now() - t0), bytes, msgs }));
}
await c.end();
