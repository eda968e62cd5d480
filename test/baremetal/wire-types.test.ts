// Bare metal's bodies are written once, as JSON schemas (src/baremetal/schemas.ts): the server's
// views and the typed client use the TypeScript that scripts/wire-types.ts writes from them
// (src/client/baremetal-wire.ts). Checked here: that file is what the schemas say now, every
// bare-metal operation that answers a body names its response schema, and real answers of every
// kind — at the first microversion of each resource (1.1 for nodes, ports, chassis and drivers;
// 1.23 port groups, 1.32 volumes, 1.49 conductors, 1.52 allocations, 1.55 deploy templates) and at
// the newest, on both databases — are what the response schemas describe: every required member
// there, no member they do not document. A `fields=` answer and a list without detail are checked
// against the resource's …Selection schema (the same members, any absent but links).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { WIRE_FILES, wireTypes } from '../../scripts/wire-types.js';
import { AllotClient } from '../../src/client/index.js';
import { documentedRoutes } from '../../src/baremetal/api.js';
import { MAX_VERSION } from '../../src/baremetal/microversion.js';
import { RESPONSE_SCHEMAS, type ResponseName } from '../../src/baremetal/schemas.js';
import { Microversion } from '../../src/core/microversion.js';
import { METHODS } from '../../src/http/router.js';
import { DIALECTS } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { wireChecker } from '../helpers/openapi.js';
import { serverFor } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode, nodeSettled } from './helpers.js';

test('src/client/baremetal-wire.ts is what the schemas say (npx tsx scripts/wire-types.ts rewrites it)', () => {
  assert.equal(readFileSync(WIRE_FILES.baremetal.file, 'utf8'), wireTypes('baremetal'));
});

test('every bare-metal operation that answers a body names its response schema', () => {
  const missing: string[] = [];
  for (const [template, byMethod] of Object.entries(documentedRoutes)) {
    for (const method of METHODS) {
      const endpoint = byMethod[method];
      // the document itself is the OpenAPI 3.1 meta-schema's to describe
      if (!endpoint || template === '/openapi.json' || endpoint.response) continue;
      missing.push(`${method} ${template}`);
    }
  }
  // every other operation answers 202 or 204 without a body, or deletes (204)
  const bodiless = missing.filter((op) => {
    const [method, template] = op.split(' ') as [string, string];
    return documentedRoutes[template]![method as 'GET']!.ok.every((s) => s === 202 || s === 204);
  });
  assert.deepEqual(missing, bodiless, 'an operation answering 200 or 201 without a response schema');
  assert.ok(bodiless.length > 0);
});

/** The first microversion of each kind of resource, and the newest. */
const VERSIONS = ['1.1', '1.23', '1.32', '1.49', '1.52', '1.55', MAX_VERSION];

