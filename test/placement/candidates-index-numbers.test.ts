// A full load reads the numbers packed as text (on SQLite by its reader thread; parsed on the main
// one), a re-read of changed providers on the main connection: both must give each inventory
// exactly the capacity a claim computes, floor((total - reserved) × allocation_ratio), for ratios
// that are not exact in binary (0.3 × 10 is 3.0000000000000004) and for one SQLite writes with an
// exponent (1e-7).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';
for (const dialect of DIALECTS) {
  test(`a full load of the index reads every inventory's numbers exactly as written (${dialect})`, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-numbers-'));
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'numbers.db')}` : await freshDatabaseUrl(dialect);
    const inventories = [
      { total: 10, reserved: 0, allocation_ratio: 0.3 },
      { total: 10, reserved: 1, allocation_ratio: 1.1 },
      { total: 10, reserved: 0, allocation_ratio: 0.7 },
      { total: 7, reserved: 2, allocation_ratio: 2.675 },
      { total: 100_000_000, reserved: 0, allocation_ratio: 1e-7 },
      { total: 2_147_483_647, reserved: 3, allocation_ratio: 16 },
    ];
    const capacities = (summaries: Record<string, { resources: { VCPU: { capacity: number } } }>) =>
      Object.fromEntries(Object.entries(summaries).map(([rp, s]) => [rp, s.resources.VCPU.capacity]));
    const expected: Record<string, number> = {};
    const writer = await startServer({ db: url });
    let rereadByWriter: Record<string, number>;
    try {
      const api = new PlacementClient(writer.placementUrl);
      for (const [i, inv] of inventories.entries()) {
        const rp = (await api.post('/resource_providers', { name: `numbers-${i}` })).body.uuid as string;
        const put = await api.put(`/resource_providers/${rp}/inventories`, {
          resource_provider_generation: 0,
          inventories: { VCPU: { ...inv, max_unit: 1 } },
        });
        assert.equal(put.status, 200, put.text);
        expected[rp] = Math.floor((inv.total - inv.reserved) * inv.allocation_ratio);
      }
      rereadByWriter = capacities((await api.get('/allocation_candidates?resources=VCPU:1')).body.provider_summaries);
    } finally {
      await writer.close();
    }
    const loader = await startServer({ db: url });
    try {
      const loaded = capacities((await new PlacementClient(loader.placementUrl).get('/allocation_candidates?resources=VCPU:1')).body.provider_summaries);
      assert.deepEqual(rereadByWriter, expected, 're-read by the process that wrote them');
      assert.deepEqual(loaded, expected, 'read by a full load at start');
    } finally {
      await loader.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
