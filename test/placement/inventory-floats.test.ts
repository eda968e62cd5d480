// allocation_ratio is a float on the wire (the api-ref's `type: float`): Placement writes `1.0`
// where JSON.stringify would write `1`. Checked on the answers' text, as a client's decoder sees it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { serverFor } from '../helpers/server.js';

/** every allocation_ratio literal of an answer, as written, in order */
const ratios = (text: string) => [...text.matchAll(/"allocation_ratio":\s*([^,}\s]+)/g)].map((m) => m[1]);

for (const dialect of DIALECTS) {
  describe(`inventory answers write allocation_ratio as a float (${dialect})`, () => {
    let api: PlacementClient;
    serverFor(dialect, (server) => (api = new PlacementClient(server.placementUrl)));

    test('a whole number gets its .0 in every inventory answer; other floats are written as they are', async () => {
      const uuid = (await api.post('/resource_providers', { name: 'floats' })).body.uuid as string;
      const inventories = `/resource_providers/${uuid}/inventories`;

      const created = await api.post(inventories, { resource_class: 'VCPU', total: 8, resource_provider_generation: 0 });
      assert.equal(created.status, 201);
      assert.deepEqual(ratios(created.text), ['1.0'], 'the default ratio');

      const replaced = await api.put(inventories, {
        resource_provider_generation: created.body.resource_provider_generation,
        inventories: {
          VCPU: { total: 8, allocation_ratio: 16 },
          MEMORY_MB: { total: 4096, allocation_ratio: 1.5 },
          DISK_GB: { total: 100, allocation_ratio: 3e38 },
        },
      });
      assert.equal(replaced.status, 200);
      const expected = { VCPU: '16.0', MEMORY_MB: '1.5', DISK_GB: '3e+38' };
      const byClass = (text: string) => Object.fromEntries(Object.keys(JSON.parse(text).inventories).map((rc, i) => [rc, ratios(text)[i]]));
      assert.deepEqual(byClass(replaced.text), expected);
      assert.deepEqual(byClass((await api.get(inventories)).text), expected);
      assert.deepEqual(ratios((await api.get(`${inventories}/VCPU`)).text), ['16.0']);

      const updated = await api.put(`${inventories}/MEMORY_MB`, {
        resource_provider_generation: replaced.body.resource_provider_generation,
        total: 4096,
        allocation_ratio: 2,
      });
      assert.equal(updated.status, 200);
      assert.deepEqual(ratios(updated.text), ['2.0']);
      // the value itself is unchanged: a client reading numbers sees 2
      assert.equal(updated.body.allocation_ratio, 2);
      assert.equal(updated.body.total, 4096);
    });
  });
}
