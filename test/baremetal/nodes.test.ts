// Nodes: create, show, list (filters, fields, paging), JSON patch, traits, the fake-hardware
// provision and power state machine, maintenance and deletion rules.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, availableNode, fault, nodeSettled } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`bare-metal nodes (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 30 });
      api = new IronicClient(`${server.url}/baremetal`);
    });
    after(() => server.close());

    test('create a node: defaults of fake-hardware, enroll, versioned fields', async () => {
      const res = await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'c1', resource_class: 'bm-large', properties: { cpus: 4 }, owner: 'p1' });
      assert.equal(res.status, 201, res.text);
      const n = res.body;
      assert.equal(n.provision_state, 'enroll');
      assert.equal(n.power_state, null);
      assert.equal(n.deploy_interface, 'fake');
      assert.equal(n.network_interface, 'noop');
      assert.equal(n.allocation_uuid, null);
      assert.deepEqual(n.traits, []);
      assert.deepEqual(n.properties, { cpus: 4 });
      assert.equal(n.owner, 'p1');
      assert.equal(n.conductor, server.running.context.config.conductorId);
      // older versions see fewer fields, and before 1.11 a node starts available
      const old = await api.at('1.10').post('/v1/nodes', { driver: 'fake-hardware', name: 'old' });
      assert.equal(old.body.provision_state, 'available');
      assert.equal(old.body.resource_class, undefined);
      assert.equal(old.body.owner, undefined);
      // a field newer than the request is a 406
      assert.equal((await api.at('1.49').post('/v1/nodes', { driver: 'fake-hardware', owner: 'x' })).status, 406);
    });

    test('create refuses what Ironic refuses', async () => {
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ name: 'x' }, 400, /'driver' is a required property/],
        [{ driver: 'ipmi' }, 400, /No valid host was found. Reason: No conductor service registered which supports driver ipmi/],
        [{ driver: 'fake-hardware', traits: ['CUSTOM_A'] }, 400, /'traits' was unexpected/],
        [{ driver: 'fake-hardware', provision_state: 'available' }, 400, /'provision_state' was unexpected/],
        [{ driver: 'fake-hardware', name: 'bad name!' }, 400, /Cannot create node with invalid name 'bad name!'/],
        [{ driver: 'fake-hardware', name: '11111111-2222-3333-4444-555555555555' }, 400, /invalid name/],
        [{ driver: 'fake-hardware', name: 'c1' }, 409, /^A node with name c1 already exists\.$/],
        [{ driver: 'fake-hardware', resource_class: 'x'.repeat(81) }, 400, /is too long/],
        [{ driver: 'fake-hardware', instance_uuid: 'nope' }, 400, /^Expected UUID for instance_uuid: nope$/],
        [{ driver: 'fake-hardware', deploy_interface: 'direct' }, 400, /not enabled for deploy_interface/],
        [{ driver: 'fake-hardware', description: 'd'.repeat(4097) }, 400, /exceeding 4096 characters/],
        [{ driver: 'fake-hardware', maintenance: 'maybe' }, 400, /Invalid maintenance/],
      ];
      for (const [body, status, message] of cases) {
        const res = await api.post('/v1/nodes', body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
        assert.match(fault(res).faultstring!, message);
      }
    });

    test('show by uuid or name, with fields; 404 for neither', async () => {
      const n = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 's1' })).body;
      assert.equal((await api.get(`/v1/nodes/${n.uuid}`)).body.name, 's1');
      assert.equal((await api.get(`/v1/nodes/${n.uuid.toUpperCase()}`)).body.name, 's1');
      const some = await api.get('/v1/nodes/s1?fields=uuid,provision_state');
      assert.deepEqual(Object.keys(some.body), ['uuid', 'provision_state', 'links']);
      assert.equal((await api.get('/v1/nodes/s1?fields=bogus')).status, 400);
      assert.equal((await api.get('/v1/nodes/s2')).status, 404);
    });

    test('JSON patch: add, replace, remove at depth; read-only and unknown fields refused', async () => {
      const n = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'p1' })).body;
      const ok = await api.patch('/v1/nodes/p1', [
        { op: 'add', path: '/extra/foo', value: 'bar' },
        { op: 'add', path: '/properties/disks', value: [1, 2] },
        { op: 'add', path: '/properties/disks/0', value: 0 },
        { op: 'add', path: '/properties/disks/-', value: 9 },
        { op: 'replace', path: '/description', value: 'rack 4' },
        { op: 'add', path: '/maintenance', value: 'yes' },
        { op: 'add', path: '/conductor_group', value: 'GROUP-1' },
      ]);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body.extra, { foo: 'bar' });
      assert.deepEqual(ok.body.properties, { disks: [0, 1, 2, 9] });
      assert.equal(ok.body.maintenance, true);
      assert.equal(ok.body.conductor_group, 'group-1');
      assert.notEqual(ok.body.updated_at, null);
      const removed = await api.patch(`/v1/nodes/${n.uuid}`, [
        { op: 'remove', path: '/extra' },
        { op: 'remove', path: '/description' },
        { op: 'add', path: '/maintenance', value: false },
      ]);
      assert.deepEqual(removed.body.extra, {});
      assert.equal(removed.body.description, null);
      assert.equal(removed.body.maintenance, false);
      const cases: Array<[unknown, number, RegExp]> = [
        [[{ op: 'replace', path: '/extra/nope', value: 1 }], 400, /Couldn't apply patch .*Reason: can't replace a non-existent object 'nope'/],
        [[{ op: 'remove', path: '/extra/nope' }], 400, /can't remove a non-existent object 'nope'/],
        [[{ op: 'add', path: '/extra/a/b', value: 1 }], 400, /member 'a' not found in \{\}/],
        [[{ op: 'replace', path: '/allocation_uuid', value: n.uuid }], 400, /^Cannot patch \/allocation_uuid\. Only the following can be updated: /],
        [[{ op: 'replace', path: '/provision_state', value: 'active' }], 400, /Cannot patch \/provision_state/],
        [[{ op: 'add', path: '/traits', value: [] }], 400, /Cannot patch \/traits/],
        [[{ op: 'move', path: '/extra/x', from: '/extra/y' }], 400, /Schema error for patch: Additional properties are not allowed \('from' was unexpected\)/],
        [[{ op: 'move', path: '/extra/x' }], 400, /Schema error for patch: 'move' is not one of \['add', 'replace', 'remove'\]/],
        [[{ op: 'add', path: 'extra', value: 1 }], 400, /does not match/],
        [[{ op: 'add', path: '/extra' }], 400, /need a value/],
        [{ op: 'add' }, 400, /is not of type 'array'/],
        [[{ op: 'remove', path: '/driver' }], 400, /'driver' is a required property|None is not of type 'string'/],
        [[{ op: 'add', path: '/driver', value: 'ipmi' }], 400, /No valid host was found/],
        [[{ op: 'add', path: '/name', value: 'bad name!' }], 400, /Cannot change name to invalid name 'bad name!'/],
        [[{ op: 'add', path: '/name', value: 's1' }], 409, /^A node with name s1 already exists\.$/],
        [[{ op: 'add', path: '/instance_info', value: 'x' }], 400, /'x' is not of type 'object', 'null'/],
        [[{ op: 'add', path: '/instance_uuid', value: 'nope' }], 400, /Expected UUID for instance_uuid: nope/],
        [[{ op: 'remove', path: '/maintenance' }], 400, /cannot be removed/],
        [[{ op: 'add', path: '/protected', value: true }], 409, /can only be made protected in provision states 'active' or 'rescue'/],
      ];
      for (const [ops, status, message] of cases) {
        const res = await api.patch('/v1/nodes/p1', ops);
        assert.equal(res.status, status, `${JSON.stringify(ops)}: ${res.text}`);
        assert.match(fault(res).faultstring!, message);
      }
      // a field newer than the request: 406
      assert.equal((await api.at('1.49').patch('/v1/nodes/p1', [{ op: 'add', path: '/owner', value: 'x' }])).status, 406);
    });

    test('instance_uuid: set freely, replaced only by removing it first, unique across nodes', async () => {
      const a = (await api.post('/v1/nodes', { driver: 'fake-hardware' })).body.uuid;
      const b = (await api.post('/v1/nodes', { driver: 'fake-hardware' })).body.uuid;
      const i1 = '11111111-2222-3333-4444-555555555556';
      const i2 = '11111111-2222-3333-4444-555555555557';
      assert.equal((await api.patch(`/v1/nodes/${a}`, [{ op: 'add', path: '/instance_uuid', value: i1 }])).status, 200);
      const replaced = await api.patch(`/v1/nodes/${a}`, [{ op: 'replace', path: '/instance_uuid', value: i2 }]);
      assert.equal(replaced.status, 409);
      assert.equal(fault(replaced).faultstring, `Node ${a} is associated with instance ${i1}.`);
      const taken = await api.patch(`/v1/nodes/${b}`, [{ op: 'add', path: '/instance_uuid', value: i1 }]);
      assert.equal(taken.status, 409);
      assert.match(fault(taken).faultstring!, /is already associated with a node/);
      assert.equal((await api.patch(`/v1/nodes/${a}`, [{ op: 'remove', path: '/instance_uuid' }])).body.instance_uuid, null);
      // an instance uuid without an allocation: the node's allocation is a 400 (the spec), none a 404
      await api.patch(`/v1/nodes/${a}`, [{ op: 'add', path: '/instance_uuid', value: i2 }]);
      assert.equal((await api.get(`/v1/nodes/${a}/allocation`)).status, 400);
      const none = await api.get(`/v1/nodes/${b}/allocation`);
      assert.equal(none.status, 404);
      assert.equal(fault(none).faultstring, `Allocation for node ${b} was not found`);
      assert.equal((await api.get('/v1/nodes/nope/allocation')).status, 404);
    });

    test('traits: replace, add, remove one, remove all; validation and the limit of 50', async () => {
      const n = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 't1' })).body.uuid;
      assert.equal((await api.put('/v1/nodes/t1/traits', { traits: ['CUSTOM_B', 'HW_CPU_X86_VMX', 'CUSTOM_B'] })).status, 204);
      assert.deepEqual((await api.get('/v1/nodes/t1/traits')).body.traits, ['CUSTOM_B', 'HW_CPU_X86_VMX']);
      assert.equal((await api.put('/v1/nodes/t1/traits/CUSTOM_C')).status, 204);
      assert.deepEqual((await api.get(`/v1/nodes/${n}?fields=traits`)).body.traits, ['CUSTOM_B', 'CUSTOM_C', 'HW_CPU_X86_VMX']);
      assert.equal((await api.delete('/v1/nodes/t1/traits/CUSTOM_C')).status, 204);
      const missing = await api.delete('/v1/nodes/t1/traits/CUSTOM_NONE');
      assert.equal(missing.status, 404);
      assert.equal(fault(missing).faultstring, `Node ${n} doesn't have a trait 'CUSTOM_NONE'`);
      for (const bad of [['lower'], ['NOT_STANDARD'], [7]]) {
        const res = await api.put('/v1/nodes/t1/traits', { traits: bad });
        assert.equal(res.status, 400, res.text);
        assert.match(fault(res).faultstring!, /^Schema error for body: /);
      }
      assert.equal((await api.put('/v1/nodes/t1/traits/lower')).status, 400);
      assert.equal((await api.put('/v1/nodes/t1/traits/CUSTOM_X', { x: 1 })).status, 400);
      const tooMany = await api.put('/v1/nodes/t1/traits', { traits: Array.from({ length: 51 }, (_, i) => `CUSTOM_${i}`) });
      assert.equal(tooMany.status, 400);
      assert.match(fault(tooMany).faultstring!, /exceed the maximum number of traits per node \(51 vs\. 50\)/);
      assert.equal((await api.delete('/v1/nodes/t1/traits')).status, 204);
      assert.deepEqual((await api.get('/v1/nodes/t1/traits')).body.traits, []);
      // before 1.37 a GET of the traits is Ironic's 406 (ironic-compat.test.ts has every method)
      assert.equal((await api.at('1.36').get('/v1/nodes/t1/traits')).status, 406);
    });

    test('a node is locked while it moves: transitional state, target, reservation, 409 for another action once the lock wait is over', async () => {
      // A server whose transitions take long enough that the node is surely caught moving, and
      // outlast the wait for the node's lock.
      const slow = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 60 * 1000, nodeLockWait: 300 });
      try {
        const sapi = new IronicClient(`${slow.url}/baremetal`);
        const n = (await sapi.post('/v1/nodes', { driver: 'fake-hardware', name: 'lk1', resource_class: 'rc' })).body.uuid;
        assert.equal((await sapi.put('/v1/nodes/lk1/states/provision', { target: 'manage' })).status, 202);
        const moving = (await sapi.get('/v1/nodes/lk1')).body;
        assert.equal(moving.provision_state, 'verifying');
        assert.equal(moving.target_provision_state, 'manageable');
        assert.equal(moving.reservation, slow.running.context.config.conductorId);
        const busy = await sapi.put('/v1/nodes/lk1/states/provision', { target: 'provide' });
        assert.equal(busy.status, 409);
        assert.match(fault(busy).faultstring!, /is locked by host .*please retry after the current operation is completed\./);
        assert.equal((await sapi.get(`/v1/nodes/${n}`)).body.provision_state, 'verifying');
      } finally {
        await slow.close();
      }
    });

    test("a change that meets a short transition's lock waits for it, as Ironic's conductor does, instead of a 409", async () => {
      // transitions of 300 ms, the default lock wait (2 s): each change comes while the previous
      // transition holds the node, and is done once it ends
      const paced = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 300 });
      try {
        const papi = new IronicClient(`${paced.url}/baremetal`);
        const n = (await papi.post('/v1/nodes', { driver: 'fake-hardware', name: 'lw1' })).body.uuid;
        const conn = await papi.post('/v1/volume/connectors', { node_uuid: n, type: 'ip', connector_id: '10.0.0.7' });
        assert.equal(conn.status, 201, conn.text);
        for (const target of ['power on', 'rebooting', 'power off']) {
          const res = await papi.put(`/v1/nodes/${n}/states/power`, { target });
          assert.equal(res.status, 202, `${target}: ${res.text}`);
        }
        // the connector waits for the last power change (power off) to finish, then goes
        assert.equal((await papi.delete(`/v1/volume/connectors/${conn.body.uuid}`)).status, 204);
        const settled = await nodeSettled(papi, n);
        assert.equal(settled.power_state, 'power off');
        assert.equal((await papi.put(`/v1/nodes/${n}/states/provision`, { target: 'manage' })).status, 202);
        const patched = await papi.patch(`/v1/nodes/${n}`, [{ op: 'add', path: '/extra/k', value: 'v' }]);
        assert.equal(patched.status, 200, patched.text);
        assert.equal((await nodeSettled(papi, n)).provision_state, 'manageable');
      } finally {
        await paced.close();
      }
    });

    test('provision state machine: manage → provide → deploy → undeploy, asynchronous', async () => {
      const n = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'sm1', resource_class: 'rc' })).body.uuid;
      const manage = await api.put('/v1/nodes/sm1/states/provision', { target: 'manage' });
      assert.equal(manage.status, 202);
      assert.equal(manage.headers.get('location'), `${server.url}/baremetal/v1/nodes/sm1/states`);
      assert.equal((await nodeSettled(api, n)).provision_state, 'manageable');
      const wrong = await api.put('/v1/nodes/sm1/states/provision', { target: 'active' });
      assert.equal(wrong.status, 400);
      assert.equal(fault(wrong).faultstring, `The requested action "active" can not be performed on node "${n}" while it is in state "manageable".`);
      await api.put('/v1/nodes/sm1/states/provision', { target: 'inspect' });
      const inspected = await nodeSettled(api, n);
      assert.equal(inspected.provision_state, 'manageable');
      assert.notEqual(inspected.inspection_finished_at, null);
      assert.equal((await api.put('/v1/nodes/sm1/states/provision', { target: 'clean' })).status, 400);
      assert.equal(
        (await api.put('/v1/nodes/sm1/states/provision', { target: 'clean', clean_steps: [{ interface: 'deploy', step: 'erase_devices' }] })).status,
        202,
      );
      await nodeSettled(api, n);
      await api.put('/v1/nodes/sm1/states/provision', { target: 'provide' });
      assert.equal((await nodeSettled(api, n)).provision_state, 'available');
      // available → manage is immediate; and back
      await api.put('/v1/nodes/sm1/states/provision', { target: 'manage' });
      assert.equal((await api.get('/v1/nodes/sm1')).body.provision_state, 'manageable');
      await api.put('/v1/nodes/sm1/states/provision', { target: 'provide' });
      await nodeSettled(api, n);
      assert.equal((await api.put('/v1/nodes/sm1/states/provision', { target: 'deploy' })).status, 202);
      assert.equal((await nodeSettled(api, n)).provision_state, 'active');
      await api.put('/v1/nodes/sm1/states/provision', { target: 'rebuild' });
      assert.equal((await nodeSettled(api, n)).provision_state, 'active');
      await api.patch('/v1/nodes/sm1', [{ op: 'add', path: '/instance_info/image_source', value: 'http://image' }]);
      await api.put('/v1/nodes/sm1/states/provision', { target: 'undeploy' });
      const torn = await nodeSettled(api, n);
      assert.equal(torn.provision_state, 'available');
      assert.deepEqual(torn.instance_info, {});
      // verbs newer than the request version are 406; unknown ones 400; arguments are checked
      assert.equal((await api.at('1.72').put('/v1/nodes/sm1/states/provision', { target: 'deploy' })).status, 406);
      assert.equal((await api.put('/v1/nodes/sm1/states/provision', { target: 'bogus' })).status, 400);
      assert.equal(fault(await api.put('/v1/nodes/sm1/states/provision', {})).faultstring, 'Missing mandatory parameter: target');
      assert.equal(fault(await api.put('/v1/nodes/sm1/states/provision', { target: 'manage', bogus: 1 })).faultstring, 'Unexpected arguments: bogus');
      assert.equal((await api.put('/v1/nodes/sm1/states/provision', { target: 'manage', clean_steps: [] })).status, 400);
      // deploying in maintenance is refused
      await api.put('/v1/nodes/sm1/maintenance', { reason: 'x' });
      const maint = await api.put('/v1/nodes/sm1/states/provision', { target: 'active' });
      assert.equal(maint.status, 400);
      assert.match(fault(maint).faultstring!, /can't be performed on node .* because it's in maintenance mode/);
      await api.delete('/v1/nodes/sm1/maintenance');
    });

    test('power: asynchronous with a target, soft targets from 1.27, timeout checked', async () => {
      const n = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'pw1' })).body.uuid;
      assert.equal((await api.put('/v1/nodes/pw1/states/power', { target: 'power on' })).status, 202);
      assert.equal((await nodeSettled(api, n)).power_state, 'power on');
      await api.put('/v1/nodes/pw1/states/power', { target: 'rebooting' });
      assert.equal((await nodeSettled(api, n)).power_state, 'power on');
      await api.put('/v1/nodes/pw1/states/power', { target: 'soft power off', timeout: 10 });
      assert.equal((await nodeSettled(api, n)).power_state, 'power off');
      assert.equal((await api.at('1.26').put('/v1/nodes/pw1/states/power', { target: 'soft power off' })).status, 406);
      const bad = await api.put('/v1/nodes/pw1/states/power', { target: 'bogus' });
      assert.equal(bad.status, 400);
      assert.equal(fault(bad).faultstring, 'The requested action "bogus" can not be performed on node "pw1" while it is in state "power off".');
      assert.equal(fault(await api.put('/v1/nodes/pw1/states/power', { target: 'power on', timeout: 0 })).faultstring, 'timeout has to be positive integer');
      const states = (await api.get('/v1/nodes/pw1/states')).body;
      assert.deepEqual(Object.keys(states).sort(), [
        'boot_mode',
        'console_enabled',
        'last_error',
        'power_state',
        'provision_state',
        'provision_updated_at',
        'raid_config',
        'secure_boot',
        'target_power_state',
        'target_provision_state',
        'target_raid_config',
      ]);
    });

    test('maintenance: set with a reason, cleared; unknown arguments refused', async () => {
      await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'm1' });
      assert.equal((await api.put('/v1/nodes/m1/maintenance', { reason: 'broken fan' })).status, 202);
      let n = (await api.get('/v1/nodes/m1')).body;
      assert.equal(n.maintenance, true);
      assert.equal(n.maintenance_reason, 'broken fan');
      assert.equal((await api.put('/v1/nodes/m1/maintenance', { reason: 'x', other: 1 })).status, 400);
      assert.equal((await api.delete('/v1/nodes/m1/maintenance')).status, 202);
      n = (await api.get('/v1/nodes/m1')).body;
      assert.equal(n.maintenance, false);
      assert.equal(n.maintenance_reason, null);
    });

    test('delete: allowed when manageable, enroll or available; refused when active unless in maintenance', async () => {
      const node = await availableNode(api, { name: 'd1', resource_class: 'rc-d' });
      await api.put('/v1/nodes/d1/states/provision', { target: 'active' });
      await nodeSettled(api, node.uuid);
      const refused = await api.delete('/v1/nodes/d1');
      assert.equal(refused.status, 409);
      assert.match(fault(refused).faultstring!, /Can not delete node ".*" while it is in provision state "active"/);
      await api.put('/v1/nodes/d1/maintenance', {});
      assert.equal((await api.delete('/v1/nodes/d1')).status, 204);
      assert.equal((await api.get('/v1/nodes/d1')).status, 404);
      assert.equal((await api.delete('/v1/nodes/d1')).status, 404);
    });

    test('list: default fields, detail, filters, sorting, and pages that follow next links', async () => {
      const created: string[] = [];
      for (let i = 0; i < 7; i++) {
        const res = await api.post('/v1/nodes', { driver: 'fake-hardware', name: `l${i}`, resource_class: i % 2 ? 'odd' : 'even', owner: `o${i % 3}` });
        created.push(res.body.uuid);
      }
      const plain = await api.get('/v1/nodes?resource_class=odd');
      assert.deepEqual(Object.keys(plain.body.nodes[0]).sort(), ['instance_uuid', 'links', 'maintenance', 'name', 'power_state', 'provision_state', 'uuid']);
      assert.equal(plain.body.nodes.length, 3);
      const detail = await api.get('/v1/nodes/detail?resource_class=odd');
      assert.equal(detail.body.nodes[0].driver, 'fake-hardware');
      assert.equal((await api.get('/v1/nodes?detail=True&resource_class=odd')).body.nodes[0].driver, 'fake-hardware');
      assert.equal((await api.get('/v1/nodes?owner=o1&resource_class=even')).body.nodes.length, 1);
      assert.equal((await api.get('/v1/nodes?provision_state=enroll&associated=false&maintenance=false&resource_class=odd')).body.nodes.length, 3);
      // pages of 2 sorted by name descending, following next links to the end
      const names: string[] = [];
      let url: string | undefined = `/v1/nodes?resource_class=even&sort_key=name&sort_dir=desc&limit=2&fields=name`;
      let pages = 0;
      while (url) {
        const page: HttpResponse = await api.get(url);
        assert.equal(page.status, 200, page.text);
        names.push(...page.body.nodes.map((n: { name: string }) => n.name));
        url = page.body.next?.slice(`${server.url}/baremetal`.length);
        if (url) {
          assert.match(url, /sort_key=name&sort_dir=desc/);
          assert.match(url, /resource_class=even/);
          assert.match(url, /limit=2&marker=/);
        }
        pages++;
      }
      assert.deepEqual(names, ['l6', 'l4', 'l2', 'l0']);
      assert.equal(pages, 3);
      // sorting by a column with NULLs pages through every node exactly once
      const seen = new Set<string>();
      url = '/v1/nodes?sort_key=description&limit=3';
      while (url) {
        const page: HttpResponse = await api.get(url);
        for (const n of page.body.nodes) {
          assert.ok(!seen.has(n.uuid), 'no node twice');
          seen.add(n.uuid);
        }
        url = page.body.next?.slice(`${server.url}/baremetal`.length);
      }
      const all = (await api.get('/v1/nodes')).body.nodes;
      assert.equal(seen.size, all.length);
    });
  });
}
