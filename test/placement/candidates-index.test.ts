// Allocation candidates come from a per-process in-memory index of the providers. These tests
// prove it follows every committed change: at once in the process that wrote, and (soon) in other
// processes — over NOTIFY on PostgreSQL, through SQLite's data_version on a shared file.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type SpawnedServer, type TestServer, spawnServer, startServer } from '../helpers/server.js';

const owner = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE' };

async function candidateHosts(api: PlacementClient, query = 'resources=VCPU:2'): Promise<string[]> {
  const res = await api.get(`/allocation_candidates?${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body.allocation_requests.map((r: { allocations: Record<string, unknown> }) => Object.keys(r.allocations)[0]).sort();
}

/** Poll until `read` satisfies `ok` (a guard against a hang; the deadline is generous). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`${what}; last seen ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const dialect of DIALECTS) {
  describe(`candidates follow every change in the writing process (${dialect})`, () => {
    let server: TestServer;
    let api: PlacementClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      api = new PlacementClient(server.placementUrl);
    });
    after(() => server.close());

    test('providers, inventories, claims, traits, aggregates and deletes show at once', async () => {
      assert.deepEqual(await candidateHosts(api), []);
      const rp = (await api.post('/resource_providers', { name: 'h1' })).body.uuid;
      await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } });
      assert.deepEqual(await candidateHosts(api), [rp]);
      const consumer = randomUUID();
      await api.put(`/allocations/${consumer}`, { allocations: { [rp]: { resources: { VCPU: 3 } } }, consumer_generation: null, ...owner });
      assert.deepEqual(await candidateHosts(api), [], 'one VCPU left, two asked');
      await api.delete(`/allocations/${consumer}`);
      assert.deepEqual(await candidateHosts(api), [rp], 'freed again');
      const gen = (await api.get(`/resource_providers/${rp}`)).body.generation;
      await api.put(`/resource_providers/${rp}/traits`, { resource_provider_generation: gen, traits: ['HW_CPU_X86_AVX2'] });
      assert.deepEqual(await candidateHosts(api, 'resources=VCPU:2&required=HW_CPU_X86_AVX2'), [rp]);
      const agg = randomUUID();
      await api.at('1.18').put(`/resource_providers/${rp}/aggregates`, [agg]); // no generation bump before 1.19
      assert.deepEqual(await candidateHosts(api, `resources=VCPU:2&member_of=${agg}`), [rp]);
      await api.delete(`/resource_providers/${rp}/inventories`);
      assert.deepEqual(await candidateHosts(api), []);
      await api.delete(`/resource_providers/${rp}`);
      assert.deepEqual(await candidateHosts(api, `resources=VCPU:2&member_of=${agg}`), []);
    });
  });
}

describe('candidates follow changes made by other processes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-index-'));
  const runs: Array<[string, () => Promise<string>]> = [
    ['PostgreSQL (NOTIFY)', () => freshDatabaseUrl('postgres')],
    ['a shared SQLite file (data_version)', async () => `sqlite:${path.join(dir, 'shared.db')}`],
  ];
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, database] of runs) {
    test(name, async () => {
      const db = await database();
      const servers: SpawnedServer[] = [];
      try {
        servers.push(await spawnServer(['--db', db]));
        servers.push(await spawnServer(['--db', db]));
        const [writer, reader] = servers.map((s) => new PlacementClient(s.placementUrl));
        assert.deepEqual(await candidateHosts(reader!), [], 'the reader has loaded its index');
        const rp = (await writer!.post('/resource_providers', { name: 'far' })).body.uuid;
        await writer!.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 2 } } });
        await eventually(() => candidateHosts(reader!), (h) => h.includes(rp), 'the new provider reached the other process');
        await writer!.put(`/allocations/${randomUUID()}`, { allocations: { [rp]: { resources: { VCPU: 2 } } }, consumer_generation: null, ...owner });
        await eventually(() => candidateHosts(reader!), (h) => !h.includes(rp), 'the claim reached the other process');
      } finally {
        for (const s of servers) assert.equal(await s.stop(), 0);
      }
    });
  }
});
