// The numbers `allot sizing`'s coefficients (src/cli/sizing-model.ts) are read from, out of this
// directory's JSON: CPU ms per operation (allot, PostgreSQL, the bench's client) and bytes per
// object. `npx tsx bench/results/2026-11-29-sizing/summary.ts > bench/results/2026-11-29-sizing/summary.txt`
import { readFileSync } from 'node:fs';
import path from 'node:path';

const dir = import.meta.dirname;
const read = (file: string) => JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
const rows: Array<[string, string, unknown, unknown, unknown]> = [];
const cpu = (what: string, db: string, c: { server_cpu_ms_per_op: number; db_cpu_ms_per_op: number | null; client_cpu_ms_per_op: number } | undefined) =>
  c && rows.push([what, db, c.server_cpu_ms_per_op, db === 'sqlite' ? '—' : c.db_cpu_ms_per_op, c.client_cpu_ms_per_op]);

const placement = read('placement.json');
for (const [target, t] of Object.entries<any>(placement.targets)) {
  const db = target.replace('allot-', '');
  for (const size of t.sizes) {
    const n = size.providers;
    cpu(`registration request (${n} providers)`, db, size.setup?.cost);
    cpu(`candidates limit=50 (${n})`, db, size.candidates?.limit_50?.[0]?.cost);
    cpu(`candidates required trait limit=50 (${n})`, db, size.candidates?.required_traits_limit_50?.[0]?.cost);
  }
  // the write steps run at the first size only, and are kept beside the sizes
  for (const step of ['scheduler_loop', 'claim_write_path', 'migration_swap', 'deletes']) cpu(`${step} (${t.sizes[0].providers})`, db, t[step]?.[0]?.cost);
}
for (const r of read('baremetal.json').results) cpu(`bare-metal allocation, ${r.backend} backend`, r.db, r.cpu);
for (const r of read('reservations.json').results) cpu(`reservation, ${r.backend} backend`, r.db, r.cpu);
const ids = read('ids.json');
for (const [db, r] of Object.entries<any>(ids.runs)) {
  const a = r.allocation;
  rows.push(['identifier allocation (48 clients, 3 processes, one pool)', db, a.server_cpu_ms_per_op, db === 'sqlite' ? '—' : a.db_cpu_ms_per_op, a.client_cpu_ms_per_op]);
}

const widths = [58, 9, 10, 11, 7];
const line = (cells: unknown[]) => cells.map((c, i) => String(c ?? '').padEnd(widths[i]!)).join(' ');
console.log('CPU ms per operation, 8 clients unless said (load average during each bench: load.txt)');
console.log(line(['operation', 'database', 'allot', 'PostgreSQL', 'client']));
for (const r of rows) console.log(line(r));

console.log('\nper object (storage.json)');
for (const r of read('storage.json').results) {
  for (const [name, p] of Object.entries<any>(r.phases)) {
    if (name === 'postgres_private_memory') console.log(`${r.dialect} PostgreSQL processes' private memory: ${JSON.stringify(p)}`);
    else console.log(`${r.dialect} ${name}: ${p.database_bytes_per_unit} database bytes each; allot RSS ${p.server_rss_mb_before} → ${p.server_rss_mb_after} MB`);
  }
}
