// The identifier API's bodies are written once, as JSON schemas (src/ids/schemas.ts): the
// server's views and the typed client use the TypeScript that scripts/wire-types.ts writes from
// them (src/client/ids-wire.ts). Checked here: that file is what the schemas say now, and real
// answers of every kind — read through the typed client, on both databases — are what the
// response schemas describe: every required member there, no member they do not document.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { WIRE_FILES, wireTypes } from '../../scripts/wire-types.js';
import { AllotClient } from '../../src/client/index.js';
import { AllotApiError } from '../../src/client/errors.js';
import { RESPONSE_SCHEMAS, type ResponseName } from '../../src/ids/schemas.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { documentedOnly } from '../helpers/openapi.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { seedReservationCloud, tenantServerSpec } from './reservation-cloud.js';

test('src/client/ids-wire.ts is what the schemas say (npx tsx scripts/wire-types.ts rewrites it)', () => {
  assert.equal(readFileSync(WIRE_FILES.ids.file, 'utf8'), wireTypes('ids'));
});

/** An external inventory over allot's HTTP protocol that hands out 100, 101, … and takes them back. */
function countingInventory() {
  let next = 100;
  const held = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const answer = (status: number, body?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const owner = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
      if (req.method === 'POST') {
        const { owner: who } = JSON.parse(text) as { owner: string };
        if (!held.has(who)) held.set(who, next++);
        return answer(201, { value: held.get(who) });
      }
      if (req.method === 'GET') return held.has(owner) ? answer(200, { value: held.get(owner) }) : answer(404);
      if (req.method === 'DELETE') return answer(held.delete(owner) ? 204 : 404);
      answer(405);
    });
  });
  return {
    listen: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const dialect of DIALECTS) {
  describe(`identifier API answers are their documented wire types (${dialect})`, () => {
    const inventory = countingInventory();
    let server: TestServer;
    before(async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-wire-'));
      const idsConfig = path.join(dir, 'ids.json');
      writeFileSync(idsConfig, JSON.stringify({ inventories: { serials: { type: 'http', url: await inventory.listen(), timeout_ms: 2000 } } }));
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsConfig });
    });
    after(async () => {
      await server.close();
      await inventory.close();
    });

    test('pools, allocations, batches, free ranges, imports, specs, instances with every kind of holding, outbox, inventories, problems', async () => {
      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      const components = { schemas: documentedOnly(RESPONSE_SCHEMAS) };
      const check = (name: ResponseName, body: unknown) => {
        const validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components });
        assert.ok(validate(body), `${name}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`);
      };
      const allot = new AllotClient({ url: server.url, token: 'admin' });
      const ids = allot.ids;

      const vlans = await ids.createPool({ name: 'w-vlan', kind: 'integer', ranges: ['10-99'], static: ['90-99'], metadata: { site: 'a' } });
      const prefixes = await ids.createPool({ name: 'w-pfx', kind: 'prefix', ranges: ['10.8.0.0/16'], prefix_length: 24 });
      const v6 = await ids.createPool({ name: 'w-v6', kind: 'address', ranges: ['2001:db8::/48'] });
      for (const p of [vlans, prefixes, v6]) check('Pool', p);
      check('PoolPage', await ids.listPools());

      // the client adds `created` (the answer's status) to the body it read
      const allocate = async (pool: string, request: Parameters<typeof ids.allocate>[1]) => {
        const { created: _, ...body } = await ids.allocate(pool, request);
        return body;
      };
      check('Allocation', await allocate('w-vlan', { owner: 'a', ttl_seconds: 600 }));
      check('Allocation', await allocate('w-pfx', { owner: 'b', prefix_length: 26 }));
      check('Allocation', await allocate('w-vlan', { owner: 'c', count: 4, dry_run: true }));
      check(
        'Batch',
        await ids.allocateBatch([
          { pool: 'w-vlan', owner: 'd' },
          { pool: 'w-v6', owner: 'd' },
        ]),
      );
      check('AllocationPage', await ids.listAllocations({ pool: 'w-vlan' }));
      check('FreeRangePage', await ids.listFreeRanges('w-vlan'));
      check(
        'ImportOutcome',
        await ids.importValues(
          'w-vlan',
          [
            { value: 20, owner: 'e' },
            { value: 20, owner: 'f' },
          ],
          'skip',
        ),
      );

      await seedReservationCloud(allot, { nodes: ['w-node'], resourceClass: 'w-class' });
      const tenant = tenantServerSpec('w-tenant', 'w-class', { vlan: 'w-vlan', address: 'w-v6' });
      const spec = await ids.createSpec({ ...tenant, attributes: { ...tenant.attributes, serial: { from: 'inventory', inventory: 'serials' } } });
      check('Spec', spec);
      check('SpecPage', await ids.listSpecs());
      const instance = await ids.createInstance({ allocation_spec: 'w-tenant', attributes: {}, validate: true, promote: true });
      assert.deepEqual(instance.holdings.map((h) => h.source).sort(), ['capacity', 'inventory', 'node', 'pool', 'pool']);
      check('Instance', instance);
      // a pool value and a node released from under the instance: both kinds of forced release
      const vlan = instance.holdings.find((h) => h.source === 'pool' && h.attribute === 'vlan')!;
      await ids.releaseAllocation(vlan.href!.split('/').pop()!, { force: true });
      const node = instance.holdings.find((h) => h.source === 'node')!;
      await allot.baremetal.updateNode((node.value as { node: string }).node, [{ op: 'remove', path: '/instance_uuid' }]);
      const released = await ids.getInstance(instance.id);
      assert.deepEqual(released.forced_releases.map((f) => f.source).sort(), ['node', 'pool']);
      check('Instance', released);
      const ended = await ids.terminateInstance(instance.id);
      check('Instance', ended);
      check('InstancePage', await ids.listInstances());
      check('OutboxPage', await ids.listOutbox());
      for (const inv of await ids.listInventories()) check('Inventory', inv);

      const refused = await ids.allocate('w-vlan', { owner: 'g', value: 5 }).catch((err: unknown) => err);
      assert.ok(refused instanceof AllotApiError, String(refused));
      check('Problem', refused.body);
    });
  });
}
