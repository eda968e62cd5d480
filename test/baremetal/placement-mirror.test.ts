// The placement backend: nodes are resource providers of allot's own Placement, a node
// allocation is a Placement allocation whose consumer is the allocation's uuid, and the two can
// never disagree — a Placement client cannot write allocations on a node's provider (so it can
// never become a node's second owner), and a database that grew under the `database` backend
// can be switched to `placement`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { kyselyOf } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/open.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode } from './helpers.js';

/** A provider of no node, with `total` VCPU. */
async function plainProvider(placement: PlacementClient, name: string, uuid: string, total: number): Promise<void> {
  assert.equal((await placement.post('/resource_providers', { name, uuid })).status, 200);
  const inventories = { resource_provider_generation: 0, inventories: { VCPU: { total } } };
  assert.equal((await placement.put(`/resource_providers/${uuid}/inventories`, inventories)).status, 200);
}

/** Raw SQL on the server's database (what an older release or another process left there). */
async function withDatabase<T>(url: string, use: (k: Kysely<any>) => Promise<T>): Promise<T> {
  const database = await openDatabase(url);
  try {
    return await use(kyselyOf(database));
  } finally {
    await database.close();
  }
}

/** 409 in Placement's format: the consumer is held by the bare-metal allocation of its uuid, and says so. */
function heldByAllocation(res: { status: number; body: any; text: string }, consumer: string): void {
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.errors[0].code, 'placement.undefined_code');
  assert.equal(res.body.errors[0].status, 409);
  assert.match(res.body.errors[0].detail, new RegExp(`consumer '${consumer}': it is held by baremetal-allocation/${consumer}`));
}

