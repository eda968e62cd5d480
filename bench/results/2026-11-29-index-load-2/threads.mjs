// node threads.mjs TREE DB_URL [RUNS]: full provider-index loads from TREE/dist/ (any build), with
// each thread's CPU (/proc/self/task, sampled every 50 ms during the load, so the SQLite reader
// thread is counted before it ends): where a load's time goes between the main thread, SQLite's
// reader thread and the collector's helpers. One JSON line per load.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
const [root, url] = process.argv.slice(2);
const runs = Number(process.argv[4] ?? 3);
const { openDatabase } = await import(`${root}/dist/db/open.js`);
const { NameCache } = await import(`${root}/dist/placement/store/names.js`);
const { ProviderIndex } = await import(`${root}/dist/placement/store/provider-index.js`);
const threads = () => {
  const m = new Map();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const st = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      m.set(t, { comm, ms: (Number(f[11]) + Number(f[12])) * 10 });
    } catch {}
  }
  return m;
};
const database = await openDatabase(url);
let index = null;
for (let i = 0; i < runs; i++) {
  await index?.close();
  index = null;
  globalThis.gc?.();
  index = new ProviderIndex(database, new NameCache(), { reloadMs: 600000 });
  const before = threads();
  const seen = new Map();
  const sample = () => { for (const [t, v] of threads()) seen.set(t, v); };
  const timer = setInterval(sample, 50);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await index.load(() => sample());
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(timer);
  sample();
  const per = {};
  let main = 0, reader = 0, others = 0;
  for (const [t, v] of seen) {
    const d = v.ms - (before.get(t)?.ms ?? 0);
    if (d <= 0) continue;
    if (t === String(process.pid)) main += d;
    else if (!before.has(t)) reader += d; // a thread born during the load: the SQLite reader
    else others += d;
  }
  const m = process.memoryUsage();
  console.log(JSON.stringify({ tree: root, run: i + 1, load1: os.loadavg()[0], ms: Math.round(ms), cpuMs: Math.round((cpu.user + cpu.system) / 1000), mainMs: main, readerMs: reader, otherThreadsMs: others, providers: index.providers.size, heapMb: Math.round(m.heapUsed / 2 ** 20), rssMb: Math.round(m.rss / 2 ** 20) }));
}
await index?.close();
await database.close();
