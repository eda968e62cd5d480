// Allocation candidates past the size where every request used to fail (a spread of every
// remaining anchor into one push() threw "Maximum call stack size exceeded" beyond ~150 000
// providers): 250 000 flat providers, filled directly in the database, on both databases. Speed
// at a million is the benchmark's business (bench/candidates.ts); this proves requests succeed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { fillProviders } from '../helpers/fill-providers.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';

const PROVIDERS = Number(process.env.SCALE_PROVIDERS ?? 250_000);

for (const dialect of DIALECTS) {
  describe(`allocation candidates over ${PROVIDERS} providers (${dialect})`, () => {
    let server: TestServer;
    let api: PlacementClient;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-scale-'));
    before(async () => {
      // the filler and the server must see one database: a file, not SQLite's in-memory one
      const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'scale.db')}` : await freshDatabaseUrl(dialect);
      await fillProviders(url, dialect, PROVIDERS);
      server = await startServer({ db: url, maxCandidates: 1000 });
      api = new PlacementClient(server.placementUrl);
    });
    after(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('every strategy answers, limited or not, and only with providers that have room', async () => {
      for (const strategy of ['stable', 'random', 'pack', 'spread']) {
        for (const query of ['resources=VCPU:8&limit=50', 'resources=VCPU:8&required=HW_CPU_X86_AVX2&limit=50', 'resources=VCPU:8']) {
          const res = await api.get(`/allocation_candidates?${query}&allot_strategy=${strategy}`);
          assert.equal(res.status, 200, `${strategy} ${query}: ${res.text.slice(0, 300)}`);
          const expected = query.includes('limit=50') ? 50 : 1000; // the configured cap
          assert.equal(res.body.allocation_requests.length, expected, `${strategy} ${query}: ${res.text.slice(0, 300)}`);
          for (const summary of Object.values(res.body.provider_summaries) as Array<{ resources: { VCPU: { capacity: number; used: number } } }>) {
            assert.ok(summary.resources.VCPU.capacity - summary.resources.VCPU.used >= 8, 'a candidate has room');
          }
        }
      }
    });
  });
}
