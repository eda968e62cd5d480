// The typed Placement client against a real allot on SQLite and PostgreSQL: microversion
// negotiation, every resource's happy path, Placement's error format parsed into AllotApiError,
// and retryOnConflict against real concurrent writers.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { AllotApiError, AllotClient, PlacementClient, retryOnConflict } from '../../src/client/index.js';
import { DIALECTS } from '../helpers/databases.js';
import { type TestServer, serverFor } from '../helpers/server.js';

for (const dialect of DIALECTS) {
  describe(`Placement client (${dialect})`, () => {
    let server: TestServer;
    let placement: PlacementClient;
    /** a service user (Nova): Placement's default policy lets only the service role reshape */
    let asService: PlacementClient;
    serverFor(dialect, (s) => {
      server = s;
      placement = new AllotClient({ url: s.url, token: 'admin' }).placement;
      asService = new AllotClient({ url: s.url, token: 'nova', headers: { 'x-roles': 'service' } }).placement;
    });

    test('negotiates the newest microversion both know, or uses a pinned one', async () => {
      assert.equal(await placement.microversion(), '1.39');
      const old = placement.at('1.10');
      assert.equal(await old.microversion(), '1.10');
      // before 1.20 POST answers no body: the client reads the provider back
      const rp = await old.createProvider({ name: 'old-style' });
      assert.equal(rp.name, 'old-style');
      assert.equal(rp.generation, 0);
      assert.equal(rp.root_provider_uuid, undefined, 'root_provider_uuid is a 1.14 field');
    });

    test('providers, inventories, usages, traits, aggregates and resource classes', async () => {
      const rp = await placement.createProvider({ name: 'cn1' });
      assert.equal(rp.generation, 0);
      const child = await placement.createProvider({ name: 'cn1-numa0', parent_provider_uuid: rp.uuid });
      assert.equal(child.root_provider_uuid, rp.uuid);
      assert.deepEqual((await placement.listProviders({ in_tree: rp.uuid })).map((p) => p.name).sort(), ['cn1', 'cn1-numa0']);
      assert.equal((await placement.updateProvider(child.uuid, { name: 'cn1-numa-0', parent_provider_uuid: rp.uuid })).name, 'cn1-numa-0');

      const inv = await placement.setInventories(rp.uuid, 0, { VCPU: { total: 16, reserved: 4 }, MEMORY_MB: { total: 65536 } });
      assert.equal(inv.resource_provider_generation, 1);
      assert.equal(inv.inventories.VCPU!.allocation_ratio, 1);
      const one = await placement.setInventory(rp.uuid, 1, 'VCPU', { total: 32, reserved: 4, allocation_ratio: 2 });
      assert.deepEqual([one.total, one.resource_provider_generation], [32, 2]);
      assert.equal((await placement.getInventory(rp.uuid, 'MEMORY_MB')).total, 65536);
      const updated = await placement.updateInventories(rp.uuid, (current) => ({ ...current, DISK_GB: { total: 1000 } }));
      assert.deepEqual(Object.keys(updated.inventories).sort(), ['DISK_GB', 'MEMORY_MB', 'VCPU']);
      await placement.deleteInventory(rp.uuid, 'DISK_GB');
      assert.deepEqual(Object.keys((await placement.getInventories(rp.uuid)).inventories).sort(), ['MEMORY_MB', 'VCPU']);

      assert.deepEqual(await placement.createTrait('CUSTOM_GOLD'), { created: true });
      assert.deepEqual(await placement.createTrait('CUSTOM_GOLD'), { created: false });
      assert.equal(await placement.traitExists('CUSTOM_GOLD'), true);
      assert.equal(await placement.traitExists('CUSTOM_NONE'), false);
      const traits = await placement.updateProviderTraits(rp.uuid, (t) => [...t, 'CUSTOM_GOLD', 'HW_CPU_X86_AVX2']);
      assert.deepEqual(traits.traits.sort(), ['CUSTOM_GOLD', 'HW_CPU_X86_AVX2']);
      assert.deepEqual(await placement.listTraits({ name: 'startswith:CUSTOM_', associated: true }), ['CUSTOM_GOLD']);

      const agg = randomUUID();
      const aggregates = await placement.updateAggregates(rp.uuid, (a) => [...a, agg]);
      assert.deepEqual(aggregates.aggregates, [agg]);
      assert.equal((await placement.listProviders({ member_of: `in:${agg}` }))[0]!.uuid, rp.uuid);

      assert.deepEqual(await placement.createResourceClass('CUSTOM_FPGA'), { created: true });
      assert.equal((await placement.getResourceClass('CUSTOM_FPGA')).name, 'CUSTOM_FPGA');
      assert.ok((await placement.listResourceClasses()).some((c) => c.name === 'CUSTOM_FPGA'));
      await placement.deleteResourceClass('CUSTOM_FPGA');

      assert.deepEqual((await placement.getProviderUsages(rp.uuid)).usages, { MEMORY_MB: 0, VCPU: 0 });
      await placement.deleteProviderTraits(rp.uuid);
      assert.deepEqual((await placement.getProviderTraits(rp.uuid)).traits, []);
    });

    test('allocations: PUT, GET, POST, DELETE, candidates, usages and the reshaper', async () => {
      const rp = await placement.createProvider({ name: 'cn-alloc' });
      await placement.setInventories(rp.uuid, 0, { VCPU: { total: 8 }, MEMORY_MB: { total: 8192 } });
      const c1 = randomUUID();
      const c2 = randomUUID();

      const candidates = await placement.getAllocationCandidates({ resources: 'VCPU:2,MEMORY_MB:1024', limit: 5, in_tree: rp.uuid });
      assert.equal(candidates.allocation_requests.length, 1);
      assert.deepEqual(candidates.provider_summaries[rp.uuid]!.resources.VCPU, { capacity: 8, used: 0 });
      await placement.setAllocations(c1, {
        ...candidates.allocation_requests[0]!,
        project_id: 'p1',
        user_id: 'u1',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
      const held = await placement.getAllocations(c1);
      assert.deepEqual(held.allocations[rp.uuid]!.resources, { VCPU: 2, MEMORY_MB: 1024 });
      assert.equal(held.consumer_generation, 1);

      await placement.postAllocations({
        [c2]: {
          allocations: { [rp.uuid]: { resources: { VCPU: 1 } } },
          project_id: 'p1',
          user_id: 'u2',
          consumer_generation: null,
          consumer_type: 'MIGRATION',
        },
      });
      assert.deepEqual((await placement.getProviderAllocations(rp.uuid)).allocations[c2], { resources: { VCPU: 1 } });
      const usages = (await placement.getUsages({ project_id: 'p1' })).usages;
      assert.deepEqual(usages.INSTANCE, { consumer_count: 1, VCPU: 2, MEMORY_MB: 1024 });
      assert.deepEqual(usages.MIGRATION, { consumer_count: 1, VCPU: 1 });

      await placement.updateAllocations(c1, { project_id: 'p1', user_id: 'u1' }, (a) => ({ [rp.uuid]: { resources: { ...a[rp.uuid]!.resources, VCPU: 4 } } }));
      assert.deepEqual((await placement.getProviderUsages(rp.uuid)).usages, { VCPU: 5, MEMORY_MB: 1024 });

      // the reshaper moves VCPU to a child provider together with the allocations on it
      const child = await placement.createProvider({ name: 'cn-alloc-numa0', parent_provider_uuid: rp.uuid });
      const parentInv = await placement.getInventories(rp.uuid);
      const c1now = await placement.getAllocations(c1);
      const c2now = await placement.getAllocations(c2);
      await asService.reshape({
        inventories: {
          [rp.uuid]: { resource_provider_generation: parentInv.resource_provider_generation, inventories: { MEMORY_MB: parentInv.inventories.MEMORY_MB! } },
          [child.uuid]: { resource_provider_generation: child.generation, inventories: { VCPU: { total: 8 } } },
        },
        allocations: {
          [c1]: {
            allocations: { [rp.uuid]: { resources: { MEMORY_MB: 1024 } }, [child.uuid]: { resources: { VCPU: 4 } } },
            project_id: 'p1',
            user_id: 'u1',
            consumer_generation: c1now.consumer_generation!,
            consumer_type: 'INSTANCE',
          },
          [c2]: {
            allocations: { [child.uuid]: { resources: { VCPU: 1 } } },
            project_id: 'p1',
            user_id: 'u2',
            consumer_generation: c2now.consumer_generation!,
            consumer_type: 'MIGRATION',
          },
        },
      });
      assert.deepEqual((await placement.getProviderUsages(child.uuid)).usages, { VCPU: 5 });

      await placement.deleteAllocations(c1);
      assert.deepEqual((await placement.getAllocations(c1)).allocations, {});
    });

    test("Placement's error format becomes an AllotApiError with code, message and request id", async () => {
      const rp = await placement.createProvider({ name: 'cn-err' });
      const err = await placement.setInventories(rp.uuid, 7, { VCPU: { total: 1 } }).catch((e: unknown) => e);
      assert.ok(err instanceof AllotApiError);
      assert.equal(err.status, 409);
      assert.equal(err.code, 'placement.concurrent_update');
      assert.equal(err.api, 'placement');
      assert.match(err.requestId ?? '', /^req-/);
      assert.doesNotMatch(err.message, /There was a conflict/, 'the status boilerplate is not the message');
      assert.match(err.message, /generation/);
      assert.match(err.describe(), /\(HTTP 409 placement\.concurrent_update, request req-/);

      const missing = await placement.getProvider(randomUUID()).catch((e: unknown) => e);
      assert.ok(missing instanceof AllotApiError);
      assert.equal(missing.status, 404);
      assert.match(missing.message, /No resource provider with uuid/);

      const noToken = new PlacementClient({ endpoint: server.placementUrl });
      const unauth = await noToken.listProviders().catch((e: unknown) => e);
      assert.ok(unauth instanceof AllotApiError);
      assert.equal(unauth.status, 401);
    });

    test('retryOnConflict reads again and re-applies when another writer moved the generation', async () => {
      const rp = await placement.createProvider({ name: 'cn-race' });
      await placement.createTrait('CUSTOM_MINE');
      await placement.createTrait('CUSTOM_OTHER');
      const other = new AllotClient({ url: server.url, token: 'admin' }).placement;
      const retried: string[] = [];
      const result = await retryOnConflict(
        async (attempt) => {
          const current = await placement.getProviderTraits(rp.uuid);
          // another client writes between our read and our write, on the first try only
          if (attempt === 1) await other.setProviderTraits(rp.uuid, current.resource_provider_generation, [...current.traits, 'CUSTOM_OTHER']);
          return placement.setProviderTraits(rp.uuid, current.resource_provider_generation, [...current.traits, 'CUSTOM_MINE']);
        },
        { attempts: 3, onRetry: (err) => retried.push(err.code ?? '') },
      );
      assert.deepEqual(retried, ['placement.concurrent_update']);
      assert.deepEqual(result.traits.sort(), ['CUSTOM_MINE', 'CUSTOM_OTHER'], 'the other writer’s trait was not lost');

      // and without retries the same interleaving fails with the conflict
      await assert.rejects(
        retryOnConflict(
          async () => {
            const current = await placement.getProviderTraits(rp.uuid);
            await other.setProviderTraits(rp.uuid, current.resource_provider_generation, current.traits);
            return placement.setProviderTraits(rp.uuid, current.resource_provider_generation, []);
          },
          { attempts: 2, delayMs: 1 },
        ),
        (e: unknown) => e instanceof AllotApiError && e.code === 'placement.concurrent_update',
      );
    });

    test('many concurrent read-modify-write loops lose no update', async () => {
      const rp = await placement.createProvider({ name: 'cn-many' });
      const writers = 8;
      const perWriter = 4;
      const wanted = Array.from({ length: writers * perWriter }, (_, i) => `CUSTOM_T${i}`);
      for (const t of wanted) await placement.createTrait(t);
      // The race is made certain rather than left to scheduling: each writer's first write waits
      // until every writer has read, so all of them write on generation 0 and all but one are
      // refused. The writes themselves go to the real server unchanged.
      const traitsUrl = `/resource_providers/${rp.uuid}/traits`;
      let firstReads = 0;
      let everyoneRead!: () => void;
      const allRead = new Promise<void>((resolve) => (everyoneRead = resolve));
      let refused = 0;
      const writerFetch = (): typeof fetch => {
        let read = false;
        return async (input, init) => {
          const traits = String(input).endsWith(traitsUrl);
          if (traits && init?.method === 'PUT') await allRead;
          const res = await fetch(input, init);
          if (traits && init?.method === 'GET' && !read) {
            read = true;
            if (++firstReads === writers) everyoneRead();
          }
          if (traits && init?.method === 'PUT' && res.status === 409) refused++;
          return res;
        };
      };
      let conflicts = 0;
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const client = new AllotClient({ url: server.url, token: 'admin', fetch: writerFetch() }).placement;
          for (let i = 0; i < perWriter; i++) {
            const trait = `CUSTOM_T${w * perWriter + i}`;
            await client.updateProviderTraits(rp.uuid, (t) => [...t, trait], { attempts: 100, delayMs: 2, onRetry: () => conflicts++ });
          }
        }),
      );
      const final = await placement.getProviderTraits(rp.uuid);
      assert.deepEqual(final.traits.sort(), [...wanted].sort());
      assert.equal(final.resource_provider_generation, writers * perWriter, 'one generation step per successful write');
      assert.ok(conflicts >= writers - 1, `the ${writers} writes on generation 0: all but one refused and retried (${conflicts} retries)`);
      assert.equal(conflicts, refused, "each retry answers one of the server's 409s, and each 409 was retried");
    });

    test('an answer that does not come is a timeout; a closed port is unreachable', async () => {
      const { createServer } = await import('node:net');
      const silent = createServer(() => {}); // accepts connections, never answers
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const port = (silent.address() as { port: number }).port;
      try {
        const slow = new PlacementClient({ endpoint: `http://127.0.0.1:${port}`, token: 'admin', timeoutMs: 200, microversion: '1.39' });
        const err = await slow.listProviders().catch((e: unknown) => e);
        assert.ok(err instanceof AllotApiError);
        assert.deepEqual([err.status, err.code], [0, 'client.timeout']);
      } finally {
        silent.close();
      }
      const closed = new PlacementClient({ endpoint: `http://127.0.0.1:${port}`, token: 'admin', microversion: '1.39' });
      const err = await closed.listProviders().catch((e: unknown) => e);
      assert.ok(err instanceof AllotApiError);
      assert.deepEqual([err.status, err.code], [0, 'client.unreachable']);
    });
  });
}
