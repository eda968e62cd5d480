// On PostgreSQL registration — POST /resource_providers, PUT of a provider's inventories, traits
// and aggregates — is one statement per request (src/placement/store/one-statement-registration.ts).
// These tests run those statements directly on a running server's database, as the services do,
// and look at the outcome over HTTP: what they accept is written whole and answered exactly as a
// read shows it, what they refuse leaves nothing behind (the general write then decides and
// answers), a provider that changes under the statement makes it step aside, and they do not
// attempt the writes they were not made for. The HTTP behaviour of the same requests, on both
// databases, is in providers.test.ts, concurrency.test.ts (races) and multi-process.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { transaction } from '../../src/db/transaction.js';
import type { PlacementContext } from '../../src/placement/context.js';
import { inOneStatement } from '../../src/placement/services/providers.js';
import { replaceProviderAggregates } from '../../src/placement/store/aggregates.js';
import type { InventoryRecord } from '../../src/placement/store/inventories.js';
import {
  oneStatementAggregates,
  oneStatementCreate,
  oneStatementInventories,
  oneStatementTraits,
} from '../../src/placement/store/one-statement-registration.js';
import { lockProvider } from '../../src/placement/store/providers.js';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';

const inventory = (total: number, more: Partial<InventoryRecord> = {}): InventoryRecord => ({
  total,
  reserved: 0,
  min_unit: 1,
  max_unit: total,
  step_size: 1,
  allocation_ratio: 1,
  ...more,
});

