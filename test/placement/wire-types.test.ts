// Placement's bodies are written once, as JSON schemas (src/placement/schemas.ts): the server's
// views and the typed client use the TypeScript that scripts/wire-types.ts writes from them
// (src/client/placement-wire.ts). Checked here: that file is what the schemas say now, every
// Placement operation that answers a body names its response schema, and real answers of every
// kind — at the oldest microversion each endpoint has, at the ones that change its shape and at
// the newest, on both databases — are what the response schemas describe: every required member
// there, no member they do not document.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { WIRE_FILES, wireTypes } from '../../scripts/wire-types.js';
import { AllotApiError, AllotClient } from '../../src/client/index.js';
import { METHODS } from '../../src/http/router.js';
import { placementRoutes } from '../../src/placement/api.js';
import { RESPONSE_SCHEMAS, type ResponseName } from '../../src/placement/schemas.js';
import { DIALECTS } from '../helpers/databases.js';
import { wireChecker } from '../helpers/openapi.js';
import { serverFor } from '../helpers/server.js';

test('src/client/placement-wire.ts is what the schemas say (npx tsx scripts/wire-types.ts rewrites it)', () => {
  assert.equal(readFileSync(WIRE_FILES.placement.file, 'utf8'), wireTypes('placement'));
});

test('every Placement operation that answers a body names its response schema', () => {
  const missing: string[] = [];
  for (const [template, byMethod] of Object.entries(placementRoutes)) {
    for (const method of METHODS) {
      const endpoint = byMethod[method];
      // the document itself is the OpenAPI 3.1 meta-schema's to describe
      if (!endpoint || template === '/openapi.json' || endpoint.ok.every((s) => s === 204) || endpoint.response) continue;
      missing.push(`${method} ${template}`);
    }
  }
  // these answer 201 (Location) or 204 without a body; a class renamed by PUT at 1.2–1.6 answers one, checked below
  assert.deepEqual(missing.sort(), ['POST /resource_classes', 'PUT /resource_classes/:name', 'PUT /traits/:name']);
});

const OLDEST = '1.0';
const NEWEST = '1.39';

