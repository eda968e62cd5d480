// Ironic behaviours found by comparing allot with the real Ironic from outside (issue 14, "Bare
// metal"; scripts/baremetal-differential.ts replays them against both). Each test names the
// behaviour and asserts Ironic's answer, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, fault } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`bare-metal: Ironic's answers found from outside (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    let root: IronicClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      api = new IronicClient(`${server.url}/baremetal`);
      root = api;
    });
    after(() => server.close());

    test('paths without /v1 are the v1 resources (bookmark links work)', async () => {
      const created = await root.post('/nodes', { driver: 'fake-hardware', name: 'rootless', resource_class: 'rootless' });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.get('location'), `${server.url}/baremetal/v1/nodes/${created.body.uuid}`);
      const bookmark = created.body.links.find((l: { rel: string }) => l.rel === 'bookmark').href as string;
      assert.equal(bookmark, `${server.url}/baremetal/nodes/${created.body.uuid}`);
      const followed = await root.call('GET', bookmark.slice(root.baseUrl.length));
      assert.equal(followed.status, 200, followed.text);
      assert.equal(followed.body.name, 'rootless');
      assert.deepEqual((await root.get('/nodes/detail?resource_class=rootless')).body.nodes.map((n: { name: string }) => n.name), ['rootless']);
      assert.deepEqual((await root.get('/nodes/?resource_class=rootless')).body.nodes.length, 1);
      assert.equal((await root.get('/nodes/rootless/states')).body.provision_state, 'enroll');
      assert.deepEqual((await root.get('/nodes/rootless/traits')).body, { traits: [] });
      const noAllocation = await root.get('/nodes/rootless/allocation');
      assert.equal(noAllocation.status, 404);
      assert.equal(fault(noAllocation).faultstring, 'Allocation for node rootless was not found');
      assert.deepEqual((await root.get('/allocations?resource_class=rootless')).body, { allocations: [] });
      assert.equal(fault(await root.get('/allocations/nope')).faultstring, 'Allocation nope could not be found.');
      assert.equal((await root.get('/conductors')).status, 200);
      // a node named in an allocation's filter is the request's fault on either path
      assert.equal((await root.get('/allocations?node=nosuch')).status, 400);
      // the same version rules: below 1.52 allocations do not exist
      assert.equal((await root.at('1.51').get('/allocations')).status, 404);
      assert.equal((await root.delete('/nodes/rootless')).status, 204);
      // and what is not a resource is still a 404
      assert.equal((await root.get('/bogus')).status, 404);
    });

    test('an empty Content-Type with a JSON body is read as JSON (201), as Ironic does', async () => {
      const created = await api.post('/v1/nodes', undefined, { raw: JSON.stringify({ driver: 'fake-hardware', name: 'untyped' }), headers: { 'content-type': '' } });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.name, 'untyped');
      const patched = await api.patch('/v1/nodes/untyped', undefined, { raw: JSON.stringify([{ op: 'add', path: '/extra/a', value: 1 }]), headers: { 'content-type': '' } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.extra, { a: 1 });
      // a body that is not JSON is still the request's 400, not a 500
      const bad = await api.post('/v1/nodes', undefined, { raw: 'driver=fake-hardware', headers: { 'content-type': '' } });
      assert.equal(bad.status, 400, bad.text);
      assert.equal((await api.delete('/v1/nodes/untyped')).status, 204);
    });
  });
}
