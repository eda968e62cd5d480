// The typed bare-metal client against a real allot (conductors in-process) on SQLite and
// PostgreSQL: nodes through their states, traits and maintenance, allocations waited for until
// active or error (by polling, or in the POST with Prefer: wait), a wait that runs out of time,
// and Ironic's two error shapes parsed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AllotApiError, AllotClient, type BaremetalClient, WaitTimeoutError } from '../../src/client/index.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';

/** A node walked to `available` and powered off: what an allocation can take. */
async function availableNode(bm: BaremetalClient, name: string, resourceClass: string, traits: string[] = []) {
  const node = await bm.createNode({ driver: 'fake-hardware', name, resource_class: resourceClass });
  if (traits.length) await bm.setNodeTraits(node.uuid, traits);
  await bm.setProvisionState(node.uuid, 'manage');
  await bm.waitForProvisionState(node.uuid, 'manageable', { timeoutMs: 30_000, intervalMs: 20 });
  await bm.setProvisionState(node.uuid, 'provide');
  await bm.waitForProvisionState(node.uuid, 'available', { timeoutMs: 30_000, intervalMs: 20 });
  await bm.setPowerState(node.uuid, 'power off');
  return bm.waitForPowerState(node.uuid, 'power off', { timeoutMs: 30_000, intervalMs: 20 });
}

