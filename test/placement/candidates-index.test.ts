// Allocation candidates come from a per-process in-memory index of the providers. These tests
// prove it follows every committed change: at once in the process that wrote, and (soon) in other
// processes — over NOTIFY on PostgreSQL, through SQLite's data_version on a shared file.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { fillProviders } from '../helpers/fill-providers.js';
import { type SpawnedServer, serverFor, spawnServer, startServer, type TestServer } from '../helpers/server.js';

const owner = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE' };

async function candidateHosts(api: PlacementClient, query = 'resources=VCPU:2'): Promise<string[]> {
  const res = await api.get(`/allocation_candidates?${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body.allocation_requests.map((r: { allocations: Record<string, unknown> }) => Object.keys(r.allocations)[0]).sort();
}

/** The index's full loads of one kind finished so far in the server at `url`, and the seconds they took in all. */
async function indexLoads(url: string, kind: 'wait' | 'background'): Promise<{ count: number; seconds: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{kind="${kind}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  return { count: value('allot_placement_candidate_index_load_seconds_count'), seconds: value('allot_placement_candidate_index_load_seconds_sum') };
}

/** Poll until `read` satisfies `ok` (a guard against a hang; the deadline is generous). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, withinMs = 30_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`${what}; last seen ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const dialect of DIALECTS) {
  describe(`candidates follow every change in the writing process (${dialect})`, () => {
    let api: PlacementClient;
    serverFor(dialect, (server) => (api = new PlacementClient(server.placementUrl)));

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

    test('after concurrent claims, moves and deletes the candidates show exactly the stored usage', async () => {
      const hosts: string[] = [];
      for (let i = 0; i < 3; i++) {
        const uuid = (await api.post('/resource_providers', { name: `busy-${i}` })).body.uuid;
        await api.put(`/resource_providers/${uuid}/inventories`, {
          resource_provider_generation: 0,
          inventories: { SRIOV_NET_VF: { total: 100 }, PCI_DEVICE: { total: 100 } },
        });
        hosts.push(uuid);
      }
      const consumers = Array.from({ length: 40 }, () => randomUUID());
      const claim = (consumer: string, i: number) =>
        api.put(`/allocations/${consumer}`, {
          allocations: { [hosts[i % 3]!]: { resources: { SRIOV_NET_VF: 1 + (i % 2), PCI_DEVICE: 1 } } },
          consumer_generation: null,
          ...owner,
        });
      await Promise.all([
        ...consumers.map((c, i) => claim(c, i)),
        ...Array.from({ length: 20 }, () => api.get('/allocation_candidates?resources=SRIOV_NET_VF:1')),
      ]);
      // Move some consumers to another host and class mix, delete others, all at once.
      await Promise.all(
        consumers.slice(0, 20).map(async (c, i) => {
          if (i % 2) return api.delete(`/allocations/${c}`);
          const { body } = await api.get(`/allocations/${c}`);
          return api.put(`/allocations/${c}`, {
            allocations: { [hosts[(i + 1) % 3]!]: { resources: { PCI_DEVICE: 3 } } },
            consumer_generation: body.consumer_generation,
            ...owner,
          });
        }),
      );
      const { body } = await api.get('/allocation_candidates?resources=SRIOV_NET_VF:1,PCI_DEVICE:1');
      for (const host of hosts) {
        const { body: usage } = await api.get(`/resource_providers/${host}/usages`);
        const summary = body.provider_summaries[host].resources;
        assert.deepEqual({ SRIOV_NET_VF: summary.SRIOV_NET_VF.used, PCI_DEVICE: summary.PCI_DEVICE.used }, usage.usages, `usage of ${host}`);
      }
    });

    test('trees and sharing follow re-parenting, aggregates and the sharing trait', async () => {
      const create = async (name: string, inventories: Record<string, { total: number }>, parent?: string) => {
        const uuid = (await api.post('/resource_providers', { name, ...(parent ? { parent_provider_uuid: parent } : {}) })).body.uuid;
        await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
        return uuid;
      };
      const roots = (query: string) =>
        api.get(`/allocation_candidates?${query}`).then((res) => {
          assert.equal(res.status, 200, res.text);
          return Object.keys(res.body.provider_summaries).sort();
        });
      const hostA = await create('tree-a', { MEMORY_MB: { total: 1024 } });
      const hostB = await create('tree-b', { MEMORY_MB: { total: 1024 } });
      const numa = await create('numa', { VCPU: { total: 8 } }, hostA);
      const both = 'resources=VCPU:1,MEMORY_MB:64';
      assert.deepEqual(await roots(both), [hostA, numa].sort());

      // Move the NUMA node to the other tree: the candidate follows it.
      const moved = await api.put(`/resource_providers/${numa}`, { name: 'numa', parent_provider_uuid: hostB });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual(await roots(both), [hostB, numa].sort());

      // A disk pool shares with tree A once they share an aggregate and it has the trait.
      const pool = await create('pool', { DISK_GB: { total: 100 } });
      const withDisk = 'resources=MEMORY_MB:64,DISK_GB:10';
      assert.deepEqual(await roots(withDisk), []);
      const agg = randomUUID();
      await api.at('1.18').put(`/resource_providers/${pool}/aggregates`, [agg]);
      await api.at('1.18').put(`/resource_providers/${hostA}/aggregates`, [agg]);
      assert.deepEqual(await roots(withDisk), [], 'not shared without the trait');
      const poolGen = (await api.get(`/resource_providers/${pool}`)).body.generation;
      await api.put(`/resource_providers/${pool}/traits`, { resource_provider_generation: poolGen, traits: ['MISC_SHARES_VIA_AGGREGATE'] });
      assert.deepEqual(await roots(withDisk), [hostA, pool].sort());
      await api.at('1.18').put(`/resource_providers/${hostA}/aggregates`, []);
      assert.deepEqual(await roots(withDisk), [], 'tree A left the aggregate');
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
        await eventually(
          () => candidateHosts(reader!),
          (h) => h.includes(rp),
          'the new provider reached the other process',
        );
        await writer!.put(`/allocations/${randomUUID()}`, { allocations: { [rp]: { resources: { VCPU: 2 } } }, consumer_generation: null, ...owner });
        await eventually(
          () => candidateHosts(reader!),
          (h) => !h.includes(rp),
          'the claim reached the other process',
        );
      } finally {
        for (const s of servers) assert.equal(await s.stop(), 0);
      }
    });
  }
});

