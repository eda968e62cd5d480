// A server killed (SIGKILL) in the middle of a stream of concurrent claims: after a restart every
// claim that was acknowledged is there, and usage equals the allocations that exist. On SQLite this
// covers the group commit, which answers a batch only after its COMMIT is synced to disk.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { spawnServer } from '../helpers/server.js';

for (const dialect of DIALECTS) {
  describe(`acknowledged claims survive a killed server (${dialect})`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-durability-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('every 204 is still there after SIGKILL and a restart', async () => {
      const db = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'allot.db')}` : await freshDatabaseUrl('postgres');
      const first = await spawnServer(['--db', db]);
      const api = new PlacementClient(first.placementUrl);
      const rp = randomUUID();
      assert.equal((await api.post('/resource_providers', { name: `durable-${rp}`, uuid: rp })).status, 200);
      const inventories = { VCPU: { total: 1_000_000 } };
      assert.equal((await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories })).status, 200);

      const acknowledged: string[] = [];
      let killed = false;
      const client = async () => {
        while (!killed) {
          const consumer = randomUUID();
          const res = await api
            .put(`/allocations/${consumer}`, {
              allocations: { [rp]: { resources: { VCPU: 1 } } },
              project_id: randomUUID(),
              user_id: randomUUID(),
              consumer_generation: null,
              consumer_type: 'INSTANCE',
            })
            .catch(() => null); // the connection dies with the server
          if (res?.status === 204) acknowledged.push(consumer);
        }
      };
      const clients = Array.from({ length: 16 }, client);
      // Kill once a good number of claims went through, with the others still in flight.
      while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 5));
      await first.kill();
      killed = true;
      await Promise.all(clients);

      const second = await spawnServer(['--db', db]);
      try {
        const again = new PlacementClient(second.placementUrl);
        const { body } = await again.get(`/resource_providers/${rp}/allocations`);
        const present = new Set(Object.keys(body.allocations));
        const lost = acknowledged.filter((c) => !present.has(c));
        assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged claims were lost`);
        const usages = await again.get(`/resource_providers/${rp}/usages`);
        assert.equal(usages.body.usages.VCPU, present.size, 'usage counts exactly the allocations that exist');
      } finally {
        await second.stop();
      }
    });
  });
}
