// `Prefer: wait=N` (RFC 7240) on POST /v1/allocations, on both databases and both backends: the
// answer is the allocation's outcome when it comes within N seconds (bounded by
// --max-prefer-wait), with `Preference-Applied: wait=N`; without the preference, Ironic's answer.
// A free node: active at once. No node can ever match: error. A node held by a power change: still
// allocating after N s, or active as soon as the change frees it within N. A client that goes
// away ends the wait. An allocation finished by another process (a take-over) ends it too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { beat } from '../../src/baremetal/services/conductors.js';
import { takeOver } from '../../src/baremetal/workers/conductor.js';
import { ManualClock } from '../../src/core/clock.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type HttpResponse, request } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode, eventually } from './helpers.js';

const BACKENDS = ['database', 'placement'] as const;
const prefer = (value: string) => ({ headers: { prefer: value } });

/** A node that is available but busy with a power change for the server's transition time: in the pool, not free. */
async function nodeSettlingPower(api: IronicClient, name: string, resourceClass: string): Promise<string> {
  // before 1.11 a node is born available (with no power state yet); a class it may get at once
  const created = await api.at('1.10').post('/v1/nodes', { driver: 'fake-hardware', name });
  assert.equal(created.status, 201, created.text);
  const classed = await api.patch(`/v1/nodes/${name}`, [{ op: 'add', path: '/resource_class', value: resourceClass }]);
  assert.equal(classed.status, 200, classed.text);
  assert.equal((await api.put(`/v1/nodes/${name}/states/power`, { target: 'power off' })).status, 202);
  assert.notEqual((await api.get(`/v1/nodes/${name}`)).body.reservation, null);
  return created.body.uuid;
}

/** The server's count of answered POST /v1/allocations (2xx), from /metrics. */
async function postsAnswered(server: TestServer): Promise<number> {
  const text = (await request('GET', `${server.url}/metrics`)).text;
  const line = text
    .split('\n')
    .find((l) => l.startsWith('allot_http_requests_total{') && l.includes('route="/v1/allocations"') && l.includes('method="POST"') && l.includes('2xx'));
  return line ? Number(line.split(' ').pop()) : 0;
}