for (const dialect of DIALECTS) {
  describe(`Placement answers are their documented wire types (${dialect})`, () => {
    let url = '';
    serverFor(dialect, (s) => {
      url = s.url;
    });

    test('providers, inventories, usages, traits, aggregates, resource classes, allocations, candidates, reshaper and errors, oldest to newest microversion', async () => {
      const { check, checked } = wireChecker<ResponseName>(RESPONSE_SCHEMAS);
      const client = (token: string, roles?: string) => new AllotClient({ url, token, ...(roles ? { headers: { 'x-roles': roles } } : {}) }).placement;
      const admin = client('admin');
      const service = client('nova', 'service');
      /** the body of a GET at microversion `mv`, checked against `name` */
      const read = async (name: ResponseName, mv: string, path: string, query?: Record<string, string>) => {
        const { body } = await admin.at(mv).call('GET', path, query ? { query } : {});
        check(name, mv, body);
        return body;
      };

      // --- at the oldest microversion each endpoint has ---
      const root = await admin.versions();
      check('PlacementVersions', '-', root);
      const old = admin.at(OLDEST);
      const rp = randomUUID();
      await old.call('POST', '/resource_providers', { body: { name: 'w-old', uuid: rp } }); // 201, no body before 1.20
      const oldProvider = await read('ResourceProvider', OLDEST, `/resource_providers/${rp}`);
      assert.equal((oldProvider as { root_provider_uuid?: string }).root_provider_uuid, undefined, 'a 1.14 member');
      await read('ResourceProviderList', OLDEST, '/resource_providers');
      const { body: put } = await old.call('PUT', `/resource_providers/${rp}/inventories`, {
        body: { resource_provider_generation: 0, inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096, allocation_ratio: 1.5 } } },
      });
      check('Inventories', OLDEST, put);
      await read('Inventories', OLDEST, `/resource_providers/${rp}/inventories`);
      check('InventoryWithGeneration', OLDEST, (await old.call('GET', `/resource_providers/${rp}/inventories/VCPU`)).body);
      const { body: added } = await old.call('POST', `/resource_providers/${rp}/inventories`, { body: { resource_class: 'DISK_GB', total: 100 } });
      check('InventoryWithGeneration', OLDEST, added);
      const generation = (added as { resource_provider_generation: number }).resource_provider_generation;
      const { body: updated } = await old.call('PUT', `/resource_providers/${rp}/inventories/DISK_GB`, {
        body: { resource_provider_generation: generation, total: 200 },
      });
      check('InventoryWithGeneration', OLDEST, updated);
      const consumer = randomUUID();
      await old.call('PUT', `/allocations/${consumer}`, { body: { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 2 } }] } });
      const oldAllocations = await read('ConsumerAllocations', OLDEST, `/allocations/${consumer}`);
      assert.equal((oldAllocations as { project_id?: string }).project_id, undefined, 'a 1.12 member');
      await read('ConsumerAllocations', OLDEST, `/allocations/${randomUUID()}`);
      await read('ProviderAllocations', OLDEST, `/resource_providers/${rp}/allocations`);
      await read('ProviderUsages', OLDEST, `/resource_providers/${rp}/usages`);
      await read('ProviderAggregates', '1.1', `/resource_providers/${rp}/aggregates`);
      const { body: aggregates } = await admin.at('1.1').call('PUT', `/resource_providers/${rp}/aggregates`, { body: [randomUUID()] });
      check('ProviderAggregates', '1.1', aggregates);
      await read('ResourceClassList', '1.2', '/resource_classes');
      await admin.at('1.2').call('POST', '/resource_classes', { body: { name: 'CUSTOM_W_OLD' } });
      await read('ResourceClass', '1.2', '/resource_classes/CUSTOM_W_OLD');
      const { body: renamed } = await admin.at('1.2').call('PUT', '/resource_classes/CUSTOM_W_OLD', { body: { name: 'CUSTOM_W_RENAMED' } });
      check('ResourceClass', '1.2', renamed);
      await read('TraitList', '1.6', '/traits', { name: 'startswith:HW_CPU_X86_S' });
      const before = (await read('ProviderTraits', '1.6', `/resource_providers/${rp}/traits`)) as { resource_provider_generation: number };
      const { body: traits } = await admin.at('1.6').call('PUT', `/resource_providers/${rp}/traits`, {
        body: { traits: ['HW_CPU_X86_SSE'], resource_provider_generation: before.resource_provider_generation },
      });
      check('ProviderTraits', '1.6', traits);
      await admin.at('1.8').call('PUT', `/allocations/${randomUUID()}`, {
        body: { allocations: [{ resource_provider: { uuid: rp }, resources: { MEMORY_MB: 512 } }], project_id: 'w-p', user_id: 'w-u' },
      });
      await read('TotalUsages', '1.9', '/usages', { project_id: 'w-p' });
      const legacy = (await read('AllocationCandidates', '1.10', '/allocation_candidates', { resources: 'VCPU:1' })) as { allocation_requests: unknown[] };
      assert.ok(Array.isArray((legacy.allocation_requests[0] as { allocations: unknown }).allocations), 'the list form before 1.12');
      for (const mv of ['1.12', '1.17', '1.29', '1.34']) await read('AllocationCandidates', mv, '/allocation_candidates', { resources: 'VCPU:1' });
      const refused = await old.call('GET', `/resource_providers/${randomUUID()}`).catch((err: unknown) => err);
      assert.ok(refused instanceof AllotApiError, String(refused));
      check('Errors', OLDEST, refused.body);

      // --- at the newest, through the typed client (what it returns is what it types) ---
      assert.equal(await admin.microversion(), NEWEST);
      const parent = await admin.createProvider({ name: 'w-new' });
      check('ResourceProvider', NEWEST, parent);
      const child = await admin.createProvider({ name: 'w-new-numa0', parent_provider_uuid: parent.uuid });
      check('ResourceProvider', NEWEST, child);
      check('ResourceProvider', NEWEST, await admin.updateProvider(child.uuid, { name: 'w-new-numa-0', parent_provider_uuid: parent.uuid }));
      check('ResourceProvider', NEWEST, await admin.getProvider(child.uuid));
      check('ResourceProviderList', NEWEST, { resource_providers: await admin.listProviders({ in_tree: parent.uuid }) });
      check(
        'Inventories',
        NEWEST,
        await admin.setInventories(parent.uuid, parent.generation, { VCPU: { total: 16, allocation_ratio: 2 }, MEMORY_MB: { total: 8192 } }),
      );
      const childVcpu = await admin.addInventory(child.uuid, 0, 'VCPU', { total: 8 }); // POST does not check the generation
      check('InventoryWithGeneration', NEWEST, childVcpu);
      check('InventoryWithGeneration', NEWEST, await admin.setInventory(child.uuid, childVcpu.resource_provider_generation, 'VCPU', { total: 8, reserved: 8 }));
      check('InventoryWithGeneration', NEWEST, await admin.getInventory(parent.uuid, 'VCPU'));
      check('Inventories', NEWEST, await admin.getInventories(parent.uuid));
      check('ProviderTraits', NEWEST, await admin.updateProviderTraits(parent.uuid, () => ['HW_CPU_X86_AVX2']));
      check('ProviderTraits', NEWEST, await admin.getProviderTraits(parent.uuid));
      check('TraitList', NEWEST, { traits: await admin.listTraits({ associated: true }) });
      const aggregate = randomUUID();
      check('ProviderAggregates', NEWEST, await admin.updateAggregates(parent.uuid, () => [aggregate]));
      check('ProviderAggregates', NEWEST, await admin.getAggregates(parent.uuid));
      await admin.createResourceClass('CUSTOM_W_NEW');
      check('ResourceClass', NEWEST, await admin.getResourceClass('CUSTOM_W_NEW'));
      check('ResourceClassList', NEWEST, { resource_classes: await admin.listResourceClasses() });

      const candidates = await admin.getAllocationCandidates({
        resources: 'MEMORY_MB:1024',
        groups: { _CPU: { resources: 'VCPU:2' } },
        group_policy: 'none',
        in_tree: parent.uuid,
      });
      check('AllocationCandidates', NEWEST, candidates);
      assert.ok(candidates.allocation_requests.length > 0);
      const first = candidates.allocation_requests[0]!;
      assert.ok(!Array.isArray(first.allocations) && 'mappings' in first, 'the dict form with mappings at 1.34+');
      const c1 = randomUUID();
      const c2 = randomUUID();
      // PUT and POST answer 204 without a body: what they wrote is read back and checked
      await admin.setAllocations(c1, { ...first, project_id: 'w-p', user_id: 'w-u', consumer_generation: null, consumer_type: 'INSTANCE' });
      await admin.postAllocations({
        [c2]: {
          allocations: { [parent.uuid]: { resources: { VCPU: 1 } } },
          project_id: 'w-p',
          user_id: 'w-u2',
          consumer_generation: null,
          consumer_type: 'MIGRATION',
        },
      });
      const held = await admin.getAllocations(c1);
      check('ConsumerAllocations', NEWEST, held);
      assert.equal(held.consumer_type, 'INSTANCE');
      check('ConsumerAllocations', NEWEST, await admin.getAllocations(randomUUID()));
      check('ProviderAllocations', NEWEST, await admin.getProviderAllocations(parent.uuid));
      check('ProviderUsages', NEWEST, await admin.getProviderUsages(parent.uuid));
      const usages = await admin.getUsages({ project_id: 'w-p' });
      check('TotalUsages', NEWEST, usages);
      assert.deepEqual(Object.keys(usages.usages).sort(), ['INSTANCE', 'MIGRATION', 'unknown']); // 'unknown': the consumer written at 1.8

      // the reshaper (1.30+) moves the parent's MEMORY_MB to the child with c2's allocation
      const parentInventories = await admin.getInventories(parent.uuid);
      const childInventories = await admin.getInventories(child.uuid);
      const c2now = await admin.getAllocations(c2);
      await service.reshape({
        inventories: {
          [parent.uuid]: {
            resource_provider_generation: parentInventories.resource_provider_generation,
            inventories: { VCPU: parentInventories.inventories.VCPU! },
          },
          [child.uuid]: {
            resource_provider_generation: childInventories.resource_provider_generation,
            inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 8192 } },
          },
        },
        allocations: {
          [c1]: {
            allocations: Object.fromEntries(
              Object.entries(held.allocations).map(([provider, a]) => [provider === parent.uuid ? child.uuid : provider, { resources: a.resources }]),
            ),
            project_id: 'w-p',
            user_id: 'w-u',
            consumer_generation: held.consumer_generation!,
            consumer_type: 'INSTANCE',
          },
          [c2]: { ...c2now, consumer_generation: c2now.consumer_generation!, consumer_type: 'MIGRATION', project_id: 'w-p', user_id: 'w-u2' },
        },
      });
      check('ConsumerAllocations', NEWEST, await admin.getAllocations(c1));
      check('ProviderAllocations', NEWEST, await admin.getProviderAllocations(child.uuid));
      check('ProviderSummary', NEWEST, (await admin.getAllocationCandidates({ resources: 'MEMORY_MB:1' })).provider_summaries[child.uuid]);

      const conflict = await admin.setProviderTraits(parent.uuid, 0, []).catch((err: unknown) => err);
      assert.ok(conflict instanceof AllotApiError && conflict.status === 409, String(conflict));
      check('Errors', NEWEST, conflict.body);
      assert.equal((conflict.body as { errors: Array<{ code?: string }> }).errors[0]!.code, 'placement.concurrent_update');

      // every response schema met a real answer
      assert.deepEqual(
        Object.keys(RESPONSE_SCHEMAS)
          .filter((name) => !checked.has(name as ResponseName))
          .sort(),
        ['AllocationRequest', 'InventoryRecord', 'LegacyAllocationRequest'],
        'checked as parts of AllocationCandidates and Inventories',
      );
    });
  });
}
