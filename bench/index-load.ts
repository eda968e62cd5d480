// `npx tsx bench/index-load.ts --db URL [--runs 3] [--fill N]`: how long a full load of the
// Placement provider index takes in this process (what `allot serve` does before /readyz says
// 200), and the memory it holds, printed as JSON. Each run loads a new index (the one before is
// dropped). `--fill N` first fills an empty database with the candidates bench's providers
// (bench/lib/fill-candidates.ts). Run it under `node --cpu-prof --import tsx` to see where the time
// goes (bench/cpu-profile.ts reads the profile).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { dialectOf } from '../src/db/database.js';
import { openDatabase } from '../src/db/open.js';
import { NameCache } from '../src/placement/store/names.js';
import { ProviderIndex } from '../src/placement/store/provider-index.js';
import { fillCandidateProviders } from './lib/fill-candidates.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    runs: { type: 'string', default: '3' },
    fill: { type: 'string' },
  },
});
if (!args.db) {
  console.error('usage: npx tsx bench/index-load.ts --db URL [--runs 3] [--fill N]');
  process.exit(2);
}
const url = args.db;
const dialect = dialectOf(url);
const round = (n: number) => Math.round(n * 100) / 100;
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

let fillMs: number | undefined;
if (args.fill) {
  const t0 = performance.now();
  await fillCandidateProviders(url, dialect, Number(args.fill));
  fillMs = Math.round(performance.now() - t0);
}

const database = await openDatabase(url);
const runs: Array<{ ms: number; cpuMs: number; providers: number; heapUsedMb: number; rssMb: number }> = [];
try {
  let index: ProviderIndex | null = null;
  for (let i = 0; i < Number(args.runs); i++) {
    await index?.close();
    index = null;
    globalThis.gc?.();
    index = new ProviderIndex(database, new NameCache(), { reloadMs: 60_000 });
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await index.load(() => {});
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const memory = process.memoryUsage();
    runs.push({
      ms: Math.round(ms),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      providers: index.providers.size,
      heapUsedMb: mb(memory.heapUsed),
      rssMb: mb(memory.rss),
    });
    console.error(`# run ${i + 1}: ${JSON.stringify(runs.at(-1))}`);
  }
  await index?.close();
} finally {
  await database.close();
}
console.log(JSON.stringify({ bench: 'provider_index_load', node: process.version, dialect, loadAverage: os.loadavg().map(round), fillMs, runs }, null, 2));
