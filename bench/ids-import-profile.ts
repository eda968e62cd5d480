// Where an identifier import spends its time (issue 15): an in-process server, one 16 M-value
// pool, `--imports` HTTP imports of `--batch` values each (`--layout scattered`: uniformly at
// random, every value splitting a free span; `contiguous`: one run after another, so only the
// allocation rows grow), timed one by one; on
// PostgreSQL also the statements that took the most time (pg_stat_statements). Run under
// `node --cpu-prof` for the JavaScript side:
//
//   node --cpu-prof --cpu-prof-dir /tmp/prof --import tsx bench/ids-import-profile.ts --db postgres
//   npx tsx bench/cpu-profile.ts /tmp/prof
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { defaultConfig } from '../src/config.js';
import { startAllot } from '../src/server/start.js';
import { createTestDatabase, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { usageOf } from './lib/procfs.js';

const { values: opts } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres' },
    imports: { type: 'string', default: '8' },
    batch: { type: 'string', default: '10000' },
    layout: { type: 'string', default: 'scattered' },
  },
});
const VNI_MAX = 16_777_215;
const imports = Number(opts.imports);
const batch = Number(opts.batch);
if (opts.layout !== 'scattered' && opts.layout !== 'contiguous') throw new Error('--layout scattered|contiguous');

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-import-profile-'));
const embedded = opts.db === 'postgres' ? await startEmbeddedPostgres(['-c', 'shared_preload_libraries=pg_stat_statements']) : null;
try {
  const url = embedded ? await createTestDatabase(embedded.adminUrl, 'allot_profile') : `sqlite:${path.join(dir, 'p.db')}`;
  const running = await startAllot({ ...defaultConfig(), db: url, port: 0, logLevel: 'silent', idsWorkerIntervalMs: 60_000 });
  await running.ready;
  const base = `${running.urls.main!}/ids/v1`;
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  };
  const admin = embedded ? new pg.Client({ connectionString: url }) : null;
  try {
    await post('/pools', { name: 'filled', kind: 'integer', ranges: [`1-${VNI_MAX}`] });
    if (admin) {
      await admin.connect();
      await admin.query('create extension if not exists pg_stat_statements');
      for (const index of (process.env.DROP_INDEXES ?? '').split(',').filter(Boolean)) await admin.query(`drop index ${index}`);
      for (const fk of (process.env.DROP_FKS ?? '').split(',').filter(Boolean))
        await admin.query(`alter table ${fk.split('.')[0]} drop constraint ${fk.split('.')[1]}`);
      await admin.query('select pg_stat_statements_reset()');
    }
    const taken = new Set<number>();
    const times: number[] = [];
    let cpu = { js: 0, db: 0 };
    for (let n = 0; n < imports; n++) {
      const items = [];
      while (items.length < batch) {
        const v = opts.layout === 'contiguous' ? taken.size + 1 : 1 + Math.floor(Math.random() * VNI_MAX);
        if (taken.has(v)) continue;
        taken.add(v);
        items.push({ value: v, owner: `f${n}-${items.length}` });
      }
      const u0 = usageOf([process.pid]);
      const t = performance.now();
      const r = await post('/pools/filled/imports', { items });
      times.push(Math.round(performance.now() - t));
      const u1 = usageOf([process.pid]);
      cpu = { js: cpu.js + u1.server_cpu_s - u0.server_cpu_s, db: cpu.db + u1.db_cpu_s - u0.db_cpu_s };
      if (r.status !== 200 || r.json.imported !== batch) throw new Error(`import: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    }
    const total = times.reduce((a, b) => a + b, 0);
    const perImport = (seconds: number) => Math.round((seconds * 1000) / imports);
    console.log(
      JSON.stringify({
        db: opts.db,
        batch,
        layout: opts.layout,
        ms_per_import: times,
        values_per_second: Math.round((imports * batch * 1000) / total),
        // CPU per import, less sensitive than wall time to a machine shared with others (includes the client's JSON)
        js_cpu_ms_per_import: perImport(cpu.js),
        db_cpu_ms_per_import: perImport(cpu.db),
      }),
    );
    if (admin) {
      const { rows } = await admin.query(
        `select calls, round(total_exec_time::numeric / calls, 1) as ms_per_call, round(total_plan_time::numeric / calls, 1) as plan_ms, round(wal_bytes / calls / 1024) as wal_kb_per_call, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as query
         from pg_stat_statements where query not like '%pg_stat_statements%' order by total_exec_time desc limit 12`,
      );
      console.table(rows);
    }
  } finally {
    await admin?.end();
    await running.close();
  }
} finally {
  await embedded?.stop();
  rmSync(dir, { recursive: true, force: true });
}
