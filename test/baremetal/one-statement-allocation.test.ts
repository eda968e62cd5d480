// On PostgreSQL a new allocation whose node is free now is ONE statement
// (src/baremetal/store/one-statement-allocation.ts). These tests run that statement directly, in a
// transaction of its own as the allocation service does, on a running server's database, and look
// at the outcome over HTTP: with a free node it commits the allocation `active` on the node it
// reserves (so the fast path is really taken, not silently stepped aside every time); with no
// free node, or a clash, it raises and leaves nothing behind. The HTTP behaviour of the same
// allocations, on both databases and both backends, is in allocations.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { BaremetalContext } from '../../src/baremetal/context.js';
import { type AllocationValues, allocateOnFreeNode } from '../../src/baremetal/store/one-statement-allocation.js';
import { transaction } from '../../src/db/transaction.js';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, availableNode } from './helpers.js';

describe('one-statement bare-metal allocation (postgres)', () => {
  let server: TestServer;
  let api: IronicClient;
  let ctx: BaremetalContext;
  before(async () => {
    server = await startServer({ db: await freshDatabaseUrl('postgres'), transitionTime: 20 });
    api = new IronicClient(`${server.url}/baremetal`);
    ctx = server.running.context.baremetal;
  });
  after(() => server.close());

  const values = (resourceClass: string, extra: Partial<AllocationValues> = {}): AllocationValues => ({
    uuid: randomUUID(),
    name: null,
    resource_class: resourceClass,
    conductor_affinity: ctx.conductorId,
    candidate_nodes: '[]',
    extra: '{}',
    owner: null,
    now: new Date().toISOString(),
    ...extra,
  });
  /** Run the statement as the service does, in its own transaction: its node's uuid, or null when it raised. */
  async function inOneStatement(v: AllocationValues, traits: string[] = []): Promise<string | null> {
    const wanted = { resourceClass: v.resource_class, candidates: JSON.parse(v.candidate_nodes) as string[], owner: v.owner, traits, name: v.name };
    try {
      const { node } = await transaction(ctx.database, (tx) => allocateOnFreeNode(tx, v, wanted), { oneStatement: true, maxAttempts: 1 });
      return node.uuid;
    } catch {
      return null;
    }
  }

  test('a free node: the allocation is written active on it, and the node reserved for it', async () => {
    const node = await availableNode(api, { name: 'os-1', resource_class: 'one-a' }, ['CUSTOM_A', 'CUSTOM_B']);
    const v = values('one-a');
    assert.equal(await inOneStatement(v, ['CUSTOM_A']), node.uuid);

    const allocation = (await api.get(`/v1/allocations/${v.uuid}`)).body;
    assert.equal(allocation.state, 'active');
    assert.equal(allocation.node_uuid, node.uuid);
    assert.equal(allocation.last_error, null);
    assert.deepEqual(allocation.traits, ['CUSTOM_A']);
    const reserved = (await api.get(`/v1/nodes/${node.uuid}`)).body;
    assert.equal(reserved.instance_uuid, v.uuid);
    assert.equal(reserved.allocation_uuid, v.uuid);
    assert.deepEqual(reserved.instance_info.traits, ['CUSTOM_A']);
  });

  test('a node of the allocation’s name is taken first', async () => {
    await availableNode(api, { name: 'os-other', resource_class: 'one-b' });
    const named = await availableNode(api, { name: 'os-named', resource_class: 'one-b' });
    assert.equal(await inOneStatement(values('one-b', { name: 'os-named' })), named.uuid);
  });

  test('no free node: it raises and keeps nothing', async () => {
    const node = await availableNode(api, { name: 'os-2', resource_class: 'one-c' });
    const first = values('one-c');
    assert.equal(await inOneStatement(first), node.uuid);
    const second = values('one-c');
    assert.equal(await inOneStatement(second), null);
    assert.equal((await api.get(`/v1/allocations/${second.uuid}`)).status, 404);
    assert.equal((await api.get(`/v1/nodes/${node.uuid}`)).body.allocation_uuid, first.uuid);
  });

  test('a clash (the uuid or the name of an allocation that exists): it raises, and the free node stays free', async () => {
    const taken = await availableNode(api, { name: 'os-3', resource_class: 'one-d' });
    const free = await availableNode(api, { name: 'os-4', resource_class: 'one-e' });
    const first = values('one-d', { name: 'os-alloc' });
    assert.equal(await inOneStatement(first), taken.uuid);

    assert.equal(await inOneStatement(values('one-e', { uuid: first.uuid })), null);
    assert.equal(await inOneStatement(values('one-e', { name: 'os-alloc' })), null);
    const node = (await api.get(`/v1/nodes/${free.uuid}`)).body;
    assert.equal(node.instance_uuid, null);
    assert.equal(node.allocation_uuid, null);
  });
});
