// Where an allocation's time goes on PostgreSQL: runs bench/baremetal.ts (PostgreSQL, 16 clients,
// 400 allocations, one backend per run) from each tree given, against one throwaway PostgreSQL
// with pg_stat_statements, and prints per run: the PostgreSQL server's CPU (the postmaster's own
// and its exited backends' user+system time, from /proc), how often a sampled active backend was
// waiting for a lock (pg_stat_activity every 5 ms), and the statements by total execution time.
//
//   npx tsx bench/results/2026-11-25-baremetal-one/profile.ts /work/wt-bm-before /work/wt-bm
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../../test/helpers/postgres.js';

const trees = process.argv.slice(2);
const server = await startEmbeddedPostgres(['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=top']);
const admin = new pg.Client({ connectionString: server.adminUrl });
await admin.connect();
await admin.query('create extension if not exists pg_stat_statements');
const postmaster = Number(readFileSync(`/proc/${(await admin.query('select pg_backend_pid() as pid')).rows[0].pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString());
/** the postmaster's CPU seconds, its reaped backends' included */
const serverCpu = () => {
  const f = readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / ticks;
};

try {
  for (const backend of ['database', 'placement']) {
    for (const tree of trees) {
      await admin.query('select pg_stat_statements_reset()');
      const cpu0 = serverCpu();
      let samples = 0;
      let lockWaits = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const r = await admin.query(
            `select count(*) filter (where wait_event_type = 'Lock')::int as locks, count(*)::int as active
             from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and datname like 'allot_bench%'`,
          );
          samples += r.rows[0].active;
          lockWaits += r.rows[0].locks;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const { stdout: out } = await promisify(execFile)(
        'npx',
        ['tsx', 'bench/baremetal.ts', '--dialects', 'postgres', '--backends', backend, '--concurrency', '16', '--allocations', '400', '--pool-sizes', ''],
        { cwd: tree, env: { ...process.env, DATABASE_URL: server.adminUrl } },
      );
      sampling = false;
      await sampler;
      await new Promise((resolve) => setTimeout(resolve, 500)); // the backends exit and are reaped
      const cpu = serverCpu() - cpu0;
      const result = JSON.parse(out).results[0];
      const top = await admin.query(
        `select calls::int, round(total_exec_time::numeric, 1)::float as ms, round((total_exec_time / calls)::numeric, 3)::float as ms_per_call,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as query
         from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname like 'allot_bench%'
         order by total_exec_time desc limit 10`,
      );
      console.log(`\n== ${tree} ${backend}: ${result.allocationsPerSecond}/s, ${result.statementsPerAllocation} statements per allocation`);
      console.log(`PostgreSQL CPU for the whole run (set-up of 400 nodes included): ${cpu.toFixed(2)} s`);
      console.log(`lock waits: ${lockWaits} of ${samples} sampled active backends`);
      for (const r of top.rows) console.log(`${String(r.calls).padStart(6)} ${String(r.ms).padStart(8)} ms ${String(r.ms_per_call).padStart(7)} ms/call  ${r.query}`);
    }
  }
} finally {
  await admin.end();
  await server.stop();
}