describe('one-statement registration (postgres)', () => {
  let api: PlacementClient;
  let ctx: PlacementContext;
  let server: TestServer;
  /** a connection of its own, to hold a lock while a statement runs */
  let other: pg.Client;
  before(async () => {
    const url = await freshDatabaseUrl('postgres');
    server = await startServer({ db: url });
    api = new PlacementClient(server.placementUrl);
    ctx = server.running.context.placement;
    other = new pg.Client({ connectionString: url });
    await other.connect();
  });
  after(async () => {
    await other?.end();
    await server?.close();
  });

  const create = async (name: string, parentUuid: string | null = null, uuid: string = randomUUID()) =>
    (await inOneStatement(ctx, oneStatementCreate(ctx.database, { uuid, name, parentUuid })))?.value;
  const putInventories = async (rp: string, generation: number, inventories: Record<string, InventoryRecord>) =>
    (await inOneStatement(ctx, await oneStatementInventories(ctx.database, ctx.names, rp, new Map(Object.entries(inventories)), generation)))?.value;
  const putTraits = async (rp: string, generation: number, traits: string[]) =>
    (await inOneStatement(ctx, await oneStatementTraits(ctx.database, ctx.names, rp, traits, generation)))?.value;
  const putAggregates = async (rp: string, generation: number, aggregates: string[]) =>
    (await inOneStatement(ctx, oneStatementAggregates(ctx.database, rp, aggregates, generation)))?.value;

  /** everything a provider holds, as the API shows it */
  const state = async (rp: string) => ({
    provider: (await api.get(`/resource_providers/${rp}`)).body,
    inventories: (await api.get(`/resource_providers/${rp}/inventories`)).body,
    traits: (await api.get(`/resource_providers/${rp}/traits`)).body,
    aggregates: (await api.get(`/resource_providers/${rp}/aggregates`)).body,
  });

  test('a new provider, root or child, is written whole and answered as a read shows it', async () => {
    const root = await create(`root-${randomUUID()}`);
    assert.ok(root, 'written in one statement');
    const shown = (await api.get(`/resource_providers/${root.uuid}`)).body;
    assert.deepEqual(
      { uuid: root.uuid, name: root.name, generation: root.generation, parent: root.parent_provider_uuid, root: root.root_provider_uuid },
      { uuid: shown.uuid, name: shown.name, generation: 0, parent: null, root: shown.uuid },
    );
    const child = await create(`child-${randomUUID()}`, root.uuid);
    assert.ok(child);
    const grandchild = await create(`grandchild-${randomUUID()}`, child.uuid);
    assert.ok(grandchild);
    for (const p of [child, grandchild]) {
      const read = (await api.get(`/resource_providers/${p.uuid}`)).body;
      assert.equal(p.parent_provider_uuid, read.parent_provider_uuid);
      assert.equal(p.root_provider_uuid, root.uuid);
      assert.equal(read.root_provider_uuid, root.uuid);
      assert.equal(p.root_provider_id, root.id);
    }
    const inTree = (await api.get(`/resource_providers?in_tree=${root.uuid}`)).body.resource_providers.map((p: { uuid: string }) => p.uuid);
    assert.deepEqual(inTree.sort(), [root.uuid, child.uuid, grandchild.uuid].sort());
  });

  test('inventories added, changed, removed and kept, answered exactly as a read then shows them', async () => {
    assert.equal((await api.put('/resource_classes/CUSTOM_X')).status, 201);
    const rp = (await create(`inv-${randomUUID()}`))!.uuid;
    const first = await putInventories(rp, 0, { VCPU: inventory(8), MEMORY_MB: inventory(4096, { allocation_ratio: 1.5 }), DISK_GB: inventory(100) });
    assert.ok(first);
    assert.equal(first.generation, 1);
    await new Promise((resolve) => setTimeout(resolve, 20)); // a later time stamp for what changes next
    const second = await putInventories(rp, 1, {
      VCPU: inventory(16, { reserved: 2 }),
      MEMORY_MB: inventory(4096, { allocation_ratio: 1.5 }),
      CUSTOM_X: inventory(1),
    });
    assert.ok(second);
    const read = await api.get(`/resource_providers/${rp}/inventories`);
    assert.deepEqual({ resource_provider_generation: second.generation, inventories: Object.fromEntries(second.inventories) }, read.body);
    assert.deepEqual(Object.keys(read.body.inventories), [...second.inventories.keys()], 'in the same order');
    const stamps = await other.query<{ last: string; first: string }>(
      'select max(i.updated_at) as last, min(i.updated_at) as first from inventories i join resource_providers p on p.id = i.resource_provider_id where p.uuid = $1',
      [rp],
    );
    assert.equal(second.lastModified, stamps.rows[0]!.last, 'Last-Modified: the latest time stamp of the rows');
    assert.equal(stamps.rows[0]!.first, first.lastModified, 'the unchanged MEMORY_MB keeps its time stamp');
    assert.equal((await putInventories(rp, 2, {}))?.inventories.size, 0, 'all removed');
    assert.deepEqual((await api.get(`/resource_providers/${rp}/inventories`)).body, { resource_provider_generation: 3, inventories: {} });
  });

  test('traits and aggregates replaced, answered as a read then shows them', async () => {
    const rp = (await create(`sets-${randomUUID()}`))!.uuid;
    const t1 = await putTraits(rp, 0, ['STORAGE_DISK_SSD', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_AVX2']);
    assert.deepEqual(t1?.members, ['HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD']);
    const t2 = await putTraits(rp, 1, ['HW_CPU_X86_SSE42', 'STORAGE_DISK_SSD']);
    assert.deepEqual((await api.get(`/resource_providers/${rp}/traits`)).body, { resource_provider_generation: 2, traits: t2!.members });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    assert.deepEqual((await putAggregates(rp, 2, [a, b]))?.members, [a, b]);
    const a2 = await putAggregates(rp, 3, [c, b, c]);
    assert.deepEqual((await api.get(`/resource_providers/${rp}/aggregates`)).body, { resource_provider_generation: 4, aggregates: a2!.members });
    assert.deepEqual(new Set(a2!.members), new Set([b, c]));
    assert.deepEqual((await putTraits(rp, 4, []))?.members, []);
    assert.deepEqual((await putAggregates(rp, 5, []))?.members, []);
    const end = await state(rp);
    assert.deepEqual([end.provider.generation, end.traits.traits, end.aggregates.aggregates], [6, [], []]);
  });

  test('every refusal leaves nothing behind', async () => {
    const parent = (await create(`taken-${randomUUID()}`))!;
    const rp = parent.uuid;
    await putInventories(rp, 0, { VCPU: inventory(8), DISK_GB: inventory(100) });
    await putTraits(rp, 1, ['HW_CPU_X86_AVX2']);
    await putAggregates(rp, 2, [randomUUID()]);
    const claim = await api.put(`/allocations/${randomUUID()}`, {
      allocations: { [rp]: { resources: { DISK_GB: 10 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
    assert.equal(claim.status, 204, claim.text);
    const before = await state(rp);
    const aggregatesBefore = await other.query('select id from aggregates');
    const g = before.provider.generation as number;
    const missing = randomUUID();
    const refused: Array<[string, () => Promise<unknown>]> = [
      ['inventories at a stale generation', () => putInventories(rp, g - 1, { VCPU: inventory(4) })],
      ['inventories at a generation not reached yet', () => putInventories(rp, g + 1, { VCPU: inventory(4) })],
      ['removing an inventory in use', () => putInventories(rp, g, { VCPU: inventory(4) })],
      ['inventories of a provider that does not exist', () => putInventories(missing, 0, { VCPU: inventory(4) })],
      ['traits at a stale generation', () => putTraits(rp, g - 1, ['HW_CPU_X86_SSE42'])],
      ['traits of a provider that does not exist', () => putTraits(missing, 0, ['HW_CPU_X86_SSE42'])],
      ['aggregates at a stale generation', () => putAggregates(rp, g - 1, [randomUUID()])],
      ['a name that is taken', () => create(parent.name)],
      ['a uuid that is taken', () => create(`other-${randomUUID()}`, null, rp)],
      ['a parent that does not exist', () => create(`orphan-${randomUUID()}`, missing)],
    ];
    for (const [why, write] of refused) {
      assert.equal(await write(), undefined, `${why}: the statement steps aside`);
      assert.deepEqual(await state(rp), before, `${why}: nothing changed`);
    }
    assert.equal((await api.get(`/resource_providers/${missing}`)).status, 404);
    assert.equal((await api.get(`/resource_providers?name=orphan`)).body.resource_providers.length, 0);
    assert.equal((await other.query('select id from aggregates')).rowCount, aggregatesBefore.rowCount, 'a refused statement made no aggregate');
  });

  test('writes they are not made for are left to the general path untouched', async () => {
    const rp = (await create(`not-for-${randomUUID()}`))!.uuid;
    const before = await state(rp);
    assert.equal(oneStatementCreate(ctx.database, { uuid: rp, name: 'self', parentUuid: rp }), null, 'its own parent');
    assert.equal(await oneStatementInventories(ctx.database, ctx.names, rp, new Map([['CUSTOM_NEVER_MADE', inventory(1)]]), 0), null, 'an unknown class');
    const many = new Map(Array.from({ length: 17 }, (_, i) => [`CUSTOM_C${i}`, inventory(1)]));
    assert.equal(await oneStatementInventories(ctx.database, ctx.names, rp, many, 0), null, 'more than 16 classes');
    assert.equal(await oneStatementTraits(ctx.database, ctx.names, rp, ['CUSTOM_NEVER_MADE'], 0), null, 'an unknown trait');
    assert.deepEqual(await state(rp), before);
  });

  test('a provider that changes while the statement waits for its lock makes the statement step aside', async () => {
    const rp = (await create(`moving-${randomUUID()}`))!.uuid;
    await putInventories(rp, 0, { VCPU: inventory(8) });
    // Another writer holds the provider, adds an inventory and bumps it to generation 2, as the
    // general path would; a statement at generation 2 is sent before that commits.
    await other.query('begin');
    const { rows } = await other.query<{ id: number }>('update resource_providers set generation = generation + 1 where uuid = $1 returning id', [rp]);
    await other.query(
      `insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used, created_at, updated_at)
       select $1, id, 100, 0, 1, 100, 1, 1, 0, 'x', 'x' from resource_classes where name = 'DISK_GB'`,
      [rows[0]!.id],
    );
    const statement = putInventories(rp, 2, { VCPU: inventory(4) });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the statement is waiting for the provider's lock
    await other.query('commit');
    assert.equal(await statement, undefined, 'the statement steps aside');
    const after = (await api.get(`/resource_providers/${rp}/inventories`)).body;
    assert.equal(after.resource_provider_generation, 2);
    assert.deepEqual(Object.keys(after.inventories).sort(), ['DISK_GB', 'VCPU'], "the other writer's inventory is still there");
    assert.equal(after.inventories.VCPU.total, 8, 'nothing half-done');
  });

  test('aggregates written before 1.19 (no new generation) while the statement waits make it step aside', async () => {
    const rp = (await create(`legacy-${randomUUID()}`))!.uuid;
    const [x, y] = [randomUUID(), randomUUID()];
    // The general path's write of an old microversion, held open after its write.
    let wrote!: () => void;
    let finish!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const held = new Promise<void>((resolve) => (finish = resolve));
    const legacy = transaction(ctx.database, async (tx) => {
      await replaceProviderAggregates(tx, await lockProvider(tx, rp), [x], false);
      wrote();
      await held;
    });
    await written;
    const statement = putAggregates(rp, 0, [y]);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the statement is waiting for the provider's lock
    finish();
    await legacy;
    assert.equal(await statement, undefined, 'the statement steps aside: its snapshot does not have the old write');
    assert.deepEqual((await api.get(`/resource_providers/${rp}/aggregates`)).body, { resource_provider_generation: 0, aggregates: [x] });
    const general = await api.put(`/resource_providers/${rp}/aggregates`, { resource_provider_generation: 0, aggregates: [y] });
    assert.deepEqual(general.body, { resource_provider_generation: 1, aggregates: [y] }, 'the general path then writes it');
    assert.deepEqual((await api.get(`/resource_providers/${rp}/aggregates`)).body, general.body);
  });
});