for (const dialect of DIALECTS) {
  describe(`bare-metal answers are their documented wire types (${dialect})`, () => {
    let url = '';
    serverFor(dialect, (s) => {
      url = s.url;
    });

    test('root, drivers, chassis, nodes and their states, ports, port groups, volumes, conductors, allocations, deploy templates and errors, oldest to newest microversion', async () => {
      const wire = wireChecker<ResponseName>(RESPONSE_SCHEMAS);
      const checked = wire.checked;
      const check = (name: ResponseName, at: string, body: unknown) => {
        wire.check(name, at, body);
        return body as any;
      };
      const base = new IronicClient(`${url}/baremetal`);
      /** the answer's body, once its status is `status`, checked against `name` */
      const answer = (name: ResponseName, at: string, res: HttpResponse, status = 200) => {
        assert.equal(res.status, status, `${name} at ${at}: ${res.text}`);
        return check(name, at, res.body);
      };
      const uniqueMac = () =>
        Array.from({ length: 6 }, (_, i) =>
          i === 0
            ? '02'
            : Math.floor(Math.random() * 256)
                .toString(16)
                .padStart(2, '0'),
        ).join(':');

      answer('Root', '-', await base.at(null).get('/'));

      for (const mv of VERSIONS) {
        const api = base.at(mv);
        const at = (v: string) => Microversion.parse(mv).atLeast(v);
        const get = (name: ResponseName, path: string) => api.get(path).then((res) => answer(name, mv, res));

        const v1 = await get('V1', '/v1');
        assert.equal('allocations' in v1, at('1.52'), 'allocations are linked from 1.52');

        // drivers
        await get('DriverList', '/v1/drivers');
        await get('Driver', '/v1/drivers/fake-hardware');
        await get('DriverProperties', '/v1/drivers/fake-hardware/properties');
        if (at('1.12')) await get('RaidLogicalDiskProperties', '/v1/drivers/fake-hardware/raid/logical_disk_properties');
        if (at('1.30')) await get('DriverList', '/v1/drivers?detail=True');
        if (at('1.77')) {
          await get('DriverList', '/v1/drivers?fields=name');
          await get('DriverSelection', '/v1/drivers/fake-hardware?fields=hosts');
        }

        // a chassis and a node in it
        const chassis = answer('Chassis', mv, await api.post('/v1/chassis', { description: `wire ${mv}` }), 201);
        await get('Chassis', `/v1/chassis/${chassis.uuid}`);
        await get('ChassisList', '/v1/chassis');
        await get('ChassisDetailList', '/v1/chassis/detail');
        answer('Chassis', mv, await api.patch(`/v1/chassis/${chassis.uuid}`, [{ op: 'add', path: '/extra/rack', value: 'r1' }]));

        const node = answer('Node', mv, await api.post('/v1/nodes', { driver: 'fake-hardware', chassis_uuid: chassis.uuid }), 201);
        assert.equal('name' in node, at('1.5'), 'a node has a name from 1.5');
        assert.equal('shard' in node, at('1.82'), 'a node has a shard from 1.82');
        await get('Node', `/v1/nodes/${node.uuid}`);
        answer('Node', mv, await api.patch(`/v1/nodes/${node.uuid}`, [{ op: 'add', path: '/extra/wire', value: mv }]));
        const short = await get('NodeList', '/v1/nodes');
        assert.ok(short.nodes.length > 0 && !('driver' in short.nodes[0]), 'the short form');
        await get('NodeDetailList', '/v1/nodes/detail');
        await get('NodeList', `/v1/chassis/${chassis.uuid}/nodes`);
        await get('NodeDetailList', `/v1/chassis/${chassis.uuid}/nodes/detail`);
        if (at('1.8')) {
          const selected = await get('NodeSelection', `/v1/nodes/${node.uuid}?fields=driver,provision_state`);
          assert.deepEqual(Object.keys(selected).sort(), ['driver', 'links', 'provision_state']);
          await get('ChassisSelection', `/v1/chassis/${chassis.uuid}?fields=description`);
        }
        if (at('1.43')) await get('NodeList', '/v1/nodes?detail=True');
        await get('NodeStates', `/v1/nodes/${node.uuid}/states`);
        await get('NodeValidation', `/v1/nodes/${node.uuid}/validate`);
        await get('BootDevice', `/v1/nodes/${node.uuid}/management/boot_device`);
        await get('SupportedBootDevices', `/v1/nodes/${node.uuid}/management/boot_device/supported`);
        await get('ConsoleState', `/v1/nodes/${node.uuid}/states/console`);
        if (at('1.37')) {
          assert.equal((await api.put(`/v1/nodes/${node.uuid}/traits`, { traits: ['CUSTOM_WIRE'] })).status, 204);
          assert.deepEqual((await get('NodeTraits', `/v1/nodes/${node.uuid}/traits`)).traits, ['CUSTOM_WIRE']);
        }

        // its ports, port groups and VIFs
        const port = answer('Port', mv, await api.post('/v1/ports', { address: uniqueMac(), node_uuid: node.uuid }), 201);
        await get('Port', `/v1/ports/${port.uuid}`);
        answer('Port', mv, await api.patch(`/v1/ports/${port.uuid}`, [{ op: 'add', path: '/extra/slot', value: 1 }]));
        await get('PortList', '/v1/ports');
        await get('PortDetailList', '/v1/ports/detail');
        await get('PortList', `/v1/nodes/${node.uuid}/ports`);
        await get('PortDetailList', `/v1/nodes/${node.uuid}/ports/detail`);
        if (at('1.8')) await get('PortSelection', `/v1/ports/${port.uuid}?fields=address`);
        if (at('1.23')) {
          const pg = answer('Portgroup', mv, await api.post('/v1/portgroups', { node_uuid: node.uuid, address: uniqueMac() }), 201);
          await get('Portgroup', `/v1/portgroups/${pg.uuid}`);
          answer('Portgroup', mv, await api.patch(`/v1/portgroups/${pg.uuid}`, [{ op: 'add', path: '/extra/bond', value: 'b0' }]));
          await get('PortgroupList', '/v1/portgroups');
          await get('PortgroupDetailList', '/v1/portgroups/detail');
          await get('PortgroupSelection', `/v1/portgroups/${pg.uuid}?fields=address`);
          if (at('1.24')) {
            await get('PortgroupList', `/v1/nodes/${node.uuid}/portgroups`);
            await get('PortgroupDetailList', `/v1/nodes/${node.uuid}/portgroups/detail`);
            await get('PortList', `/v1/portgroups/${pg.uuid}/ports`);
            await get('PortDetailList', `/v1/portgroups/${pg.uuid}/ports/detail`);
          }
        }
        if (at('1.28')) {
          assert.equal((await api.post(`/v1/nodes/${node.uuid}/vifs`, { id: randomUUID() })).status, 204);
          assert.equal((await get('NodeVifs', `/v1/nodes/${node.uuid}/vifs`)).vifs.length, 1);
        }

        // volume connectors and targets (changed with the node powered off)
        if (at('1.32')) {
          assert.equal((await api.put(`/v1/nodes/${node.uuid}/states/power`, { target: 'power off' })).status, 202);
          await nodeSettled(api, node.uuid);
          await get('VolumeLinks', '/v1/volume');
          await get('VolumeLinks', `/v1/nodes/${node.uuid}/volume`);
          const connector = answer(
            'VolumeConnector',
            mv,
            await api.post('/v1/volume/connectors', { node_uuid: node.uuid, type: 'iqn', connector_id: `iqn.2026-11.org.allot:${randomUUID()}` }),
            201,
          );
          await get('VolumeConnector', `/v1/volume/connectors/${connector.uuid}`);
          answer('VolumeConnector', mv, await api.patch(`/v1/volume/connectors/${connector.uuid}`, [{ op: 'add', path: '/extra/a', value: 1 }]));
          await get('VolumeConnectorList', '/v1/volume/connectors');
          await get('VolumeConnectorList', '/v1/volume/connectors?detail=True');
          await get('VolumeConnectorList', `/v1/nodes/${node.uuid}/volume/connectors`);
          await get('VolumeConnectorSelection', `/v1/volume/connectors/${connector.uuid}?fields=type`);
          const target = answer(
            'VolumeTarget',
            mv,
            await api.post('/v1/volume/targets', { node_uuid: node.uuid, volume_type: 'iscsi', volume_id: randomUUID(), boot_index: 0 }),
            201,
          );
          await get('VolumeTarget', `/v1/volume/targets/${target.uuid}`);
          answer('VolumeTarget', mv, await api.patch(`/v1/volume/targets/${target.uuid}`, [{ op: 'add', path: '/extra/a', value: 1 }]));
          await get('VolumeTargetList', '/v1/volume/targets');
          await get('VolumeTargetList', '/v1/volume/targets?detail=True');
          await get('VolumeTargetList', `/v1/nodes/${node.uuid}/volume/targets`);
          await get('VolumeTargetSelection', `/v1/volume/targets/${target.uuid}?fields=volume_type`);
        }

        if (at('1.49')) {
          const short = await get('ConductorList', '/v1/conductors');
          assert.deepEqual(Object.keys(check('ConductorSelection', mv, short.conductors[0])).sort(), ['alive', 'conductor_group', 'hostname', 'links']);
          const full = await get('ConductorList', '/v1/conductors?detail=True');
          check('Conductor', mv, full.conductors[0]);
          await get('Conductor', `/v1/conductors/${full.conductors[0].hostname}`);
        }

        // an allocation that finds a node, and one that does not
        if (at('1.52')) {
          const rc = `wire-${mv}`;
          const target = await availableNode(api, { resource_class: rc });
          const made = answer('Allocation', mv, await api.post('/v1/allocations', { resource_class: rc }), 201);
          assert.equal('owner' in made, at('1.60'), 'an allocation has an owner from 1.60');
          const settled = check('Allocation', mv, await allocationSettled(api, made.uuid));
          assert.equal(settled.node_uuid, target.uuid);
          await get('Allocation', `/v1/nodes/${target.uuid}/allocation`);
          const none = answer('Allocation', mv, await api.post('/v1/allocations', { resource_class: `${rc}-none` }), 201);
          check('Allocation', mv, await allocationSettled(api, none.uuid));
          await get('AllocationList', '/v1/allocations');
          await get('AllocationSelection', `/v1/allocations/${made.uuid}?fields=state`);
          if (at('1.57')) answer('Allocation', mv, await api.patch(`/v1/allocations/${made.uuid}`, [{ op: 'add', path: '/extra/a', value: 1 }]));
        }

        if (at('1.55')) {
          const template = answer(
            'DeployTemplate',
            mv,
            await api.post('/v1/deploy_templates', {
              name: `CUSTOM_WIRE_${mv.replace('.', '_')}`,
              steps: [{ interface: 'deploy', step: 'noop', args: {}, priority: 10 }],
            }),
            201,
          );
          await get('DeployTemplate', `/v1/deploy_templates/${template.uuid}`);
          answer('DeployTemplate', mv, await api.patch(`/v1/deploy_templates/${template.uuid}`, [{ op: 'add', path: '/extra/a', value: 1 }]));
          await get('DeployTemplateList', '/v1/deploy_templates');
          await get('DeployTemplateList', '/v1/deploy_templates?detail=True');
          await get('DeployTemplateSelection', `/v1/deploy_templates/${template.uuid}?fields=name`);
        }

        answer('IronicError', mv, await api.get(`/v1/nodes/${randomUUID()}`), 404);
      }

      // through the typed client at the newest version: what it returns is what it types
      const client = new AllotClient({ url, token: 'admin' }).baremetal;
      assert.equal(await client.microversion(), MAX_VERSION);
      check('Root', MAX_VERSION, await client.root());
      const created = check('Node', MAX_VERSION, await client.createNode({ driver: 'fake-hardware', name: `wire-${randomUUID()}` }));
      check('Node', MAX_VERSION, await client.updateNode(created.uuid, [{ op: 'add', path: '/extra/typed', value: true }]));
      const read = await client.getNode(created.uuid);
      check('Node', MAX_VERSION, read);
      assert.equal(read.extra.typed, true);
      check('NodeSelection', MAX_VERSION, await client.getNode(created.uuid, ['name']));
      check('NodeList', MAX_VERSION, await client.listNodes({ limit: 2 }));
      check('NodeStates', MAX_VERSION, await client.getNodeStates(created.uuid));
      check('AllocationList', MAX_VERSION, await client.listAllocations());
      for (const c of await client.listConductors(true)) check('Conductor', MAX_VERSION, c);

      // every response schema met a real answer
      assert.deepEqual(
        Object.keys(RESPONSE_SCHEMAS)
          .filter((name) => !checked.has(name as ResponseName))
          .sort(),
        ['Link', 'Version'],
        'checked as parts of the others',
      );
    });
  });
}
