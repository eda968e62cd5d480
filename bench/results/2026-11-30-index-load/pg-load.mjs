// node pg-load.mjs URL TREE…: alternated full loads of each build's provider index on PostgreSQL,
// with the client's CPU and the PostgreSQL server's (every process whose parent is the postmaster
// listening on URL's port, from /proc). One JSON line per load.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
const [url, ...trees] = process.argv.slice(2);
const port = new URL(url).port;
const ticks = () => {
  let sum = 0, postmaster = null;
  const procs = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const st = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      procs.push({ pid: p, ppid: f[1], ms: (Number(f[11]) + Number(f[12])) * 10, children: (Number(f[13]) + Number(f[14])) * 10, cmd });
    } catch {}
  }
  postmaster = procs.find((x) => x.cmd.includes('postgres') && x.cmd.includes(`port=${port}`) || (x.cmd.includes('postgres') && x.cmd.includes(`-p\0${port}`)));
  for (const x of procs) if (postmaster && (x.ppid === postmaster.pid || x.pid === postmaster.pid)) sum += x.ms;
  if (postmaster) sum += postmaster.children; // children that ended (a closed connection's backend)
  return { sum, found: !!postmaster };
};
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++)
  for (const root of trees) {
    const { openDatabase } = await import(`${root}/dist/db/open.js`);
    const { NameCache } = await import(`${root}/dist/placement/store/names.js`);
    const { ProviderIndex } = await import(`${root}/dist/placement/store/provider-index.js`);
    const db = await openDatabase(url);
    const index = new ProviderIndex(db, new NameCache(), { reloadMs: 600000 });
    const s0 = ticks(); const c0 = process.cpuUsage(); const t0 = performance.now();
    await index.load(() => {});
    const ms = performance.now() - t0; const c = process.cpuUsage(c0); const s1 = ticks();
    console.log(JSON.stringify({ tree: root, round: round + 1, load1: os.loadavg()[0], ms: Math.round(ms), clientCpuMs: Math.round((c.user + c.system) / 1000), serverCpuMs: s1.sum - s0.sum, serverFound: s0.found, providers: index.providers.size }));
    await index.close(); await db.close();
  }