for (const dialect of DIALECTS) {
  describe(`bare-metal placement backend (${dialect})`, () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'allot-mirror-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    const databaseUrl = async (name: string) => (dialect === 'postgres' ? freshDatabaseUrl('postgres') : `sqlite:${path.join(dir, `${name}.db`)}`);

    test('a node is a provider with CUSTOM_<CLASS>: 1 and its traits, kept in step with the node', async () => {
      const server = await startServer({ db: await databaseUrl('mirror'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const node = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'm-1', resource_class: 'baremetal.gold-2' })).body;
        const provider = await placement.get(`/resource_providers/${node.uuid}`);
        assert.equal(provider.status, 200, provider.text);
        assert.equal(provider.body.name, node.uuid);
        const inventory = (await placement.get(`/resource_providers/${node.uuid}/inventories`)).body.inventories;
        assert.deepEqual(Object.keys(inventory), ['CUSTOM_BAREMETAL_GOLD_2']);
        assert.equal(inventory.CUSTOM_BAREMETAL_GOLD_2.total, 1);
        assert.equal(inventory.CUSTOM_BAREMETAL_GOLD_2.max_unit, 1);
        await api.put('/v1/nodes/m-1/traits', { traits: ['CUSTOM_NEW_TRAIT', 'HW_CPU_X86_VMX'] });
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/traits`)).body.traits.sort(), ['CUSTOM_NEW_TRAIT', 'HW_CPU_X86_VMX']);
        await api.patch('/v1/nodes/m-1', [{ op: 'replace', path: '/resource_class', value: 'silver' }]);
        assert.deepEqual(Object.keys((await placement.get(`/resource_providers/${node.uuid}/inventories`)).body.inventories), ['CUSTOM_SILVER']);
        await api.patch('/v1/nodes/m-1', [{ op: 'remove', path: '/resource_class' }]);
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/inventories`)).body.inventories, {});
        assert.equal((await api.delete('/v1/nodes/m-1')).status, 204);
        assert.equal((await placement.get(`/resource_providers/${node.uuid}`)).status, 404);
      } finally {
        await server.close();
      }
    });

    test('a Placement client cannot make a second owner of a node: writes on node providers are refused', async () => {
      const server = await startServer({ db: await databaseUrl('held'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const taken = await availableNode(api, { name: 'taken', resource_class: 'held' });
        const free = await availableNode(api, { name: 'free', resource_class: 'held' });
        const owned = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held', candidate_nodes: ['taken'] })).body.uuid);
        assert.equal(owned.state, 'active');
        assert.equal(owned.node_uuid, taken.uuid);
        // a foreign provider, to show that ordinary Placement writes still work
        const other = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
        await plainProvider(placement, 'other', other, 4);

        const consumer = '5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
        const put = (allocations: Record<string, unknown>, generation: number | null = null) =>
          placement.put(`/allocations/${consumer}`, { allocations, project_id: 'p', user_id: 'u', consumer_generation: generation, consumer_type: 'INSTANCE' });
        const refused = (res: { status: number; body: any; text: string }, uuids: string[]) => {
          assert.equal(res.status, 409, res.text);
          assert.equal(res.body.errors[0].code, 'placement.undefined_code');
          for (const uuid of uuids) assert.match(res.body.errors[0].detail, new RegExp(`'${uuid}'`));
          assert.match(res.body.errors[0].detail, /belong to the bare-metal service/);
        };
        // the allocated node's provider: raising its capacity first does not help
        const inventory = (await placement.get(`/resource_providers/${taken.uuid}/inventories`)).body;
        assert.equal(
          (
            await placement.put(`/resource_providers/${taken.uuid}/inventories`, {
              ...inventory,
              inventories: { CUSTOM_HELD: { total: 1, allocation_ratio: 2 } },
            })
          ).status,
          200,
        );
        refused(await put({ [taken.uuid]: { resources: { CUSTOM_HELD: 1 } } }), [taken.uuid]);
        // a free node's provider, alone or among others; in POST /allocations; in /reshaper
        refused(await put({ [free.uuid]: { resources: { CUSTOM_HELD: 1 } }, [other]: { resources: { VCPU: 1 } } }), [free.uuid]);
        refused(
          await placement.post('/allocations', {
            [consumer]: {
              allocations: { [free.uuid]: { resources: { CUSTOM_HELD: 1 } } },
              project_id: 'p',
              user_id: 'u',
              consumer_generation: null,
              consumer_type: 'INSTANCE',
            },
          }),
          [free.uuid],
        );
        const otherGeneration = (await placement.get(`/resource_providers/${other}`)).body.generation;
        const reshape = await placement.post(
          '/reshaper',
          {
            inventories: { [other]: { resource_provider_generation: otherGeneration, inventories: { VCPU: { total: 4 } } } },
            allocations: {
              [consumer]: {
                allocations: { [free.uuid]: { resources: { CUSTOM_HELD: 1 } } },
                project_id: 'p',
                user_id: 'u',
                consumer_generation: null,
                consumer_type: 'INSTANCE',
              },
            },
          },
          { headers: { 'x-roles': 'service' } },
        );
        refused(reshape, [free.uuid]);
        // the bare-metal allocation's consumer cannot be moved or deleted through Placement either
        // (every way, on both databases: the next test)
        heldByAllocation(
          await placement.put(`/allocations/${owned.uuid}`, {
            allocations: { [other]: { resources: { VCPU: 1 } } },
            project_id: 'p',
            user_id: 'u',
            consumer_generation: 1,
            consumer_type: 'INSTANCE',
          }),
          owned.uuid,
        );
        heldByAllocation(await placement.delete(`/allocations/${owned.uuid}`), owned.uuid);
        // ordinary consumers on ordinary providers are unaffected
        assert.equal((await put({ [other]: { resources: { VCPU: 1 } } })).status, 204);

        // one owner per node, and Placement agrees with the nodes
        assert.deepEqual((await placement.get(`/resource_providers/${taken.uuid}/allocations`)).body.allocations, {
          [owned.uuid]: { resources: { CUSTOM_HELD: 1 } },
        });
        assert.deepEqual((await placement.get(`/resource_providers/${free.uuid}/allocations`)).body.allocations, {});
        const next = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held' })).body.uuid);
        assert.equal(next.state, 'active');
        assert.equal(next.node_uuid, free.uuid);
        const none = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'held' })).body.uuid);
        assert.equal(none.state, 'error');
        assert.match(none.last_error, /no available nodes match the resource class held/);
        assert.deepEqual((await placement.get(`/resource_providers/${free.uuid}/allocations`)).body.allocations, {
          [next.uuid]: { resources: { CUSTOM_HELD: 1 } },
        });
        // releasing through the bare-metal API still works
        assert.equal((await api.delete(`/v1/allocations/${owned.uuid}`)).status, 204);
        assert.deepEqual((await placement.get(`/resource_providers/${taken.uuid}/allocations`)).body.allocations, {});
      } finally {
        await server.close();
      }
    });

    test("a node's claim is held: Placement's PUT, POST /allocations, DELETE and the reshaper are refused it (409); bare metal's own release frees it", async () => {
      const server = await startServer({ db: await databaseUrl('claim-held'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const node = await availableNode(api, { name: 'h-1', resource_class: 'claimed' });
        const claim = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'claimed' })).body.uuid);
        assert.equal(claim.state, 'active');
        assert.equal(claim.node_uuid, node.uuid);
        const theClaim = { [node.uuid]: { resources: { CUSTOM_CLAIMED: 1 } } };
        const consumerOf = async (uuid: string) => {
          const { allocations, ...rest } = (await placement.get(`/allocations/${uuid}`)).body;
          // provider → resources (each entry also carries its provider's generation)
          const resources = Object.fromEntries(
            Object.entries(allocations as Record<string, { resources: unknown }>).map(([rp, a]) => [rp, { resources: a.resources }]),
          );
          return { ...rest, allocations: resources };
        };
        assert.deepEqual((await consumerOf(claim.uuid)).allocations, theClaim);
        const generation = (await consumerOf(claim.uuid)).consumer_generation;

        // an ordinary provider and consumer beside it
        const other = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
        await plainProvider(placement, 'plain', other, 8);
        const plain = '1e2d3c4b-5a69-4788-9766-554433221100';
        const who = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE' };
        assert.equal(
          (await placement.put(`/allocations/${plain}`, { allocations: { [other]: { resources: { VCPU: 1 } } }, ...who, consumer_generation: null })).status,
          204,
        );
        const plainBefore = await consumerOf(plain);

        // PUT: moved to an ordinary provider, emptied, and (before 1.28) without a generation
        heldByAllocation(
          await placement.put(`/allocations/${claim.uuid}`, { allocations: { [other]: { resources: { VCPU: 1 } } }, ...who, consumer_generation: generation }),
          claim.uuid,
        );
        heldByAllocation(await placement.put(`/allocations/${claim.uuid}`, { allocations: {}, ...who, consumer_generation: generation }), claim.uuid);
        heldByAllocation(
          await placement.at('1.27').put(`/allocations/${claim.uuid}`, { allocations: { [other]: { resources: { VCPU: 1 } } }, project_id: 'p', user_id: 'u' }),
          claim.uuid,
        );
        // DELETE
        heldByAllocation(await placement.delete(`/allocations/${claim.uuid}`), claim.uuid);
        // POST /allocations: its claim moved to another consumer, or the consumer given other allocations
        heldByAllocation(
          await placement.post('/allocations', {
            [claim.uuid]: { allocations: {}, ...who, consumer_generation: generation },
            [plain]: { allocations: { [other]: { resources: { VCPU: 2 } } }, ...who, consumer_generation: plainBefore.consumer_generation },
          }),
          claim.uuid,
        );
        heldByAllocation(
          await placement.post('/allocations', {
            [claim.uuid]: { allocations: { [other]: { resources: { VCPU: 1 } } }, ...who, consumer_generation: generation },
          }),
          claim.uuid,
        );
        // the reshaper: its allocations moved to the ordinary provider
        const otherProvider = (await placement.get(`/resource_providers/${other}`)).body;
        heldByAllocation(
          await placement.post(
            '/reshaper',
            {
              inventories: { [other]: { resource_provider_generation: otherProvider.generation, inventories: { VCPU: { total: 8 } } } },
              allocations: { [claim.uuid]: { allocations: { [other]: { resources: { VCPU: 1 } } }, ...who, consumer_generation: generation } },
            },
            { headers: { 'x-roles': 'service' } },
          ),
          claim.uuid,
        );

        // nothing changed: the claim is where bare metal put it, the ordinary consumer as it was
        const after = await consumerOf(claim.uuid);
        assert.deepEqual(after.allocations, theClaim);
        assert.equal(after.consumer_generation, generation);
        assert.deepEqual(await consumerOf(plain), plainBefore);
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/allocations`)).body.allocations, {
          [claim.uuid]: { resources: { CUSTOM_CLAIMED: 1 } },
        });

        // bare metal releases its own claim, and the node is allocatable again
        assert.equal((await api.delete(`/v1/allocations/${claim.uuid}`)).status, 204);
        assert.deepEqual((await consumerOf(claim.uuid)).allocations, {});
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/allocations`)).body.allocations, {});
        const again = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'claimed' })).body.uuid);
        assert.equal(again.state, 'active');
        assert.equal(again.node_uuid, node.uuid);
        assert.deepEqual((await consumerOf(again.uuid)).allocations, theClaim);
      } finally {
        await server.close();
      }
    });

    test("an allocation whose uuid is already a Placement client's consumer fails at once, naming it, and takes nothing", async () => {
      const server = await startServer({ db: await databaseUrl('taken-uuid'), transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        const node = await availableNode(api, { name: 'tu-1', resource_class: 'taken' });
        const other = '3f4e5d6c-7b8a-4990-8a7b-6c5d4e3f2a1b';
        await plainProvider(placement, 'plain', other, 8);
        const consumer = '5b6a7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d';
        const who = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE' };
        const theirs = { allocations: { [other]: { resources: { VCPU: 2 } } }, ...who, consumer_generation: null };
        assert.equal((await placement.put(`/allocations/${consumer}`, theirs)).status, 204);
        const before = (await placement.get(`/allocations/${consumer}`)).body;

        // the node is free, but its claim would be the client's consumer: no node can ever take it
        const posted = await api.post('/v1/allocations', { uuid: consumer, resource_class: 'taken' });
        assert.equal(posted.status, 201, posted.text);
        const failed = await allocationSettled(api, consumer);
        assert.equal(failed.state, 'error');
        assert.equal(failed.node_uuid, null);
        assert.match(failed.last_error, new RegExp(`Placement already has a consumer ${consumer}, held by Placement's clients`));
        // nothing taken: the client's consumer as it was, the node unclaimed and free for the next one
        assert.deepEqual((await placement.get(`/allocations/${consumer}`)).body, before);
        assert.deepEqual((await placement.get(`/resource_providers/${node.uuid}/allocations`)).body.allocations, {});
        assert.equal((await api.get(`/v1/nodes/${node.uuid}`)).body.instance_uuid, null);
        const next = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'taken' })).body.uuid);
        assert.equal(next.state, 'active');
        assert.equal(next.node_uuid, node.uuid);
      } finally {
        await server.close();
      }
    });

    test('migration 016 marks the claims made before it held by their allocations, and nothing else', async () => {
      const db = await databaseUrl('migration-016');
      const who = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE', consumer_generation: null };
      const plain = '2f3e4d5c-6b7a-4890-a1b2-c3d4e5f60718';
      const first = await startServer({ db, transitionTime: 20, baremetalBackend: 'placement' });
      let claim: { uuid: string; node_uuid: string; state: string };
      let instanceConsumer: string;
      try {
        const api = new IronicClient(`${first.url}/baremetal`);
        const placement = new PlacementClient(first.placementUrl);
        await availableNode(api, { name: 'mg-1', resource_class: 'migrated' });
        claim = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'migrated' })).body.uuid);
        assert.equal(claim.state, 'active');
        const other = '3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d';
        await plainProvider(placement, 'plain', other, 8);
        assert.equal((await placement.put(`/allocations/${plain}`, { allocations: { [other]: { resources: { VCPU: 1 } } }, ...who })).status, 204);
        // a consumer some other holder holds (a service instance's), which the migration leaves alone
        instanceConsumer = '4b5c6d7e-8f9a-4b1c-8d2e-3f4a5b6c7d8e';
        assert.equal((await placement.put(`/allocations/${instanceConsumer}`, { allocations: { [other]: { resources: { VCPU: 1 } } }, ...who })).status, 204);
      } finally {
        await first.close();
      }
      // the database as a release before this one left it: the claim unmarked, 016 (and what came after it) not run
      await withDatabase(db, async (k) => {
        await sql`update consumers set held_by = null where uuid = ${claim.uuid}`.execute(k);
        await sql`update consumers set held_by = ${'service-instance/some-instance'} where uuid = ${instanceConsumer}`.execute(k);
        await sql`delete from allot_migrations where name >= ${'016-baremetal-held-consumers'}`.execute(k);
      });
      const second = await startServer({ db, transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${second.url}/baremetal`);
        const placement = new PlacementClient(second.placementUrl);
        const heldBy = () =>
          withDatabase(db, async (k) => {
            const rows = await sql<{ uuid: string; held_by: string | null }>`select uuid, held_by from consumers order by uuid`.execute(k);
            return Object.fromEntries(rows.rows.map((r) => [r.uuid, r.held_by]));
          });
        assert.deepEqual(await heldBy(), {
          [claim.uuid]: `baremetal-allocation/${claim.uuid}`,
          [plain]: null,
          [instanceConsumer]: 'service-instance/some-instance',
        });
        heldByAllocation(await placement.delete(`/allocations/${claim.uuid}`), claim.uuid);
        assert.equal((await placement.delete(`/allocations/${plain}`)).status, 204);
        // and bare metal releases what it holds
        assert.equal((await api.delete(`/v1/allocations/${claim.uuid}`)).status, 204);
        assert.deepEqual((await placement.get(`/resource_providers/${claim.node_uuid}/allocations`)).body.allocations, {});
      } finally {
        await second.close();
      }
    });

    // In a rolling upgrade across migration 016 the older processes still make claims no one holds.
    test('bare metal releases a claim an older allot made unmarked', async () => {
      const db = await databaseUrl('unmarked');
      const server = await startServer({ db, transitionTime: 20, baremetalBackend: 'placement' });
      try {
        const api = new IronicClient(`${server.url}/baremetal`);
        const placement = new PlacementClient(server.placementUrl);
        await availableNode(api, { name: 'um-1', resource_class: 'unmarked' });
        const claim = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'unmarked' })).body.uuid);
        assert.equal(claim.state, 'active');
        // a Placement client's consumer beside it
        const other = '5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f';
        await plainProvider(placement, 'plain', other, 8);
        const clients = '6e7f8091-a2b3-4c4d-9e5f-6a7b8c9d0e1f';
        const who = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE', consumer_generation: null };
        assert.equal((await placement.put(`/allocations/${clients}`, { allocations: { [other]: { resources: { VCPU: 2 } } }, ...who })).status, 204);
        await withDatabase(db, (k) => sql`update consumers set held_by = null where uuid = ${claim.uuid}`.execute(k));
        assert.equal((await api.delete(`/v1/allocations/${claim.uuid}`)).status, 204);
        assert.deepEqual((await placement.get(`/resource_providers/${claim.node_uuid}/allocations`)).body.allocations, {}, 'the unmarked claim released');
        assert.deepEqual((await placement.get(`/allocations/${claim.uuid}`)).body.allocations, {});

        assert.deepEqual(
          (await placement.get(`/allocations/${clients}`)).body.allocations[other]?.resources,
          { VCPU: 2 },
          "a Placement client's consumer beside it untouched",
        );
      } finally {
        await server.close();
      }
    });

    test('switching a database from the database backend to placement mirrors nodes and claims existing allocations', async () => {
      const db = await databaseUrl('switch');
      const before = await startServer({ db, transitionTime: 20, baremetalBackend: 'database', conductorId: 'switch-1' });
      let allocated: { uuid: string; node_uuid: string };
      try {
        const api = new IronicClient(`${before.url}/baremetal`);
        await availableNode(api, { name: 'sw-1', resource_class: 'switch' }, ['CUSTOM_SW']);
        await availableNode(api, { name: 'sw-2', resource_class: 'switch' });
        allocated = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'switch', traits: ['CUSTOM_SW'] })).body.uuid);
        assert.equal((await new PlacementClient(before.placementUrl).get('/resource_providers')).body.resource_providers.length, 0);
      } finally {
        await before.close();
      }
      const afterwards = await startServer({ db, transitionTime: 20, baremetalBackend: 'placement', conductorId: 'switch-2' });
      try {
        const api = new IronicClient(`${afterwards.url}/baremetal`);
        const placement = new PlacementClient(afterwards.placementUrl);
        // the mirror is built when the conductor starts, just after the server listens
        const providers = await (async () => {
          for (let i = 0; i < 400; i++) {
            const rps = (await placement.get('/resource_providers')).body.resource_providers;
            const consumer = await placement.get(`/allocations/${allocated.uuid}`);
            if (rps.length === 2 && Object.keys(consumer.body.allocations ?? {}).length === 1) return rps;
            await new Promise((r) => setTimeout(r, 50));
          }
          assert.fail('the placement mirror was not built');
        })();
        assert.equal(providers.length, 2);
        assert.deepEqual((await placement.get(`/allocations/${allocated.uuid}`)).body.allocations[allocated.node_uuid].resources, { CUSTOM_SWITCH: 1 });
        // the other node is still allocatable, through Placement now
        const next = await allocationSettled(api, (await api.post('/v1/allocations', { resource_class: 'switch' })).body.uuid);
        assert.equal(next.state, 'active');
        assert.notEqual(next.node_uuid, allocated.node_uuid);
      } finally {
        await afterwards.close();
      }
    });
  });
}
