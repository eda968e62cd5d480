// node search-cpu.mjs TREE DB_URL: the search's CPU (medians) over an index loaded from TREE/dist/
const root = process.argv[2]; const url = process.argv[3];
const { openDatabase } = await import(`${root}/dist/db/open.js`);
const { NameCache } = await import(`${root}/dist/placement/store/names.js`);
const { ProviderIndex } = await import(`${root}/dist/placement/store/provider-index.js`);
const { searchCandidates } = await import(`${root}/dist/placement/candidates/search.js`);
const database = await openDatabase(url);
const index = new ProviderIndex(database, new NameCache(), { reloadMs: 600000 });
await index.load(() => {});
const request = (required) => ({ groups: [{ suffix: '', resources: new Map([['VCPU', 1], ['MEMORY_MB', 1024], ['DISK_GB', 10]]), requiredTraits: required, forbiddenTraits: new Set(), memberOf: [], forbiddenAggregates: new Set(), inTreeRoot: null }], isolate: false, rootRequired: new Set(), rootForbidden: new Set(), sameSubtrees: [], nestedAware: true });
const cases = { limit50: [request([]), 50, 200], trait: [request([['HW_CPU_X86_AVX2']]), 50, 200], noLimit: [request([]), 10000, 20], spread50: [request([]), 50, 10] };
const out = {};
for (const [name, [req, max, n]] of Object.entries(cases)) {
  const xs = [];
  for (let i = 0; i < n + 5; i++) { const c0 = process.cpuUsage(); searchCandidates(index, req, { maxCandidates: max, strategy: name === 'spread50' ? 'spread' : 'stable' }); const c = process.cpuUsage(c0); if (i >= 5) xs.push((c.user + c.system) / 1000); }
  xs.sort((a, b) => a - b); out[name] = +xs[Math.floor(xs.length / 2)].toFixed(3);
}
console.log(root.split('/').pop(), JSON.stringify(out));
await index.close(); await database.close();