for (const dialect of DIALECTS) {
  for (const backend of BACKENDS) {
    describe(`Prefer: wait on POST /v1/allocations (${dialect}, ${backend} backend)`, () => {
      let fast: TestServer;
      let slow: TestServer;
      let capped: TestServer;
      let api: IronicClient;
      let slowApi: IronicClient;
      before(async () => {
        fast = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20, baremetalBackend: backend });
        // power changes take 4 s: a node settling one is in the pool but not free
        slow = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 4000, baremetalBackend: backend });
        // every allocation waits 3 s for the worker, longer than the 1 s the operator lets a request wait
        capped = await startServer({
          db: await freshDatabaseUrl(dialect),
          transitionTime: 20,
          baremetalBackend: backend,
          allocationDelay: 3000,
          maxPreferWait: 1000,
        });
        api = new IronicClient(`${fast.url}/baremetal`);
        slowApi = new IronicClient(`${slow.url}/baremetal`);
      });
      after(async () => {
        await Promise.all([fast?.close(), slow?.close(), capped?.close()]);
      });

      test("a free node: active on it in the answer, Preference-Applied: wait=N; without the preference, Ironic's answer", async () => {
        const [n1, n2] = [await availableNode(api, { name: 'pw-1', resource_class: 'pw' }), await availableNode(api, { name: 'pw-2', resource_class: 'pw' })];
        const res = await api.post('/v1/allocations', { resource_class: 'pw', name: 'pw-a' }, prefer('wait=10'));
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('preference-applied'), 'wait=10');
        assert.equal(res.body.state, 'active', res.body.last_error);
        assert.ok([n1.uuid, n2.uuid].includes(res.body.node_uuid));
        assert.notEqual(res.body.updated_at, null);
        assert.equal(res.headers.get('location'), `${fast.url}/baremetal/v1/allocations/${res.body.uuid}`);
        assert.deepEqual(res.body, (await api.get(`/v1/allocations/${res.body.uuid}`)).body);

        const plain = await api.post('/v1/allocations', { resource_class: 'pw', name: 'pw-b' });
        assert.equal(plain.status, 201, plain.text);
        assert.equal(plain.headers.get('preference-applied'), null);
        assert.equal(plain.body.state, 'allocating');
        assert.equal(plain.body.node_uuid, null);
        const done = await allocationSettled(api, plain.body.uuid);
        assert.equal(done.state, 'active', done.last_error);
        assert.equal(
          done.node_uuid,
          [n1.uuid, n2.uuid].find((u) => u !== res.body.node_uuid),
        );
      });

      test('the preference is read as RFC 7240 writes it: among others, quoted, repeated; a value that is not delta-seconds is ignored', async () => {
        await availableNode(api, { name: 'pp-1', resource_class: 'pp' });
        for (const [header, applied] of [
          ['respond-async, wait=5', 'wait=5'],
          ['handling=lenient; x="a,b", WAIT = "7"', 'wait=7'],
          ['wait=3, wait=9', 'wait=3'],
          ['return=minimal;wait=2', null], // `wait` here is a parameter of `return`, not a preference
          ['wait=abc', null],
          ['wait=-1', null],
          ['wait=1.5', null],
          ['wait', null],
          ['wait=', null],
        ] as const) {
          // the node is free each time: applied, the answer is the outcome; ignored, Ironic's
          const res = await api.post('/v1/allocations', { resource_class: 'pp' }, prefer(header));
          assert.equal(res.status, 201, `${header}: ${res.text}`);
          assert.equal(res.headers.get('preference-applied'), applied, header);
          assert.equal(res.body.state, applied === null ? 'allocating' : 'active', header);
          assert.equal((await allocationSettled(api, res.body.uuid)).state, 'active', header);
          assert.equal((await api.delete(`/v1/allocations/${res.body.uuid}`)).status, 204);
        }
      });

      test("no node can ever match: error with Ironic's last_error, within the wait", async () => {
        const res = await api.post('/v1/allocations', { resource_class: 'pw-nothing' }, prefer('wait=20'));
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('preference-applied'), 'wait=20');
        assert.equal(res.body.state, 'error');
        assert.equal(res.body.node_uuid, null);
        assert.equal(res.body.last_error, `Failed to process allocation ${res.body.uuid}: no available nodes match the resource class pw-nothing.`);
      });

      test('a backfill is answered active with or without the preference, and says nothing of it', async () => {
        const node = await availableNode(api, { name: 'pw-bf', resource_class: 'pw-bf' });
        await api.put('/v1/nodes/pw-bf/states/provision', { target: 'active' });
        await eventually(
          async () => (await api.get('/v1/nodes/pw-bf')).body.provision_state,
          (s) => s === 'active',
          'deployed',
        );
        const res = await api.post('/v1/allocations', { node: 'pw-bf' }, prefer('wait=5'));
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.state, 'active');
        assert.equal(res.body.node_uuid, node.uuid);
        assert.equal(res.headers.get('preference-applied'), null);
      });

      test('a node settling a power change: still allocating after N s; active in the answer when it frees within N', async () => {
        await nodeSettlingPower(slowApi, 'ps-1', 'ps');
        const early = await slowApi.post('/v1/allocations', { resource_class: 'ps' }, prefer('wait=1'));
        assert.equal(early.status, 201, early.text);
        assert.equal(early.headers.get('preference-applied'), 'wait=1');
        assert.equal(early.body.state, 'allocating');
        assert.equal(early.body.node_uuid, null);
        const later = await allocationSettled(slowApi, early.body.uuid);
        assert.equal(later.state, 'active', later.last_error);

        const freed = await nodeSettlingPower(slowApi, 'ps-2', 'ps');
        const res = await slowApi.post('/v1/allocations', { resource_class: 'ps' }, prefer('wait=20'));
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('preference-applied'), 'wait=20');
        assert.equal(res.body.state, 'active', res.body.last_error);
        assert.equal(res.body.node_uuid, freed);
      });

      test('a client that goes away ends the wait: the request is over while its allocation is still allocating', async () => {
        await nodeSettlingPower(slowApi, 'ps-gone', 'ps-gone');
        const answered = await postsAnswered(slow);
        const leaving = new AbortController();
        const sent = fetch(`${slow.url}/baremetal/v1/allocations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-openstack-ironic-api-version': '1.82', prefer: 'wait=30' },
          body: JSON.stringify({ resource_class: 'ps-gone', name: 'gone' }),
          signal: leaving.signal,
        }).catch((err: Error) => err);
        const created = await eventually(
          async () => (await slowApi.get('/v1/allocations/gone')).body,
          (a) => a?.state === 'allocating',
          'the allocation to exist',
        );
        leaving.abort();
        assert.ok((await sent) instanceof Error);
        // the server finished the request (counted by its metrics) while the node still settles
        await eventually(
          () => postsAnswered(slow),
          (n) => n === answered + 1,
          'the waiting request to end',
        );
        assert.equal((await slowApi.get(`/v1/allocations/${created.uuid}`)).body.state, 'allocating');
        assert.equal((await allocationSettled(slowApi, created.uuid)).state, 'active');
      });

      test('--max-prefer-wait bounds the wait: N larger than it waits that long, and says so', async () => {
        const capApi = new IronicClient(`${capped.url}/baremetal`);
        await availableNode(capApi, { name: 'cap-1', resource_class: 'cap' });
        const res = await capApi.post('/v1/allocations', { resource_class: 'cap' }, prefer('wait=30'));
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('preference-applied'), 'wait=1');
        assert.equal(res.body.state, 'allocating');
        assert.equal((await allocationSettled(capApi, res.body.uuid)).state, 'active');
      });
    });
  }

  describe(`Prefer: wait, the allocation finished by another process (${dialect})`, () => {
    let dir: string;
    const servers: TestServer[] = [];
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'allot-prefer-'));
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.close()));
      rmSync(dir, { recursive: true, force: true });
    });

    test("a conductor that takes the allocation over and finishes it ends the first one's wait (it reads the row)", async () => {
      const db = dialect === 'postgres' ? await freshDatabaseUrl('postgres') : `sqlite:${path.join(dir, 'prefer.db')}`;
      const HOUR = 3_600_000;
      const quiet = { heartbeatInterval: HOUR, heartbeatTimeout: 60_000, takeoverInterval: 0 };
      const clock = new ManualClock();
      const survivor = await startServer({ db, ...quiet, conductorId: 'prefer-survivor', transitionTime: 20 }, { clock });
      servers.push(survivor);
      // the first conductor's worker would wait an hour before it picks a node
      const first = await startServer({ db, ...quiet, conductorId: 'prefer-first', allocationDelay: HOUR, transitionTime: 20 });
      servers.push(first);
      const api = new IronicClient(`${survivor.url}/baremetal`);
      const node = await availableNode(api, { name: 'tk-1', resource_class: 'tk' });

      const waiting = new IronicClient(`${first.url}/baremetal`).post('/v1/allocations', { resource_class: 'tk', name: 'tk-a' }, prefer('wait=30'));
      await eventually(
        async () => (await api.get('/v1/allocations/tk-a')).body?.state,
        (s) => s === 'allocating',
        'the allocation to exist',
      );
      await beat(first.running.context.baremetal);
      const lastBeat = Date.parse((await api.get('/v1/conductors/prefer-first')).body.updated_at);
      clock.advance(lastBeat + 60_000 + 1 - clock.nowMs());
      assert.deepEqual(await takeOver(survivor.running.context.baremetal), { allocations: 1, nodes: 0 });

      const res: HttpResponse = await waiting;
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.get('preference-applied'), 'wait=30');
      assert.equal(res.body.state, 'active', res.body.last_error);
      assert.equal(res.body.node_uuid, node.uuid);
    });
  });
}
