// node load-dist.mjs TREE DB_URL [RUNS]: full index loads from TREE/dist/ (any build), with each thread's CPU (/proc/self/task; the SQLite reader thread has ended by then)
const root = process.argv[2]; const url = process.argv[3]; const runs = Number(process.argv[4] ?? 3);
const { openDatabase } = await import(`${root}/dist/db/open.js`);
const { NameCache } = await import(`${root}/dist/placement/store/names.js`);
const { ProviderIndex } = await import(`${root}/dist/placement/store/provider-index.js`);
import { readdirSync, readFileSync } from 'node:fs';
const threads = () => { const m = new Map(); for (const t of readdirSync('/proc/self/task')) { try { const st = readFileSync(`/proc/self/task/${t}/stat`, 'utf8'); const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')); const f = st.slice(st.lastIndexOf(')') + 2).split(' '); m.set(t, { comm, ms: (Number(f[11]) + Number(f[12])) * 10 }); } catch {} } return m; };
const database = await openDatabase(url);
let index = null;
for (let i = 0; i < runs; i++) {
  await index?.close(); index = null; globalThis.gc?.();
  index = new ProviderIndex(database, new NameCache(), { reloadMs: 60000 });
  const before = threads();
  const t0 = performance.now();
  await index.load(() => {});
  const after = threads(); const per = [];
  for (const [t, v] of after) { const d = v.ms - (before.get(t)?.ms ?? 0); if (d > 0) per.push(`${v.comm}:${d}`); }
  console.log('threads cpu ms', per.join(' '));
  const ms = performance.now() - t0;
  const m = process.memoryUsage();
  console.log(JSON.stringify({ run: i + 1, ms: Math.round(ms), providers: index.providers.size, heapMb: Math.round(m.heapUsed / 2**20), rssMb: Math.round(m.rss / 2**20) }));
}
await index?.close();
await database.close();
