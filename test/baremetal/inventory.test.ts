// The inventory around nodes, on both databases: chassis (and a node's chassis_uuid), port groups
// and ports — create, show, list (fields, detail, filters, paging), JSON patch, delete — with
// Ironic's wording for bad input and conflicts, and the microversion gates.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, eventually, fault } from './helpers.js';

/** An Ironic fault with this status and faultstring. */
function refused(res: HttpResponse, status: number, faultstring: string | RegExp): void {
  assert.equal(res.status, status, res.text);
  const inner = fault(res);
  if (typeof faultstring === 'string') assert.equal(inner.faultstring, faultstring);
  else assert.match(inner.faultstring ?? '', faultstring);
}

for (const dialect of DIALECTS) {
  describe(`bare-metal inventory (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20 });
      api = new IronicClient(`${server.url}/baremetal`);
    });
    after(() => server.close());

    const node = async (fields: Record<string, unknown> = {}) => {
      const res = await api.post('/v1/nodes', { driver: 'fake-hardware', ...fields });
      assert.equal(res.status, 201, res.text);
      return res.body;
    };

    test('chassis: create, show, list, patch; nodes in a chassis; a chassis with nodes is not deleted', async () => {
      const created = await api.post('/v1/chassis', { description: 'rack 1', extra: { row: 'a' } });
      assert.equal(created.status, 201, created.text);
      const c = created.body;
      assert.equal(created.headers.get('location'), `${server.url}/baremetal/v1/chassis/${c.uuid}`);
      assert.deepEqual(Object.keys(c), ['uuid', 'created_at', 'updated_at', 'description', 'extra', 'links', 'nodes']);
      assert.equal(c.updated_at, null);
      assert.deepEqual(c.extra, { row: 'a' });
      // Ironic's own shape: a list holding the list of links
      assert.equal(c.nodes[0][0].href, `${server.url}/baremetal/v1/chassis/${c.uuid}/nodes`);

      const list = await api.get('/v1/chassis');
      assert.deepEqual(Object.keys(list.body.chassis[0]), ['uuid', 'description', 'links']);
      assert.deepEqual(Object.keys((await api.get('/v1/chassis/detail')).body.chassis[0]), Object.keys(c));
      assert.deepEqual((await api.get(`/v1/chassis/${c.uuid}?fields=extra`)).body, { extra: { row: 'a' }, links: c.links });

      const patched = await api.patch(`/v1/chassis/${c.uuid}`, [
        { op: 'replace', path: '/description', value: 'rack 2' },
        { op: 'add', path: '/extra/slot', value: 3 },
      ]);
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.description, 'rack 2');
      assert.deepEqual(patched.body.extra, { row: 'a', slot: 3 });
      assert.notEqual(patched.body.updated_at, null);

      const n = await node({ chassis_uuid: c.uuid, name: 'in-rack' });
      assert.equal(n.chassis_uuid, c.uuid);
      const other = await node();
      assert.equal(other.chassis_uuid, null);
      const filtered = await api.get(`/v1/nodes?chassis_uuid=${c.uuid}`);
      assert.deepEqual(
        filtered.body.nodes.map((x: any) => x.uuid),
        [n.uuid],
      );
      const inChassis = await api.get(`/v1/chassis/${c.uuid}/nodes`);
      assert.equal(inChassis.status, 200, inChassis.text);
      assert.deepEqual(
        inChassis.body.nodes.map((x: any) => x.uuid),
        [n.uuid],
      );
      assert.equal((await api.get(`/v1/chassis/${c.uuid}/nodes/detail`)).body.nodes[0].chassis_uuid, c.uuid);

      refused(await api.delete(`/v1/chassis/${c.uuid}`), 400, `Cannot complete the requested action because chassis ${c.uuid} contains nodes.`);
      // putting a node into a chassis by PATCH; leaving it needs 1.25
      const moved = await api.patch(`/v1/nodes/${other.uuid}`, [{ op: 'add', path: '/chassis_uuid', value: c.uuid }]);
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.body.chassis_uuid, c.uuid);
      assert.equal((await api.at('1.24').patch(`/v1/nodes/${other.uuid}`, [{ op: 'remove', path: '/chassis_uuid' }])).status, 406);
      for (const uuid of [n.uuid, other.uuid]) {
        const left = await api.at('1.25').patch(`/v1/nodes/${uuid}`, [{ op: 'remove', path: '/chassis_uuid' }]);
        assert.equal(left.status, 200, left.text);
        assert.equal(left.body.chassis_uuid, null);
      }
      assert.equal((await api.delete(`/v1/chassis/${c.uuid}`)).status, 204);
      refused(await api.get(`/v1/chassis/${c.uuid}`), 404, `Chassis ${c.uuid} could not be found.`);
    });

    test("chassis: bad input is a 400 in Ironic's envelope, unknown chassis 404 (400 where a node names it)", async () => {
      const missing = '11111111-2222-3333-4444-555555555555';
      refused(await api.post('/v1/nodes', { driver: 'fake-hardware', chassis_uuid: missing }), 400, `Chassis ${missing} could not be found.`);
      refused(await api.post('/v1/nodes', { driver: 'fake-hardware', chassis_uuid: 'nope' }), 400, 'Expected UUID for chassis_uuid: nope');
      refused(await api.get(`/v1/nodes?chassis_uuid=${missing}`), 404, `Chassis ${missing} could not be found.`);
      refused(await api.get(`/v1/chassis/${missing}/nodes`), 404, `Chassis ${missing} could not be found.`);
      refused(await api.get('/v1/chassis/not-a-uuid'), 400, 'Expected UUID for chassis_uuid: not-a-uuid');
      refused(await api.post('/v1/chassis', { colour: 'red' }), 400, /^Schema error for chassis: Additional properties are not allowed/);
      refused(await api.post('/v1/chassis', { description: 'x'.repeat(256) }), 400, /^Schema error for chassis: /);
      refused(await api.patch(`/v1/chassis/${missing}`, [{ op: 'replace', path: '/uuid', value: missing }]), 400, /^Cannot patch \/uuid/);
      refused(await api.delete(`/v1/chassis/${missing}`), 404, `Chassis ${missing} could not be found.`);
      refused(await api.get('/v1/chassis?sort_key=extra'), 400, 'The sort_key value extra is an invalid field for sorting');
      const uuid = '22222222-2222-3333-4444-555555555555';
      assert.equal((await api.post('/v1/chassis', { uuid })).status, 201);
      refused(await api.post('/v1/chassis', { uuid }), 409, `A chassis with UUID ${uuid} already exists.`);
    });

    test("ports and port groups: create, show, the node's and the group's lists, filters", async () => {
      const n = await node({ name: 'ports-1' });
      const pgRes = await api.post('/v1/portgroups', { node_uuid: n.uuid, address: '52:54:00:AA:BB:CC', name: 'bond0' });
      assert.equal(pgRes.status, 201, pgRes.text);
      const pg = pgRes.body;
      assert.deepEqual(Object.keys(pg), [
        'uuid',
        'created_at',
        'updated_at',
        'address',
        'extra',
        'internal_info',
        'mode',
        'name',
        'properties',
        'standalone_ports_supported',
        'node_uuid',
        'links',
        'ports',
      ]);
      assert.equal(pg.address, '52:54:00:aa:bb:cc');
      assert.equal(pg.mode, 'active-backup');
      assert.equal(pg.standalone_ports_supported, true);

      const portRes = await api.post('/v1/ports', {
        node_uuid: n.uuid,
        address: '52:54:00:11:22:33',
        portgroup_uuid: pg.uuid,
        local_link_connection: { switch_id: '0a:1b:2c:3d:4e:5f', port_id: 'Eth1' },
        physical_network: 'physnet1',
        extra: { k: 'v' },
      });
      assert.equal(portRes.status, 201, portRes.text);
      const port = portRes.body;
      assert.deepEqual(Object.keys(port), [
        'uuid',
        'created_at',
        'updated_at',
        'address',
        'extra',
        'internal_info',
        'is_smartnic',
        'local_link_connection',
        'physical_network',
        'pxe_enabled',
        'node_uuid',
        'links',
        'portgroup_uuid',
      ]);
      assert.equal(port.portgroup_uuid, pg.uuid);
      assert.equal(port.pxe_enabled, true);
      assert.equal(port.is_smartnic, false);
      assert.equal(portRes.headers.get('location'), `${server.url}/baremetal/v1/ports/${port.uuid}`);
      const second = await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:11:22:34' });
      assert.equal(second.status, 201, second.text);

      const uuids = (res: HttpResponse, key: string) => res.body[key].map((x: any) => x.uuid);
      const list = await api.get('/v1/ports');
      assert.deepEqual(Object.keys(list.body.ports[0]), ['uuid', 'address', 'links']);
      assert.deepEqual(uuids(await api.get(`/v1/nodes/${n.uuid}/ports`), 'ports'), [port.uuid, second.body.uuid]);
      assert.deepEqual(uuids(await api.get('/v1/nodes/ports-1/ports'), 'ports'), [port.uuid, second.body.uuid]);
      assert.deepEqual(uuids(await api.get(`/v1/portgroups/${pg.uuid}/ports`), 'ports'), [port.uuid]);
      assert.deepEqual(uuids(await api.get('/v1/portgroups/bond0/ports'), 'ports'), [port.uuid]);
      assert.deepEqual(uuids(await api.get('/v1/ports?address=52:54:00:11:22:34'), 'ports'), [second.body.uuid]);
      assert.deepEqual(uuids(await api.get('/v1/ports?portgroup=bond0'), 'ports'), [port.uuid]);
      assert.deepEqual(uuids(await api.get('/v1/ports?node=ports-1'), 'ports'), [port.uuid, second.body.uuid]);
      assert.deepEqual(uuids(await api.get(`/v1/nodes/${n.uuid}/portgroups`), 'portgroups'), [pg.uuid]);
      assert.deepEqual(Object.keys((await api.get('/v1/portgroups')).body.portgroups[0]), ['uuid', 'address', 'name', 'links']);
      const detail = await api.get(`/v1/ports/detail?node=${n.uuid}`);
      assert.equal(detail.body.ports[0].physical_network, 'physnet1');
      const fields = await api.get(`/v1/ports/${port.uuid}?fields=address,node_uuid`);
      assert.deepEqual(fields.body, { address: port.address, node_uuid: n.uuid, links: port.links });
      assert.equal((await api.get(`/v1/portgroups/bond0`)).body.uuid, pg.uuid);

      // paging: one per page, the next link carries the marker
      const page = await api.get(`/v1/ports?limit=1&node=${n.uuid}`);
      assert.deepEqual(uuids(page, 'ports'), [port.uuid]);
      assert.match(page.body.next, new RegExp(`marker=${port.uuid}`));
      const nextPath = page.body.next.slice(`${server.url}/baremetal`.length);
      assert.deepEqual(uuids(await api.get(nextPath), 'ports'), [second.body.uuid]);
    });

    test('ports: bad input and conflicts as Ironic words them', async () => {
      const n = await node();
      const n2 = await node();
      const missing = '33333333-2222-3333-4444-555555555555';
      const pg = (await api.post('/v1/portgroups', { node_uuid: n2.uuid, standalone_ports_supported: false })).body;
      assert.equal((await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:00:01' })).status, 201);
      refused(
        await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:00:01' }),
        409,
        'A port with MAC address 52:54:00:00:00:01 already exists.',
      );
      refused(await api.post('/v1/ports', { node_uuid: n.uuid, address: 'zz' }), 400, 'Expected valid MAC address for address: zz');
      refused(await api.post('/v1/ports', { node_uuid: missing, address: '52:54:00:00:00:02' }), 400, `Node ${missing} could not be found.`);
      refused(await api.post('/v1/ports', { node_uuid: 'x', address: '52:54:00:00:00:02' }), 400, 'Expected UUID for node_uuid: x');
      refused(await api.post('/v1/ports', { address: '52:54:00:00:00:02' }), 400, /^Schema error for port: 'node_uuid' is a required property/);
      refused(
        await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:00:02', portgroup_uuid: pg.uuid }),
        400,
        'Port can not be added to a portgroup belonging to a different node.',
      );
      refused(
        await api.post('/v1/ports', { node_uuid: n2.uuid, address: '52:54:00:00:00:02', portgroup_uuid: pg.uuid }),
        409,
        new RegExp(`^Port group ${pg.uuid} doesn't support standalone ports`),
      );
      refused(
        await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:00:02', portgroup_uuid: missing }),
        400,
        `Portgroup ${missing} could not be found.`,
      );
      refused(
        await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:00:02', is_smartnic: true }),
        400,
        'Smart NIC port must have port_id and hostname in local_link_connection',
      );
      refused(
        await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:00:02', local_link_connection: { port_id: 'x' } }),
        400,
        /^Schema error for local_link_connection: /,
      );
      refused(await api.get('/v1/ports/not-a-uuid'), 400, 'Expected UUID for port_uuid: not-a-uuid');
      refused(await api.get(`/v1/ports/${missing}`), 404, `Port ${missing} could not be found.`);
      refused(await api.get('/v1/ports?sort_key=extra'), 400, 'The sort_key value extra is an invalid field for sorting');
      refused(await api.get('/v1/ports?address=nope'), 400, 'Expected valid MAC address for address: nope');
      refused(await api.get(`/v1/ports?node=${missing}`), 404, `Node ${missing} could not be found.`);
      // a port group's name and address are unique
      assert.equal((await api.post('/v1/portgroups', { node_uuid: n.uuid, name: 'pg-a', address: '52:54:00:00:01:01' })).status, 201);
      refused(await api.post('/v1/portgroups', { node_uuid: n.uuid, name: 'pg-a' }), 409, 'A portgroup with name pg-a already exists.');
      refused(
        await api.post('/v1/portgroups', { node_uuid: n.uuid, address: '52:54:00:00:01:01' }),
        409,
        'A portgroup with MAC address 52:54:00:00:01:01 already exists.',
      );
      refused(await api.post('/v1/portgroups', { node_uuid: n.uuid, name: 'bad name' }), 400, "Cannot create portgroup with invalid name 'bad name'");
    });

    test('ports and port groups: patch, delete; a port group with ports is not deleted; a node takes its ports with it', async () => {
      const n = await node();
      const pg = (await api.post('/v1/portgroups', { node_uuid: n.uuid, name: 'pg-del' })).body;
      const port = (await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:02:01', portgroup_uuid: pg.uuid })).body;
      const patched = await api.patch(`/v1/ports/${port.uuid}`, [
        { op: 'replace', path: '/address', value: '52:54:00:00:02:99' },
        { op: 'add', path: '/extra/x', value: 1 },
        { op: 'replace', path: '/pxe_enabled', value: false },
      ]);
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.address, '52:54:00:00:02:99');
      assert.deepEqual(patched.body.extra, { x: 1 });
      assert.equal(patched.body.pxe_enabled, false);
      refused(await api.patch(`/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/internal_info', value: {} }]), 400, /^Cannot patch \/internal_info/);
      refused(
        await api.patch(`/v1/ports/${port.uuid}`, [{ op: 'replace', path: '/address', value: 'bad' }]),
        400,
        'Expected valid MAC address for address: bad',
      );
      const renamed = await api.patch(`/v1/portgroups/pg-del`, [{ op: 'replace', path: '/name', value: 'pg-renamed' }]);
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.body.name, 'pg-renamed');
      refused(await api.patch(`/v1/portgroups/${pg.uuid}`, [{ op: 'remove', path: '/mode' }]), 400, "'mode' is a mandatory attribute and can not be removed");
      refused(await api.delete(`/v1/portgroups/${pg.uuid}`), 400, `Cannot complete the requested action because portgroup ${pg.uuid} contains ports.`);
      // leaving the group, then the group can go
      assert.equal((await api.patch(`/v1/ports/${port.uuid}`, [{ op: 'remove', path: '/portgroup_uuid' }])).body.portgroup_uuid, null);
      assert.equal((await api.delete(`/v1/portgroups/${pg.uuid}`)).status, 204);
      assert.equal((await api.get(`/v1/portgroups/${pg.uuid}`)).status, 404);
      assert.equal((await api.delete(`/v1/ports/${port.uuid}`)).status, 204);
      refused(await api.delete(`/v1/ports/${port.uuid}`), 404, `Port ${port.uuid} could not be found.`);

      // deleting a node deletes its ports and port groups
      const doomed = await node();
      const dpg = (await api.post('/v1/portgroups', { node_uuid: doomed.uuid })).body;
      const dport = (await api.post('/v1/ports', { node_uuid: doomed.uuid, address: '52:54:00:00:03:01', portgroup_uuid: dpg.uuid })).body;
      assert.equal((await api.delete(`/v1/nodes/${doomed.uuid}`)).status, 204);
      assert.equal((await api.get(`/v1/ports/${dport.uuid}`)).status, 404);
      assert.equal((await api.get(`/v1/portgroups/${dpg.uuid}`)).status, 404);
      // the address is free again
      assert.equal((await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:03:01' })).status, 201);
    });

    test('microversion gates: port groups from 1.23, their sub-resources from 1.24, newer port fields 406', async () => {
      const n = await node();
      assert.equal((await api.at('1.22').get('/v1/portgroups')).status, 404);
      assert.equal((await api.at('1.22').post('/v1/portgroups', { node_uuid: n.uuid })).status, 404);
      assert.equal((await api.at('1.23').get('/v1/portgroups')).status, 200);
      assert.equal((await api.at('1.23').get(`/v1/nodes/${n.uuid}/portgroups`)).status, 404);
      assert.equal((await api.at('1.33').post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:04:01', physical_network: 'p' })).status, 406);
      assert.equal((await api.at('1.52').get('/v1/ports?fields=is_smartnic')).status, 406);
      const old = await api.at('1.18').post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:04:02' });
      assert.equal(old.status, 201, old.text);
      assert.deepEqual(Object.keys(old.body), ['uuid', 'created_at', 'updated_at', 'address', 'extra', 'internal_info', 'node_uuid', 'links']);
      const root = (await api.get('/v1')).body;
      for (const key of ['chassis', 'nodes', 'ports', 'portgroups']) assert.ok(root[key], `/v1 lists ${key}`);
      assert.equal((await api.at('1.22').get('/v1')).body.portgroups, undefined);
    });

    test('/v1 lists every served resource at its version; /v1/drivers describes fake-hardware', async () => {
      const v1 = await api.get('/v1');
      assert.deepEqual(Object.keys(v1.body), [
        'id',
        'links',
        'media_types',
        'chassis',
        'nodes',
        'ports',
        'drivers',
        'version',
        'portgroups',
        'volume',
        'conductors',
        'allocations',
        'deploy_templates',
      ]);
      assert.deepEqual(Object.keys((await api.at('1.1').get('/v1')).body), ['id', 'links', 'media_types', 'chassis', 'nodes', 'ports', 'drivers', 'version']);
      // every link the root gives is a list that answers
      for (const key of ['chassis', 'nodes', 'ports', 'drivers', 'portgroups', 'volume', 'conductors', 'allocations', 'deploy_templates']) {
        const href: string = v1.body[key][0].href;
        assert.equal((await api.get(href.slice(`${server.url}/baremetal`.length))).status, 200, key);
      }

      const list = await api.get('/v1/drivers');
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.drivers.length, 1);
      const d = list.body.drivers[0];
      assert.deepEqual(Object.keys(d), ['name', 'hosts', 'links', 'properties', 'type']);
      assert.equal(d.name, 'fake-hardware');
      assert.equal(d.type, 'dynamic');
      assert.ok(d.hosts.length >= 1);
      const one = (await api.get('/v1/drivers/fake-hardware')).body;
      assert.equal(one.default_deploy_interface, 'fake');
      assert.deepEqual(one.enabled_raid_interfaces, ['fake', 'no-raid']);
      assert.equal(one.default_network_interface, 'noop');
      assert.deepEqual((await api.get('/v1/drivers?detail=true')).body.drivers[0], one);
      assert.deepEqual((await api.get('/v1/drivers?type=classic')).body, { drivers: [] });
      // links always, where they stand (Ironic 21.4: name, links, type)
      const selected = (await api.get('/v1/drivers/fake-hardware?fields=name,type')).body;
      assert.deepEqual(Object.keys(selected), ['name', 'links', 'type']);
      assert.deepEqual([selected.name, selected.type], ['fake-hardware', 'dynamic']);
      assert.deepEqual(selected.links, one.links);
      assert.deepEqual((await api.get('/v1/drivers?fields=name')).body, { drivers: [{ name: 'fake-hardware', links: one.links }] });
      assert.deepEqual(Object.keys((await api.get('/v1/drivers/fake-hardware/properties')).body), ['B1', 'B2']);
      const raid = await api.get('/v1/drivers/fake-hardware/raid/logical_disk_properties');
      assert.equal(raid.status, 200);
      assert.ok(raid.body.raid_level && raid.body.size_gb);
      // an older version: no interfaces (1.30), no bios (1.40), no raid properties (1.12)
      assert.equal((await api.at('1.39').get('/v1/drivers/fake-hardware')).body.default_bios_interface, undefined);
      assert.deepEqual(Object.keys((await api.at('1.29').get('/v1/drivers/fake-hardware')).body), ['name', 'hosts', 'links', 'properties']);
      assert.equal((await api.at('1.11').get('/v1/drivers/fake-hardware/raid/logical_disk_properties')).status, 406);
      refused(await api.at('1.29').get('/v1/drivers?detail=true'), 406, 'Request not acceptable. The minimal required API version should be 1.30');
      refused(await api.at('1.76').get('/v1/drivers?fields=name'), 406, 'Request not acceptable.');
      refused(await api.get('/v1/drivers/ipmi'), 404, 'Could not find the following driver(s) or hardware type(s): ipmi.');
      refused(await api.get('/v1/drivers/ipmi/properties'), 404, 'Could not find the following driver(s) or hardware type(s): ipmi.');
      refused(await api.get('/v1/drivers?type=other'), 400, '"type" filter must be one of "classic" or "dynamic", if specified.');
      refused(await api.get('/v1/drivers?fields=name&detail=true'), 400, 'Can not specify ?detail=True and fields in the same request.');
      refused(await api.get('/v1/drivers/fake-hardware?fields=nope'), 400, 'Field(s) "nope" are not valid');
    });

    test('validate: fake hardware passes; an interface set to no-<kind> is not supported', async () => {
      const n = await node({ raid_interface: 'no-raid' });
      const res = await api.get(`/v1/nodes/${n.uuid}/validate`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body), ['boot', 'deploy', 'management', 'network', 'power', 'bios', 'console', 'inspect', 'raid', 'rescue', 'storage']);
      assert.deepEqual(res.body.deploy, { result: true });
      assert.deepEqual(res.body.raid, { result: false, reason: 'Driver fake-hardware does not support raid (disabled or not implemented).' });
      refused(await api.get('/v1/nodes/44444444-2222-3333-4444-555555555555/validate'), 404, 'Node 44444444-2222-3333-4444-555555555555 could not be found.');
    });

    test('VIFs (1.28): recorded on a free port group, then PXE ports; listed, detached; noop takes one without a port', async () => {
      const n = await node();
      const vif = (i: number) => `aaaaaaaa-0000-4000-8000-00000000000${i}`;
      // no port at all: the noop network interface accepts it, and nothing is recorded
      assert.equal((await api.post(`/v1/nodes/${n.uuid}/vifs`, { id: vif(1) })).status, 204);
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/vifs`)).body, { vifs: [] });
      assert.equal((await api.delete(`/v1/nodes/${n.uuid}/vifs/${vif(1)}`)).status, 204);

      const pg = (await api.post('/v1/portgroups', { node_uuid: n.uuid })).body;
      const inGroup = (await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:05:01', portgroup_uuid: pg.uuid })).body;
      const plain = (await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:05:02', pxe_enabled: false })).body;
      const pxe = (await api.post('/v1/ports', { node_uuid: n.uuid, address: '52:54:00:00:05:03' })).body;
      for (const i of [2, 3, 4]) assert.equal((await api.post(`/v1/nodes/${n.uuid}/vifs`, { id: vif(i), extra: 'ignored' })).status, 204);
      // port groups first, then ports in the order they were created
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/vifs`)).body, { vifs: [{ id: vif(2) }, { id: vif(4) }, { id: vif(3) }] });
      assert.deepEqual((await api.get(`/v1/portgroups/${pg.uuid}`)).body.internal_info, { tenant_vif_port_id: vif(2) });
      assert.deepEqual((await api.get(`/v1/ports/${pxe.uuid}`)).body.internal_info, { tenant_vif_port_id: vif(3) });
      assert.deepEqual((await api.get(`/v1/ports/${plain.uuid}`)).body.internal_info, { tenant_vif_port_id: vif(4) });
      assert.deepEqual((await api.get(`/v1/ports/${inGroup.uuid}`)).body.internal_info, {});
      refused(
        await api.post(`/v1/nodes/${n.uuid}/vifs`, { id: vif(3) }),
        409,
        `Unable to attach VIF because VIF ${vif(3)} is already attached to Ironic Port ${pxe.uuid}`,
      );
      assert.equal((await api.delete(`/v1/nodes/${n.uuid}/vifs/${vif(3)}`)).status, 204);
      assert.deepEqual((await api.get(`/v1/ports/${pxe.uuid}`)).body.internal_info, {});
      // 1.67: on the port asked for
      assert.equal((await api.post(`/v1/nodes/${n.uuid}/vifs`, { id: vif(5), port_uuid: pxe.uuid })).status, 204);
      assert.deepEqual((await api.get(`/v1/ports/${pxe.uuid}`)).body.internal_info, { tenant_vif_port_id: vif(5) });
      refused(
        await api.post(`/v1/nodes/${n.uuid}/vifs`, { id: vif(6), port_uuid: pxe.uuid }),
        400,
        `Unable to attach VIF ${vif(6)}, not enough free physical ports.`,
      );
      refused(
        await api.post(`/v1/nodes/${n.uuid}/vifs`, { id: vif(6), port_uuid: pxe.uuid, portgroup_uuid: pg.uuid }),
        400,
        'Cannot specify both port_uuid and portgroup_uuid',
      );
      refused(await api.post(`/v1/nodes/${n.uuid}/vifs`, {}), 400, "Schema error for vif: 'id' is a required property");
      assert.equal((await api.at('1.27').get(`/v1/nodes/${n.uuid}/vifs`)).status, 404);
      refused(await api.get('/v1/nodes/44444444-2222-3333-4444-555555555555/vifs'), 404, 'Node 44444444-2222-3333-4444-555555555555 could not be found.');
    });

    test('boot device, console and RAID configuration as fake hardware records them', async () => {
      const n = await node();
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/management/boot_device`)).body, { boot_device: 'pxe', persistent: false });
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/management/boot_device/supported`)).body, { supported_boot_devices: ['pxe'] });
      assert.equal((await api.put(`/v1/nodes/${n.uuid}/management/boot_device`, { boot_device: 'pxe', persistent: true })).status, 204);
      refused(await api.put(`/v1/nodes/${n.uuid}/management/boot_device`, { boot_device: 'floppy' }), 400, 'Invalid boot device floppy specified.');
      refused(await api.put(`/v1/nodes/${n.uuid}/management/boot_device`, {}), 400, 'Missing mandatory parameter: boot_device');

      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/states/console`)).body, { console_enabled: false, console_info: null });
      assert.equal((await api.put(`/v1/nodes/${n.uuid}/states/console`, { enabled: true })).status, 202);
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/states/console`)).body, { console_enabled: true, console_info: {} });
      assert.equal((await api.get(`/v1/nodes/${n.uuid}`)).body.console_enabled, true);
      assert.equal((await api.get(`/v1/nodes/${n.uuid}/states`)).body.console_enabled, true);
      refused(await api.put(`/v1/nodes/${n.uuid}/states/console`, {}), 400, 'Missing mandatory parameter: enabled');
      refused(await api.put(`/v1/nodes/${n.uuid}/states/console`, { enabled: 'maybe' }), 400, /^Invalid enabled: Unrecognized value 'maybe'/);

      const raid = { logical_disks: [{ size_gb: 100, raid_level: '1', is_root_volume: true }] };
      assert.equal((await api.put(`/v1/nodes/${n.uuid}/states/raid`, raid)).status, 204);
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}`)).body.target_raid_config, raid);
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}/states`)).body.target_raid_config, raid);
      refused(
        await api.put(`/v1/nodes/${n.uuid}/states/raid`, { logical_disks: [{ size_gb: 100 }] }),
        400,
        "RAID config validation error: 'raid_level' is a required property",
      );
      assert.equal((await api.put(`/v1/nodes/${n.uuid}/states/raid`, {})).status, 204);
      assert.deepEqual((await api.get(`/v1/nodes/${n.uuid}`)).body.target_raid_config, {});
      assert.equal((await api.at('1.11').put(`/v1/nodes/${n.uuid}/states/raid`, raid)).status, 404);
      const noRaid = await node({ raid_interface: 'no-raid' });
      refused(await api.put(`/v1/nodes/${noRaid.uuid}/states/raid`, raid), 404, 'Driver fake-hardware does not support raid (disabled or not implemented).');
    });

    test("a node's states, console, power, provision, RAID, boot device and maintenance with the node last, as Ironic's router serves them", async () => {
      const n = await node({ name: 'last-1' });
      assert.deepEqual((await api.get('/v1/nodes/states/console/last-1')).body, { console_enabled: false, console_info: null });
      // the client tempest's console test uses: no version header (1.1)
      assert.deepEqual((await api.at(null).get(`/v1/nodes/states/console/${n.uuid}`)).body, { console_enabled: false, console_info: null });
      assert.equal((await api.put('/v1/nodes/states/console/last-1', { enabled: true })).status, 202);
      assert.equal((await api.get('/nodes/states/console/last-1')).body.console_enabled, true);
      assert.equal((await api.get('/v1/nodes/states/last-1')).body.console_enabled, true);
      assert.equal((await api.put('/v1/nodes/states/power/last-1', { target: 'power on' })).status, 202);
      assert.equal(
        (
          await eventually(
            async () => (await api.get('/v1/nodes/last-1')).body,
            (x) => x.reservation === null,
            'power on',
          )
        ).power_state,
        'power on',
      );
      assert.equal((await api.put('/v1/nodes/states/provision/last-1', { target: 'manage' })).status, 202);
      assert.equal((await api.put('/v1/nodes/states/raid/last-1', {})).status, 204);
      assert.deepEqual((await api.get('/v1/nodes/management/boot_device/last-1')).body, { boot_device: 'pxe', persistent: false });
      assert.equal((await api.put('/v1/nodes/maintenance/last-1', { reason: 'x' })).status, 202);
      assert.equal((await api.get('/v1/nodes/last-1')).body.maintenance_reason, 'x');
      assert.equal((await api.delete('/v1/nodes/maintenance/last-1')).status, 202);
      const wrongMethod = await api.post('/v1/nodes/states/console/last-1', {});
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.headers.get('allow'), 'GET, PUT');
      refused(await api.get('/v1/nodes/states/console/nope-last'), 404, 'Node nope-last could not be found.');
    });

    test("the ports of a port group share one physical network: joining or changing onto another is Ironic's 409", async () => {
      const n = await node();
      const at = api.at('1.34');
      const pg = (await at.post('/v1/portgroups', { node_uuid: n.uuid, name: 'physnets' })).body;
      const port = (fields: Record<string, unknown>) => at.post('/v1/ports', { node_uuid: n.uuid, ...fields });
      assert.equal((await port({ address: '52:54:00:28:01:01', portgroup_uuid: pg.uuid, physical_network: 'physnet1' })).status, 201);
      refused(
        await port({ address: '52:54:00:28:01:02', portgroup_uuid: pg.uuid, physical_network: 'physnet2' }),
        409,
        `Port with physical network physnet2 cannot become a member of port group ${pg.uuid} which has ports in physical network physnet1.`,
      );
      refused(
        await port({ address: '52:54:00:28:01:03', portgroup_uuid: pg.uuid }),
        409,
        `Port with physical network None cannot become a member of port group ${pg.uuid} which has ports in physical network physnet1.`,
      );
      const same = await port({ address: '52:54:00:28:01:04', portgroup_uuid: pg.uuid, physical_network: 'physnet1' });
      assert.equal(same.status, 201, same.text);
      // a member changing its network away from the others'
      refused(
        await at.patch(`/v1/ports/${same.body.uuid}`, [{ op: 'replace', path: '/physical_network', value: 'physnet2' }]),
        409,
        /^Port with physical network physnet2 cannot become a member of port group/,
      );
      // a standalone port on another network joining
      const alone = await port({ address: '52:54:00:28:01:05', physical_network: 'physnet2' });
      refused(
        await at.patch(`/v1/ports/${alone.body.uuid}`, [{ op: 'replace', path: '/portgroup_uuid', value: pg.uuid }]),
        409,
        /^Port with physical network physnet2 cannot become a member/,
      );
      // onto the group's network, together with joining: accepted
      const joined = await at.patch(`/v1/ports/${alone.body.uuid}`, [
        { op: 'replace', path: '/portgroup_uuid', value: pg.uuid },
        { op: 'replace', path: '/physical_network', value: 'physnet1' },
      ]);
      assert.equal(joined.status, 200, joined.text);
      assert.deepEqual([joined.body.portgroup_uuid, joined.body.physical_network], [pg.uuid, 'physnet1']);
      // the only member may change its network: no other port to disagree with
      const lone = (await at.post('/v1/portgroups', { node_uuid: n.uuid, name: 'lone' })).body;
      const only = await port({ address: '52:54:00:28:01:06', portgroup_uuid: lone.uuid, physical_network: 'physnet1' });
      assert.equal((await at.patch(`/v1/ports/${only.body.uuid}`, [{ op: 'replace', path: '/physical_network', value: 'physnet3' }])).status, 200);
      const listed = (await at.get(`/v1/portgroups/${pg.uuid}/ports?fields=physical_network`)).body.ports;
      assert.deepEqual(
        listed.map((p: { physical_network: string }) => p.physical_network),
        ['physnet1', 'physnet1', 'physnet1'],
      );
    });

    test('a port group PATCH at 1.23: mode and properties (1.26) are refused in the first operation only, as Ironic checks', async () => {
      const n = await node();
      const pg = (await api.post('/v1/portgroups', { node_uuid: n.uuid, name: 'patched-123' })).body;
      const old = api.at('1.23');
      const both = await old.patch(`/v1/portgroups/${pg.uuid}`, [
        { op: 'add', path: '/extra/key1', value: 'value1' },
        { op: 'add', path: '/properties/key1', value: 'value1' },
      ]);
      assert.equal(both.status, 200, both.text);
      // as Ironic 21.4 shows a port group at any version: every field
      assert.deepEqual(both.body.properties, { key1: 'value1' });
      const shown = (await old.get(`/v1/portgroups/${pg.uuid}`)).body;
      assert.deepEqual(Object.keys(shown), Object.keys((await api.get(`/v1/portgroups/${pg.uuid}`)).body));
      assert.deepEqual([shown.extra, shown.properties, shown.mode], [{ key1: 'value1' }, { key1: 'value1' }, 'active-backup']);
      // asking for them by name still needs 1.26
      refused(await old.get(`/v1/portgroups/${pg.uuid}?fields=properties`), 406, 'Request not acceptable.');
      refused(await old.patch(`/v1/portgroups/${pg.uuid}`, [{ op: 'add', path: '/properties/key2', value: 'v' }]), 406, 'Request not acceptable.');
      refused(await old.patch(`/v1/portgroups/${pg.uuid}`, [{ op: 'replace', path: '/mode', value: '802.3ad' }]), 406, 'Request not acceptable.');
    });

    test('deploy templates (1.55): create, show, list, patch, delete; the name is a trait, the steps are checked', async () => {
      const steps = [{ interface: 'bios', step: 'apply_configuration', args: { settings: [{ name: 'LogicalProc', value: 'Enabled' }] }, priority: 150 }];
      const created = await api.post('/v1/deploy_templates', { name: 'CUSTOM_HYPERTHREADING_ON', steps, extra: { a: 1 } });
      assert.equal(created.status, 201, created.text);
      const t = created.body;
      assert.deepEqual(Object.keys(t), ['uuid', 'created_at', 'updated_at', 'name', 'extra', 'links', 'steps']);
      assert.deepEqual(t.steps, steps);
      assert.deepEqual(Object.keys((await api.get('/v1/deploy_templates')).body.deploy_templates[0]), ['uuid', 'name', 'links']);
      assert.deepEqual((await api.get('/v1/deploy_templates/CUSTOM_HYPERTHREADING_ON')).body, t);
      assert.deepEqual((await api.get('/v1/deploy_templates?detail=true')).body.deploy_templates, [t]);
      // a priority given as digits is a number
      const other = await api.post('/v1/deploy_templates', {
        name: 'CUSTOM_RAID',
        steps: [{ interface: 'raid', step: 'apply_configuration', args: {}, priority: '10' }],
      });
      assert.equal(other.status, 201, other.text);
      assert.equal(other.body.steps[0].priority, 10);

      const patched = await api.patch(`/v1/deploy_templates/${t.uuid}`, [
        { op: 'replace', path: '/steps/0/priority', value: 42 },
        { op: 'replace', path: '/name', value: 'CUSTOM_HT' },
      ]);
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.steps[0].priority, 42);
      assert.equal(patched.body.name, 'CUSTOM_HT');
      refused(
        await api.patch(`/v1/deploy_templates/${t.uuid}`, [{ op: 'replace', path: '/name', value: 'CUSTOM_RAID' }]),
        409,
        'A deploy template with name CUSTOM_RAID already exists.',
      );
      refused(await api.patch(`/v1/deploy_templates/${t.uuid}`, [{ op: 'replace', path: '/uuid', value: 'x' }]), 400, /^Cannot patch \/uuid/);

      refused(await api.post('/v1/deploy_templates', { name: 'CUSTOM_RAID', steps }), 409, 'A deploy template with name CUSTOM_RAID already exists.');
      refused(
        await api.post('/v1/deploy_templates', { name: 'bad', steps }),
        400,
        "Schema error for template: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'",
      );
      refused(
        await api.post('/v1/deploy_templates', { name: 'CUSTOM_Y', steps: [{ interface: 'foo', step: 'x', args: {}, priority: 1 }] }),
        400,
        "Schema error for template: 'foo' is not one of ['power', 'management', 'deploy', 'bios', 'raid']",
      );
      refused(await api.post('/v1/deploy_templates', { name: 'CUSTOM_Y', steps: [] }), 400, 'Schema error for template: [] is too short');
      refused(
        await api.post('/v1/deploy_templates', { name: 'CUSTOM_Y', steps: [...steps, { ...steps[0], priority: 2 }] }),
        400,
        'Deploy template invalid: Duplicate deploy steps. A deploy template cannot have multiple deploy steps with the same interface and step. Duplicates: interface: bios, step: apply_configuration.',
      );
      assert.equal((await api.delete('/v1/deploy_templates/CUSTOM_HT')).status, 204);
      refused(await api.get('/v1/deploy_templates/CUSTOM_HT'), 404, 'Deploy template CUSTOM_HT could not be found.');
      // before 1.55: GET 404, writes 405
      assert.equal((await api.at('1.54').get('/v1/deploy_templates')).status, 404);
      assert.equal((await api.at('1.54').post('/v1/deploy_templates', { name: 'CUSTOM_Z', steps })).status, 405);
      assert.ok((await api.get('/v1')).body.deploy_templates);
    });

    test('volume connectors and targets (1.32): CRUD, unique per type and id / boot index, changes need the node powered off', async () => {
      const n = await node({ name: 'vol-1' });
      const conn = await api.post('/v1/volume/connectors', { node_uuid: n.uuid, type: 'iqn', connector_id: 'iqn.2017-07.org.openstack:01:d9a51732c3f' });
      assert.equal(conn.status, 201, conn.text);
      assert.deepEqual(Object.keys(conn.body), ['uuid', 'created_at', 'updated_at', 'connector_id', 'extra', 'type', 'links', 'node_uuid']);
      assert.equal(conn.headers.get('location'), `${server.url}/baremetal/v1/volume/connectors/${conn.body.uuid}`);
      refused(
        await api.post('/v1/volume/connectors', { node_uuid: n.uuid, type: 'iqn', connector_id: 'iqn.2017-07.org.openstack:01:d9a51732c3f' }),
        409,
        'A volume connector with type iqn and connector ID iqn.2017-07.org.openstack:01:d9a51732c3f already exists.',
      );
      const target = await api.post('/v1/volume/targets', { node_uuid: n.uuid, volume_type: 'iscsi', volume_id: 'v1', boot_index: 0, properties: { lun: 1 } });
      assert.equal(target.status, 201, target.text);
      assert.deepEqual(Object.keys(target.body), [
        'uuid',
        'created_at',
        'updated_at',
        'boot_index',
        'extra',
        'properties',
        'volume_id',
        'volume_type',
        'links',
        'node_uuid',
      ]);
      refused(
        await api.post('/v1/volume/targets', { node_uuid: n.uuid, volume_type: 'iscsi', volume_id: 'v2', boot_index: 0 }),
        409,
        "A volume target with boot index '0' for the same node already exists.",
      );
      refused(
        await api.post('/v1/volume/targets', { node_uuid: n.uuid, volume_type: 'iscsi', volume_id: 'v2' }),
        400,
        /^Schema error for target: 'boot_index' is a required property/,
      );
      const missing = '55555555-2222-3333-4444-555555555555';
      refused(
        await api.post('/v1/volume/connectors', { node_uuid: missing, type: 'ip', connector_id: '10.0.0.1' }),
        400,
        `Node ${missing} could not be found.`,
      );

      assert.deepEqual(Object.keys((await api.get('/v1/volume/connectors')).body.connectors[0]), ['uuid', 'connector_id', 'type', 'links', 'node_uuid']);
      assert.deepEqual(
        (await api.get('/v1/volume/connectors?node=vol-1')).body.connectors.map((c: any) => c.uuid),
        [conn.body.uuid],
      );
      assert.deepEqual(
        (await api.get(`/v1/nodes/${n.uuid}/volume/targets`)).body.targets.map((t: any) => t.uuid),
        [target.body.uuid],
      );
      assert.deepEqual((await api.get('/v1/volume/targets?detail=True')).body.targets[0].properties, { lun: 1 });
      const volumeRoot = (await api.get(`/v1/nodes/${n.uuid}/volume`)).body;
      assert.deepEqual(Object.keys(volumeRoot), ['links', 'connectors', 'targets']);
      assert.deepEqual(Object.keys((await api.get('/v1/volume')).body), ['links', 'connectors', 'targets']);

      // the node has no power state yet: changes are refused as Ironic refuses them
      refused(
        await api.delete(`/v1/volume/connectors/${conn.body.uuid}`),
        400,
        `The requested action "volume connector deletion" can not be performed on node "${n.uuid}" while it is in state "None".`,
      );
      assert.equal((await api.put(`/v1/nodes/${n.uuid}/states/power`, { target: 'power off' })).status, 202);
      await eventually(
        async () => (await api.get(`/v1/nodes/${n.uuid}`)).body.power_state,
        (s) => s === 'power off',
        'power off',
      );
      const patched = await api.patch(`/v1/volume/targets/${target.body.uuid}`, [{ op: 'replace', path: '/boot_index', value: 1 }]);
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.boot_index, 1);
      refused(await api.patch(`/v1/volume/targets/${target.body.uuid}`, [{ op: 'replace', path: '/uuid', value: missing }]), 400, /^Cannot patch \/uuid/);
      assert.equal((await api.patch(`/v1/volume/connectors/${conn.body.uuid}`, [{ op: 'add', path: '/extra/k', value: 'v' }])).body.extra.k, 'v');
      assert.equal((await api.delete(`/v1/volume/connectors/${conn.body.uuid}`)).status, 204);
      refused(await api.get(`/v1/volume/connectors/${conn.body.uuid}`), 404, `Volume connector ${conn.body.uuid} could not be found.`);
      refused(await api.get('/v1/volume/targets/nope'), 400, 'Expected UUID for target_uuid: nope');
      // a node's volume targets go with it
      assert.equal((await api.delete(`/v1/nodes/${n.uuid}`)).status, 204);
      assert.equal((await api.get(`/v1/volume/targets/${target.body.uuid}`)).status, 404);
      assert.equal((await api.at('1.31').get('/v1/volume/connectors')).status, 404);
    });

    test("a volume change while a power transition holds the node's lock is Ironic's 409 NodeLocked (clients retry it)", async () => {
      // transitions that take a minute: the lock is still held when the change comes
      const slow = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 60_000 });
      try {
        const slowApi = new IronicClient(`${slow.url}/baremetal`);
        const n = (await slowApi.post('/v1/nodes', { driver: 'fake-hardware' })).body;
        const conn = await slowApi.post('/v1/volume/connectors', { node_uuid: n.uuid, type: 'ip', connector_id: '10.0.0.9' });
        assert.equal(conn.status, 201, conn.text);
        assert.equal((await slowApi.put(`/v1/nodes/${n.uuid}/states/power`, { target: 'power off' })).status, 202);
        refused(await slowApi.delete(`/v1/volume/connectors/${conn.body.uuid}`), 409, new RegExp(`^Node ${n.uuid} is locked by host `));
      } finally {
        await slow.close();
      }
    });
  });
}
