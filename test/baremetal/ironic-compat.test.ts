// Ironic behaviours found by comparing allot with the real Ironic from outside (issue 14, "Bare
// metal"; scripts/baremetal-differential.ts replays them against both). Each test names the
// behaviour and asserts Ironic's answer, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode, fault, nodeSettled } from './helpers.js';

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
      assert.deepEqual(
        (await root.get('/nodes/detail?resource_class=rootless')).body.nodes.map((n: { name: string }) => n.name),
        ['rootless'],
      );
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
      const created = await api.post('/v1/nodes', undefined, {
        raw: JSON.stringify({ driver: 'fake-hardware', name: 'untyped' }),
        headers: { 'content-type': '' },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.name, 'untyped');
      const patched = await api.patch('/v1/nodes/untyped', undefined, {
        raw: JSON.stringify([{ op: 'add', path: '/extra/a', value: 1 }]),
        headers: { 'content-type': '' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.extra, { a: 1 });
      // a body that is not JSON is still the request's 400, not a 500
      const bad = await api.post('/v1/nodes', undefined, { raw: 'driver=fake-hardware', headers: { 'content-type': '' } });
      assert.equal(bad.status, 400, bad.text);
      assert.equal((await api.delete('/v1/nodes/untyped')).status, 204);
    });

    test("an identifier that is neither a uuid nor a name is a 400 in Ironic's words and envelope", async () => {
      const framework = (description: string) => ({ code: 400, title: 'Bad Request', description });
      const faultOf = (faultstring: string) => ({ faultcode: 'Client', faultstring, debuginfo: null });
      const cases: [string, string, unknown, object][] = [
        ['GET', '/v1/nodes/bad!', undefined, framework('Expected UUID or name for node: bad!')],
        ['GET', '/v1/nodes/bad%20name', undefined, framework('Expected UUID or name for node: bad name')],
        ['GET', `/v1/nodes/${'x'.repeat(256)}`, undefined, framework(`Expected UUID or name for node: ${'x'.repeat(256)}`)],
        ['PATCH', '/v1/nodes/bad!', [], framework('Expected UUID or name for node: bad!')],
        ['DELETE', '/v1/nodes/bad!', undefined, framework('Expected UUID or name for node: bad!')],
        ['GET', '/v1/nodes/bad!/traits', undefined, framework('Expected UUID or name for node: bad!')],
        ['PUT', '/v1/nodes/bad!/traits/CUSTOM_A', undefined, framework('Expected UUID or name for node: bad!')],
        ['GET', '/v1/nodes/bad!/allocation', undefined, framework('Expected UUID or name for node: bad!')],
        ['DELETE', '/v1/nodes/bad!/allocation', undefined, framework('Expected UUID or name for node: bad!')],
        ['GET', '/v1/nodes/bad!/states', undefined, faultOf('Expected UUID or name for node_ident: bad!')],
        ['PUT', '/v1/nodes/bad!/states/power', { target: 'power on' }, faultOf('Expected UUID or name for node_ident: bad!')],
        ['PUT', '/v1/nodes/bad!/states/provision', { target: 'manage' }, faultOf('Expected UUID or name for node_ident: bad!')],
        ['PUT', '/v1/nodes/bad!/maintenance', {}, faultOf('Expected UUID or name for node_ident: bad!')],
        ['GET', '/v1/allocations/bad!', undefined, faultOf('Expected UUID or name for allocation_ident: bad!')],
        ['DELETE', '/v1/allocations/bad!', undefined, faultOf('Expected UUID or name for allocation_ident: bad!')],
        ['PATCH', '/v1/allocations/bad!', [], faultOf('Expected a logical name or UUID but received bad!.')],
        ['GET', '/v1/allocations?node=bad!', undefined, faultOf('Expected UUID or name for node: bad!')],
        ['POST', '/v1/allocations', { node: 'bad!' }, faultOf('Expected a logical name or UUID but received bad!.')],
      ];
      for (const [method, path, body, expected] of cases) {
        const res = await api.call(method, path, body);
        assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
        assert.deepEqual(fault(res), expected, `${method} ${path}`);
      }
      // names that are valid but unknown stay 404s
      assert.equal((await api.get('/v1/nodes/no-such-node')).status, 404);
      assert.equal((await api.get('/v1/allocations/no-such-allocation')).status, 404);
      // versions: before 1.5 a name is not an identifier (not found); before 1.10 it must be a hostname
      assert.equal((await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'named-node' })).status, 201);
      const old = await api.at('1.4').get('/v1/nodes/named-node');
      assert.equal(old.status, 404);
      assert.equal(fault(old).faultstring, 'Node named-node could not be found.');
      assert.equal((await api.at('1.5').get('/v1/nodes/named-node')).status, 200);
      assert.deepEqual(fault(await api.at('1.9').get('/v1/nodes/a_b~c')), faultOf('Expected a logical name or UUID but received a_b~c.'));
      assert.equal(fault(await api.at('1.10').get('/v1/nodes/a_b~c')).faultstring, 'Node a_b~c could not be found.');
      assert.equal((await api.delete('/v1/nodes/named-node')).status, 204);
    });

    test('older microversions are answered as Ironic answers them', async () => {
      const framework = (code: number, description: string) => ({ code, title: code === 404 ? 'Not Found' : 'Method Not Allowed', description });
      const faultOf = (faultstring: string) => ({ faultcode: 'Client', faultstring, debuginfo: null });
      // before 1.2 an available node has no provision state (NOSTATE)
      const old = await api.at('1.1').post('/v1/nodes', { driver: 'fake-hardware' });
      assert.equal(old.status, 201, old.text);
      assert.equal(old.body.provision_state, null);
      assert.equal((await api.at('1.1').get(`/v1/nodes/${old.body.uuid}/states`)).body.provision_state, null);
      assert.equal((await api.at('1.2').get(`/v1/nodes/${old.body.uuid}`)).body.provision_state, 'available');
      assert.equal((await api.delete(`/v1/nodes/${old.body.uuid}`)).status, 204);

      assert.equal((await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'versioned' })).status, 201);
      // traits before 1.37: GET 406, PUT the node controller's 405, DELETE not found
      const traits = await api.at('1.36').get('/v1/nodes/versioned/traits');
      assert.equal(traits.status, 406);
      assert.deepEqual(fault(traits), faultOf('Request not acceptable.'));
      for (const path of ['/v1/nodes/versioned/traits', '/v1/nodes/versioned/traits/CUSTOM_A']) {
        const put = await api.at('1.36').put(path, path.endsWith('traits') ? { traits: ['CUSTOM_A'] } : undefined);
        assert.equal(put.status, 405, put.text);
        assert.equal(put.headers.get('allow'), 'DELETE, GET, PATCH, POST');
        assert.deepEqual(fault(put), framework(405, ''));
        const del = await api.at('1.36').delete(path);
        assert.equal(del.status, 404);
        assert.deepEqual(fault(del), faultOf('Resource could not be found.'));
      }
      assert.equal((await api.at('1.37').get('/v1/nodes/versioned/traits')).status, 200);
      // conductors before 1.49
      assert.deepEqual(fault(await api.at('1.48').get('/v1/conductors')), faultOf('Resource could not be found.'));
      // the node's allocation before 1.52: the framework's bare 404
      for (const method of ['GET', 'DELETE']) {
        const res = await api.at('1.51').call(method, '/v1/nodes/versioned/allocation');
        assert.equal(res.status, 404);
        assert.deepEqual(fault(res), framework(404, ''));
      }
      // allocations before 1.52: writes are 405s without Allow; PATCH before 1.57 in Ironic's envelope
      for (const [method, path, body] of [
        ['POST', '/v1/allocations', { resource_class: 'x' }],
        ['DELETE', '/v1/allocations/x', undefined],
        ['PATCH', '/v1/allocations/x', []],
      ] as const) {
        const res = await api.at('1.51').call(method, path, body);
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get('allow'), null);
        assert.deepEqual(fault(res), framework(405, 'The API version does not allow allocations'));
      }
      const patch = await api.at('1.56').patch('/v1/allocations/x', []);
      assert.equal(patch.status, 405);
      assert.equal(patch.headers.get('allow'), null);
      assert.deepEqual(fault(patch), faultOf('The API version does not allow updating allocations'));
      // a filter or field newer than the request: 406, naming the version where Ironic names it
      const named: [string, string, string][] = [
        ['driver=fake-hardware', '1.15', '1.16'],
        ['resource_class=x', '1.20', '1.21'],
        ['fault=power%20failure', '1.41', '1.42'],
        ['conductor_group=x', '1.45', '1.46'],
        ['conductor=x', '1.48', '1.49'],
        ['owner=x', '1.49', '1.50'],
        ['lessee=x', '1.64', '1.65'],
        ['shard=x', '1.81', '1.82'],
        ['sharded=true', '1.81', '1.82'],
      ];
      for (const [query, version, since] of named) {
        const res = await api.at(version).get(`/v1/nodes?${query}`);
        assert.equal(res.status, 406, query);
        assert.deepEqual(fault(res), faultOf(`Request not acceptable. The minimal required API version should be ${since}`), query);
      }
      for (const [path, version] of [
        ['/v1/nodes?fields=uuid', '1.7'],
        ['/v1/nodes?provision_state=enroll', '1.8'],
        ['/v1/nodes?fields=owner', '1.49'],
        ['/v1/nodes/versioned?fields=traits', '1.36'],
        ['/v1/allocations?owner=x', '1.59'],
        ['/v1/allocations?fields=owner', '1.59'],
      ] as const) {
        const res = await api.at(version).get(path);
        assert.equal(res.status, 406, path);
        assert.deepEqual(fault(res), faultOf('Request not acceptable.'), path);
      }
      assert.deepEqual(fault(await api.at('1.59').post('/v1/allocations', { resource_class: 'x', owner: 'o' })), faultOf('Request not acceptable.'));
      assert.deepEqual(fault(await api.at('1.49').post('/v1/nodes', { driver: 'fake-hardware', owner: 'x' })), faultOf('Request not acceptable.'));
      assert.deepEqual(fault(await api.at('1.26').put('/v1/nodes/versioned/states/power', { target: 'soft power off' })), faultOf('Request not acceptable.'));
      assert.deepEqual(
        fault(await api.at('1.26').put('/v1/nodes/versioned/states/power', { target: 'power on', timeout: 5 })),
        faultOf('Request not acceptable.'),
      );
      // ?detail before 1.43 is a 400; description_contains and retired are not version-checked (as in Ironic)
      assert.deepEqual(fault(await api.at('1.42').get('/v1/nodes?detail=true')), faultOf('Invalid query parameter ?detail=True received.'));
      assert.equal((await api.at('1.50').get('/v1/nodes?description_contains=zzz')).status, 200);
      assert.equal((await api.at('1.60').get('/v1/nodes?retired=true')).status, 200);
      assert.equal((await api.delete('/v1/nodes/versioned')).status, 204);
    });

    test('every filter of nodes and allocations is validated', async () => {
      const faultOf = (faultstring: string) => ({ faultcode: 'Client', faultstring, debuginfo: null });
      const bad: [string, string][] = [
        ['/v1/nodes?fault=bogus', `Unrecognized fault "bogus" is specified, allowed faults are ('power failure', 'clean failure', 'rescue abort failure')`],
        ['/v1/nodes?provision_state=bogus', 'Provision state "bogus" is not valid'],
        ['/v1/nodes?chassis_uuid=nope', 'Expected UUID for chassis_uuid: nope'],
        ['/v1/nodes?instance_uuid=nope', 'Expected UUID for instance_uuid: nope'],
        ['/v1/nodes?sort_key=traits', 'The sort_key value traits is an invalid field for sorting'],
        ['/v1/allocations?sort_key=traits', 'The sort_key value traits is an invalid field for sorting'],
        ['/v1/allocations?sort_key=candidate_nodes', 'The sort_key value candidate_nodes is an invalid field for sorting'],
      ];
      for (const [path, message] of bad) {
        const res = await api.get(path);
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.deepEqual(fault(res), faultOf(message), path);
      }
      for (const name of ['maintenance', 'associated', 'retired', 'sharded', 'detail']) {
        const res = await api.get(`/v1/nodes?${name}=maybe`);
        assert.equal(res.status, 400, name);
        assert.match(fault(res).faultstring!, new RegExp(`^Invalid ${name}: Unrecognized value 'maybe'`));
      }
      for (const path of [
        '/v1/nodes?limit=abc',
        '/v1/nodes?limit=0',
        '/v1/nodes?sort_dir=up',
        '/v1/nodes?marker=nope',
        '/v1/nodes?bogus=1',
        '/v1/allocations?state=bogus',
        '/v1/allocations?limit=abc',
        '/v1/allocations?marker=nope',
        '/v1/allocations?bogus=1',
      ]) {
        assert.equal((await api.get(path)).status, 400, path);
      }
      // a well-formed chassis uuid that names no chassis
      const chassis = await api.get('/v1/nodes?chassis_uuid=11111111-2222-3333-4444-555555555555');
      assert.equal(chassis.status, 404);
      assert.deepEqual(fault(chassis), faultOf('Chassis 11111111-2222-3333-4444-555555555555 could not be found.'));
      // valid values filter: fault, and project (owner or lessee)
      assert.deepEqual((await api.get('/v1/nodes?fault=power%20failure')).body, { nodes: [] });
      for (const [name, fields] of [
        ['owned', { owner: 'p1' }],
        ['leased', { lessee: 'p1' }],
        ['other', { owner: 'p2' }],
      ] as const) {
        assert.equal((await api.post('/v1/nodes', { driver: 'fake-hardware', name, ...fields })).status, 201);
      }
      const project = await api.get('/v1/nodes?project=p1&sort_key=name');
      assert.equal(project.status, 200, project.text);
      assert.deepEqual(
        project.body.nodes.map((n: { name: string }) => n.name),
        ['leased', 'owned'],
      );
      for (const name of ['owned', 'leased', 'other']) assert.equal((await api.delete(`/v1/nodes/${name}`)).status, 204);
    });

    test('a PATCH answers with the reservation it held (as Ironic, changing instance_uuid or anything else)', async () => {
      const node = await availableNode(api, { name: 'reserved', resource_class: 'reserved' });
      const instance = '11111111-2222-3333-4444-55555555aaaa';
      const set = await api.patch('/v1/nodes/reserved', [{ op: 'add', path: '/instance_uuid', value: instance }]);
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.instance_uuid, instance);
      const conductor = set.body.conductor;
      assert.equal(typeof conductor, 'string');
      assert.equal(set.body.reservation, conductor);
      // released once the change committed
      assert.equal((await api.get('/v1/nodes/reserved')).body.reservation, null);
      const cleared = await api.patch('/v1/nodes/reserved', [{ op: 'remove', path: '/instance_uuid' }]);
      assert.equal(cleared.body.instance_uuid, null);
      assert.equal(cleared.body.reservation, conductor);
      assert.equal((await nodeSettled(api, node.uuid)).reservation, null);
      assert.equal((await api.delete('/v1/nodes/reserved')).status, 204);
    });

    test('un-retire and un-protect clear the reason, even when the request names it', async () => {
      const node = await availableNode(api, { name: 'reasons', resource_class: 'reasons' });
      assert.equal((await api.put('/v1/nodes/reasons/states/provision', { target: 'active' })).status, 202);
      assert.equal((await nodeSettled(api, node.uuid)).provision_state, 'active');
      const patch = async (ops: unknown[]) => {
        const res = await api.patch('/v1/nodes/reasons', ops);
        return res.status === 200
          ? { status: 200, retired: [res.body.retired, res.body.retired_reason], protected: [res.body.protected, res.body.protected_reason] }
          : { status: res.status, message: fault(res).faultstring };
      };
      for (const flag of ['retired', 'protected'] as const) {
        const reason = `${flag}_reason`;
        assert.deepEqual(
          (
            await patch([
              { op: 'add', path: `/${flag}`, value: true },
              { op: 'add', path: `/${reason}`, value: 'old' },
            ])
          )[flag as 'retired'],
          [true, 'old'],
        );
        // the reason set earlier goes with the flag
        assert.deepEqual((await patch([{ op: 'add', path: `/${flag}`, value: false }]))[flag as 'retired'], [false, null]);
        assert.deepEqual(
          (
            await patch([
              { op: 'add', path: `/${flag}`, value: true },
              { op: 'add', path: `/${reason}`, value: 'again' },
            ])
          )[flag as 'retired'],
          [true, 'again'],
        );
        // a reason named with the clearing is cleared too
        assert.deepEqual(
          (
            await patch([
              { op: 'add', path: `/${flag}`, value: false },
              { op: 'add', path: `/${reason}`, value: 'named' },
            ])
          )[flag as 'retired'],
          [false, null],
        );
        // a reason alone, without the flag, is still refused
        assert.deepEqual(await patch([{ op: 'add', path: `/${reason}`, value: 'alone' }]), {
          status: 400,
          message: `The ${reason} field can only be set when ${flag} is True`,
        });
        // while the flag is set, the reason may change on its own
        await patch([{ op: 'add', path: `/${flag}`, value: true }]);
        assert.deepEqual((await patch([{ op: 'add', path: `/${reason}`, value: 'changed' }]))[flag as 'retired'], [true, 'changed']);
        await patch([{ op: 'add', path: `/${flag}`, value: false }]);
      }
      assert.equal((await api.put('/v1/nodes/reasons/states/provision', { target: 'deleted' })).status, 202);
      await nodeSettled(api, node.uuid);
      assert.equal((await api.delete('/v1/nodes/reasons')).status, 204);
    });

    /** enroll → manageable → available, without a power state yet */
    async function providedNode(client: IronicClient, name: string, resourceClass: string): Promise<string> {
      const created = await client.post('/v1/nodes', { driver: 'fake-hardware', name, resource_class: resourceClass });
      assert.equal(created.status, 201, created.text);
      for (const target of ['manage', 'provide']) {
        assert.equal((await client.put(`/v1/nodes/${name}/states/provision`, { target })).status, 202);
        await nodeSettled(client, name);
      }
      return created.body.uuid;
    }

    test('by default a power change settles at once: power off, then allocate immediately (openstacksdk)', async () => {
      const uuid = await providedNode(api, 'sdk-node', 'sdk');
      assert.equal((await api.put('/v1/nodes/sdk-node/states/power', { target: 'power off' })).status, 202);
      const created = await api.post('/v1/allocations', { resource_class: 'sdk', name: 'sdk-allocation' });
      assert.equal(created.status, 201, created.text);
      const done = await allocationSettled(api, 'sdk-allocation');
      assert.equal(done.state, 'active', done.last_error);
      assert.equal(done.node_uuid, uuid);
      assert.equal((await api.delete('/v1/allocations/sdk-allocation')).status, 204);
    });

    test('a node mid power transition becomes a candidate once it settles (slow simulated hardware)', async () => {
      const slow = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 1500 });
      try {
        const client = new IronicClient(`${slow.url}/baremetal`);
        const uuid = await providedNode(client, 'slow-node', 'slow');
        assert.equal((await client.put('/v1/nodes/slow-node/states/power', { target: 'power off' })).status, 202);
        const created = await client.post('/v1/allocations', { resource_class: 'slow', name: 'slow-allocation' });
        assert.equal(created.status, 201, created.text);
        // the allocation was made while the node had no power state yet
        const during = (await client.get('/v1/nodes/slow-node')).body;
        assert.deepEqual([during.power_state, during.target_power_state], [null, 'power off']);
        assert.equal((await client.get('/v1/allocations/slow-allocation')).body.state, 'allocating');
        const done = await allocationSettled(client, 'slow-allocation');
        assert.equal(done.state, 'active', done.last_error);
        assert.equal(done.node_uuid, uuid);
        // with nothing settling, an allocation that matches no node still fails at once
        assert.equal((await client.post('/v1/allocations', { resource_class: 'none-such', name: 'unmatched' })).status, 201);
        const failed = await allocationSettled(client, 'unmatched');
        assert.equal(failed.state, 'error');
        assert.match(failed.last_error, /no available nodes match the resource class none-such/);
      } finally {
        await slow.close();
      }
    });

    test("keys come in Ironic's order: node lists, selected fields, conductors", async () => {
      assert.equal((await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'ordered', resource_class: 'ordered' })).status, 201);
      const listed = (await api.get('/v1/nodes?resource_class=ordered')).body.nodes[0];
      assert.deepEqual(Object.keys(listed), ['uuid', 'instance_uuid', 'maintenance', 'power_state', 'provision_state', 'name', 'links']);
      const selected = (await api.get('/v1/nodes?resource_class=ordered&fields=chassis_uuid,name,conductor,power_state,uuid')).body.nodes[0];
      assert.deepEqual(Object.keys(selected), ['uuid', 'name', 'power_state', 'links', 'conductor', 'chassis_uuid']);
      assert.deepEqual(Object.keys((await api.get('/v1/conductors')).body.conductors[0]), ['hostname', 'conductor_group', 'links', 'alive']);
      const detail = (await api.get('/v1/conductors?detail=true')).body.conductors[0];
      assert.deepEqual(Object.keys(detail), ['created_at', 'updated_at', 'hostname', 'conductor_group', 'drivers', 'links', 'alive']);
      assert.deepEqual(Object.keys((await api.get(`/v1/conductors/${detail.hostname}`)).body), Object.keys(detail));
      assert.equal((await api.delete('/v1/nodes/ordered')).status, 204);
    });

    test('volume connectors, targets and deploy templates have no /detail path; a driver selected by fields keeps its links (Ironic 21.4.4)', async () => {
      // `detail` is read as the identifier it stands in place of, as Ironic's controllers read it
      const connector = await api.get('/v1/volume/connectors/detail');
      assert.equal(connector.status, 400, connector.text);
      assert.equal(fault(connector).faultstring, 'Expected UUID for connector_uuid: detail');
      const target = await api.get('/v1/volume/targets/detail');
      assert.equal(target.status, 400, target.text);
      assert.equal(fault(target).faultstring, 'Expected UUID for target_uuid: detail');
      const template = await api.get('/v1/deploy_templates/detail');
      assert.equal(template.status, 404, template.text);
      assert.equal(fault(template).faultstring, 'Deploy template detail could not be found.');
      // the lists take ?detail=True instead
      assert.deepEqual((await api.get('/v1/deploy_templates?detail=True')).body, { deploy_templates: [] });
      // links always, in their place, as every other resource's `fields`
      const driver = (await api.get('/v1/drivers/fake-hardware?fields=hosts')).body;
      assert.deepEqual(Object.keys(driver), ['hosts', 'links']);
      assert.deepEqual(Object.keys((await api.get('/v1/drivers?fields=name')).body.drivers[0]), ['name', 'links']);
    });
  });
}
