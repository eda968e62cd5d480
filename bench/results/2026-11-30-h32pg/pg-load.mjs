// node --expose-gc pg-load.mjs URL TREE…: alternated full loads of each build's provider index on
// PostgreSQL (ROUNDS rounds, default 3), with the client's CPU and the CPU of the backends connected
// to URL's database as its user (read from /proc before the pool closes: autovacuum, the
// checkpointer and other sessions' backends are not counted). One JSON line per load.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
const [url, ...trees] = process.argv.slice(2);
const u = new URL(url);
const title = `postgres: ${u.username} ${u.pathname.slice(1)} `;
const backendsMs = () => {
  let sum = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (!readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith(title)) continue;
      const st = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      sum += (Number(f[11]) + Number(f[12])) * 10;
    } catch {}
  }
  return sum;
};
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++)
  for (const root of trees) {
    const { openDatabase } = await import(`${root}/dist/db/open.js`);
    const { NameCache } = await import(`${root}/dist/placement/store/names.js`);
    const { ProviderIndex } = await import(`${root}/dist/placement/store/provider-index.js`);
    globalThis.gc?.();
    const db = await openDatabase(url);
    const index = new ProviderIndex(db, new NameCache(), { reloadMs: 600000 });
    const s0 = backendsMs(); const c0 = process.cpuUsage(); const t0 = performance.now();
    await index.load(() => {});
    const ms = performance.now() - t0; const c = process.cpuUsage(c0); const s1 = backendsMs();
    const m = process.memoryUsage();
    console.log(JSON.stringify({ tree: root, round: round + 1, load1: os.loadavg()[0], ms: Math.round(ms), clientCpuMs: Math.round((c.user + c.system) / 1000), serverCpuMs: s1 - s0, rssMb: Math.round(m.rss / 2 ** 20), providers: index.providers.size }));
    await index.close(); await db.close();
  }