// The LISTEN connection carries the other processes' changes; when it is made again, what they
// announced meanwhile is lost and the index reads every provider again — in the background, so no
// search waits for a full load after a failover (at a million providers, seconds each).
describe('the LISTEN connection made again (postgres)', () => {
  test('every provider is read again in the background, and no search waits for it', async () => {
    const url = await freshDatabaseUrl('postgres');
    const server = await startServer({ db: url });
    try {
      const api = new PlacementClient(server.placementUrl);
      const rp = (await api.post('/resource_providers', { name: 'known' })).body.uuid;
      await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 64 } } });
      assert.deepEqual(await candidateHosts(api, 'resources=VCPU:64'), [rp]);
      const waited = await indexLoads(server.url, 'wait');
      const background = await indexLoads(server.url, 'background');

      // the connection that LISTENs (its last statement: the LISTEN, or its ping) is cut
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const cut = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() and (query like 'LISTEN %' or query = 'select 1')`,
        );
        assert.ok(cut.rowCount! >= 1, 'the LISTEN connection was found');
      } finally {
        await admin.end();
      }
      // changes nobody announces (written behind the server's back): only a full read finds them
      await fillProviders(url, 'postgres', 10);
      const found = await eventually(
        () => candidateHosts(api, 'resources=VCPU:1'),
        (hosts) => hosts.length === 11,
        'the providers written while nobody listened reached the index',
      );
      assert.ok(found.includes(rp));
      assert.ok((await indexLoads(server.url, 'background')).count > background.count, 'a background reload found them');
      assert.deepEqual(await indexLoads(server.url, 'wait'), waited, 'no search waited for a full load');
    } finally {
      await server.close();
    }
  });
});

// The safety net re-reads every provider in the background while searches go on with what the
// index holds; a claim or release committed while such a reload runs must still show in the very
// next search (a chunk read before the change must not overwrite it). The providers written to
// come first in id order, then 20 000 filled in the database: they share the first chunk a reload
// reads, which takes long enough for writes to land meanwhile. The interval is at its minimum, so
// reloads follow each other (every 30× a reload's time).
for (const dialect of DIALECTS) {
  describe(`candidates stay exact while the index reloads in the background (${dialect})`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-reload-'));
    let server: TestServer;
    let api: PlacementClient;
    const targets: string[] = [];
    const query = 'resources=VCPU:4,CUSTOM_RELOAD:1';
    const free = (except: string | null) => targets.filter((t) => t !== except).sort();
    const backgroundLoads = () => indexLoads(server.url, 'background');

    before(async () => {
      const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'reload.db')}` : await freshDatabaseUrl(dialect);
      server = await startServer({ db: url, candidateIndexReload: 10 });
      api = new PlacementClient(server.placementUrl);
      assert.equal((await api.at('1.7').put('/resource_classes/CUSTOM_RELOAD')).status, 201);
      for (let i = 0; i < 4; i++) {
        const rp = (await api.post('/resource_providers', { name: `target-${i}` })).body.uuid;
        await api.put(`/resource_providers/${rp}/inventories`, {
          resource_provider_generation: 0,
          inventories: { VCPU: { total: 4 }, CUSTOM_RELOAD: { total: 1 } },
        });
        targets.push(rp);
      }
      await fillProviders(url, dialect, 20_000);
      // written behind the server's back: the safety net is what brings them in (on SQLite also data_version)
      await eventually(
        () => api.get('/allocation_candidates?resources=VCPU:64&limit=1').then((r) => Object.keys(r.body.provider_summaries ?? {}).length),
        (found) => found === 1,
        'the filled providers reached the index',
      );
    });
    after(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('every claim and release shows in the next search, reload after reload', async () => {
      assert.deepEqual(await candidateHosts(api, query), free(null));
      const before = (await backgroundLoads()).count;
      // A reload comes every max(10 s, 30 × the last reload's time): on a loaded 2-core machine a
      // reload of 20 000 providers takes up to a second or more, so three can take over a minute.
      const deadline = Date.now() + 240_000;
      let rounds = 0;
      // at least three background reloads begun and ended while claims and releases went on
      while ((await backgroundLoads()).count < before + 3) {
        assert.ok(Date.now() < deadline, `three background reloads within 240 s (saw ${(await backgroundLoads()).count - before})`);
        const target = targets[rounds % targets.length]!;
        const consumer = randomUUID();
        const claimed = await api.put(`/allocations/${consumer}`, {
          allocations: { [target]: { resources: { VCPU: 4, CUSTOM_RELOAD: 1 } } },
          consumer_generation: null,
          ...owner,
        });
        assert.equal(claimed.status, 204, claimed.text);
        assert.deepEqual(await candidateHosts(api, query), free(target), `round ${rounds}: the claim shows`);
        // and still shows a moment later, after a reload chunk read before it may have landed
        await new Promise((r) => setTimeout(r, 5));
        assert.deepEqual(await candidateHosts(api, query), free(target), `round ${rounds}: the claim still shows`);
        assert.equal((await api.delete(`/allocations/${consumer}`)).status, 204);
        assert.deepEqual(await candidateHosts(api, query), free(null), `round ${rounds}: the release shows`);
        rounds++;
      }
    });

    // A resource class deleted tells every index that anything may have changed (names are
    // forgotten): the next search waits for a full load. Asked just as a background reload starts, it
    // must not run beside the background one — each drops at its end the providers it did not read
    // itself, so two at once lost providers from the index (a CI run: a free target missing).
    test('a full load asked for while a background reload runs keeps every provider', async () => {
      const everyAvx2 = 'resources=VCPU:64&required=HW_CPU_X86_AVX2'; // 5 000 of the filled providers
      for (let attempt = 0; attempt < 3; attempt++) {
        const spare = `CUSTOM_SPARE_${attempt}`;
        assert.equal((await api.at('1.7').put(`/resource_classes/${spare}`)).status, 201);
        // a background reload has just ended: the next is due 30× its time later (at least 10 ms)
        const seen = await backgroundLoads();
        const ended = await eventually(
          async () => {
            await candidateHosts(api, query); // a search is what starts a reload that is due
            return backgroundLoads();
          },
          (now) => now.count > seen.count,
          'a background reload ended',
          300_000,
        );
        const tookMs = ((ended.seconds - seen.seconds) / (ended.count - seen.count)) * 1000;
        await new Promise((r) => setTimeout(r, Math.max(10, 30 * tookMs) + 20));
        // this search starts the background reload (without waiting for it) …
        assert.deepEqual(await candidateHosts(api, query), free(null), `attempt ${attempt}: before`);
        // … and this delete asks for a full load, which the next search waits for
        assert.equal((await api.delete(`/resource_classes/${spare}`)).status, 204);
        assert.deepEqual(await candidateHosts(api, query), free(null), `attempt ${attempt}: every target after the full load`);
        // a background reload that ran on beside it would end by now and drop what the full load read
        await new Promise((r) => setTimeout(r, Math.max(1000, 3 * tookMs)));
        assert.deepEqual(await candidateHosts(api, query), free(null), `attempt ${attempt}: every target a while after the full load`);
        const avx2 = await api.get(`/allocation_candidates?${everyAvx2}`);
        assert.equal(avx2.status, 200, avx2.text);
        assert.equal(Object.keys(avx2.body.provider_summaries).length, 5_000, `attempt ${attempt}: every filled provider after the full load`);
      }
    });
  });
}