for (const dialect of DIALECTS) {
  describe(`bare-metal client (${dialect})`, () => {
    let server: TestServer;
    let bm: BaremetalClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20, heartbeatInterval: 200, heartbeatTimeout: 5000 });
      bm = new AllotClient({ url: server.url }).baremetal;
    });
    after(() => server.close());

    test('negotiates the newest microversion; nodes: create, patch, states, traits, maintenance, delete', async () => {
      assert.equal(await bm.microversion(), '1.82');
      const node = await availableNode(bm, 'bm-1', 'bm-small', ['CUSTOM_GOLD']);
      assert.deepEqual([node.provision_state, node.power_state], ['available', 'power off']);
      assert.deepEqual(node.traits, ['CUSTOM_GOLD']);

      const patched = await bm.updateNode('bm-1', [
        { op: 'add', path: '/extra/rack', value: 'r7' },
        { op: 'replace', path: '/description', value: 'a test node' },
      ]);
      assert.deepEqual([patched.extra, patched.description], [{ rack: 'r7' }, 'a test node']);

      await bm.addNodeTrait('bm-1', 'CUSTOM_SILVER');
      assert.deepEqual((await bm.listNodeTraits('bm-1')).sort(), ['CUSTOM_GOLD', 'CUSTOM_SILVER']);
      await bm.removeNodeTrait('bm-1', 'CUSTOM_GOLD');
      assert.deepEqual(await bm.listNodeTraits('bm-1'), ['CUSTOM_SILVER']);

      await bm.setMaintenance('bm-1', 'disk swap');
      assert.deepEqual([(await bm.getNode('bm-1')).maintenance, (await bm.getNode('bm-1')).maintenance_reason], [true, 'disk swap']);
      assert.deepEqual(
        (await bm.listAllNodes({ maintenance: true })).map((n) => n.name),
        ['bm-1'],
      );
      await bm.clearMaintenance('bm-1');
      assert.equal((await bm.getNode('bm-1')).maintenance, false);

      const states = await bm.getNodeStates('bm-1');
      assert.equal(states.provision_state, 'available');
      assert.deepEqual(Object.keys(await bm.getNode('bm-1', ['uuid', 'name'])).sort(), ['links', 'name', 'uuid']);

      const extra = await bm.createNode({ driver: 'fake-hardware', name: 'bm-gone' });
      await bm.deleteNode(extra.uuid);
      await assert.rejects(bm.getNode('bm-gone'), (e: unknown) => e instanceof AllotApiError && e.status === 404);
    });

    test('allocations: create, wait until active, list, patch, delete releases the node', async () => {
      const node = await availableNode(bm, 'bm-2', 'bm-large', ['CUSTOM_FAST']);
      const created = await bm.createAllocation({ resource_class: 'bm-large', traits: ['CUSTOM_FAST'], name: 'alloc-1', extra: { ticket: 'T-1' } });
      const seen: string[] = [];
      const done = await bm.waitForAllocation(created.uuid, { timeoutMs: 30_000, intervalMs: 20, onPoll: (s) => seen.push(s) });
      assert.equal(done.state, 'active');
      assert.equal(done.node_uuid, node.uuid);
      assert.equal(seen.at(-1), 'active');
      assert.equal((await bm.getNodeAllocation('bm-2')).uuid, created.uuid);
      assert.deepEqual(
        (await bm.listAllAllocations({ state: 'active' })).map((a) => a.name),
        ['alloc-1'],
      );
      assert.equal((await bm.updateAllocation('alloc-1', [{ op: 'replace', path: '/name', value: 'alloc-one' }])).name, 'alloc-one');
      await bm.deleteAllocation('alloc-one');
      assert.equal((await bm.getNode('bm-2')).allocation_uuid, null);
    });

    test('createAllocation with waitSeconds asks the server for the outcome (Prefer: wait) and gets it in one request', async () => {
      const node = await availableNode(bm, 'bm-3', 'bm-wait');
      const sent: Array<{ method: string; url: string; prefer: string | null }> = [];
      const recording = new AllotClient({
        url: server.url,
        fetch: (input, init) => {
          sent.push({ method: init?.method ?? 'GET', url: String(input), prefer: new Headers(init?.headers).get('prefer') });
          return fetch(input, init);
        },
      }).baremetal;
      const done = await recording.createAllocation({ resource_class: 'bm-wait', name: 'waited' }, { waitSeconds: 10 });
      assert.deepEqual([done.state, done.node_uuid], ['active', node.uuid]);
      const posts = sent.filter((r) => r.method === 'POST');
      assert.deepEqual(
        posts.map((r) => [new URL(r.url).pathname, r.prefer]),
        [['/baremetal/v1/allocations', 'wait=10']],
      );
      // without it, Ironic's answer: allocating, to be waited for
      await bm.deleteAllocation('waited');
      assert.equal((await bm.createAllocation({ resource_class: 'bm-wait' })).state, 'allocating');
    });

    test('waitForAllocation ends with error when nothing matches, and lists follow pages', async () => {
      const failed = await bm.waitForAllocation((await bm.createAllocation({ resource_class: 'bm-nonexistent' })).uuid, { timeoutMs: 30_000, intervalMs: 20 });
      assert.equal(failed.state, 'error');
      assert.match(failed.last_error ?? '', /no available nodes|No nodes/i);

      for (let i = 0; i < 5; i++) await bm.createNode({ driver: 'fake-hardware', name: `page-${i}`, resource_class: 'paged' });
      const page = await bm.listNodes({ resource_class: 'paged', limit: 2 });
      assert.equal(page.nodes.length, 2);
      assert.ok(page.next);
      assert.deepEqual(
        (await bm.listAllNodes({ resource_class: 'paged', limit: 2, sort_key: 'name' })).map((n) => n.name),
        ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'],
      );
    });

    test("Ironic's fault and framework errors become AllotApiErrors", async () => {
      const missing = await bm.getNode('no-such-node').catch((e: unknown) => e);
      assert.ok(missing instanceof AllotApiError);
      assert.deepEqual([missing.status, missing.code, missing.message], [404, 'Client', 'Node no-such-node could not be found.']);
      assert.match(missing.requestId ?? '', /^req-/);

      const tooNew = await bm
        .at('1.99')
        .listNodes()
        .catch((e: unknown) => e);
      assert.ok(tooNew instanceof AllotApiError);
      assert.equal(tooNew.status, 406);
      assert.match(tooNew.message, /version/i);

      const badTarget = await bm.setProvisionState('bm-1', 'rescue').catch((e: unknown) => e);
      assert.ok(badTarget instanceof AllotApiError);
      assert.equal(badTarget.status, 400);
      assert.ok(badTarget.message.length > 0);
    });
  });

  describe(`bare-metal client: a wait is bounded (${dialect})`, () => {
    let server: TestServer;
    before(async () => {
      // allocations stay `allocating` for 30 s: longer than the wait below
      server = await startServer({ db: await freshDatabaseUrl(dialect), allocationDelay: 30_000 });
    });
    after(() => server.close());

    test('waitForAllocation gives up after timeoutMs with WaitTimeoutError', async () => {
      const bm = new AllotClient({ url: server.url }).baremetal;
      const created = await bm.createAllocation({ resource_class: 'bm-slow' });
      const err = await bm.waitForAllocation(created.uuid, { timeoutMs: 300, intervalMs: 50 }).catch((e: unknown) => e);
      assert.ok(err instanceof WaitTimeoutError, String(err));
      assert.equal((err.last as { state: string }).state, 'allocating');
      assert.match(err.message, /after 300 ms/);
    });
  });
}
