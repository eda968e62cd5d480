// Service instances and allocation specs (the seed's model), on SQLite and PostgreSQL, with a
// second real PostgreSQL database as the external inventory (router lookups and VLAN
// allocations) and a plugin module inventory.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, tries = 400): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

for (const dialect of DIALECTS) {
  describe(`service instances (${dialect})`, () => {
    let server: TestServer;
    let api: IdsClient;
    let inventory: pg.Client;

    before(async () => {
      const inventoryUrl = await freshDatabaseUrl('postgres');
      inventory = new pg.Client({ connectionString: inventoryUrl });
      await inventory.connect();
      await inventory.query(`CREATE TABLE routers (name text PRIMARY KEY, mgmt_ip text NOT NULL);
        INSERT INTO routers VALUES ('r1', '10.0.0.1'), ('r2', '10.0.0.2'), ('r3', '10.0.0.3');
        CREATE TABLE allocation (attribute text NOT NULL, owner text NOT NULL, allocated_value integer NOT NULL, UNIQUE (attribute, owner), UNIQUE (attribute, allocated_value));`);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-ids-'));
      const config = path.join(dir, 'ids.json');
      writeFileSync(
        config,
        JSON.stringify({
          inventories: {
            routers: { type: 'postgres-table', url: inventoryUrl, lookup: { table: 'routers', key_column: 'name', value_column: 'mgmt_ip' } },
            vlans: { type: 'postgres-table', url: inventoryUrl, table: 'allocation', first: 100, last: 199 },
            memory: { module: path.join(here, 'fixtures/memory-inventory.mjs'), options: { first: 7000 } },
          },
        }),
      );
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsConfig: config, idsWorkerIntervalMs: 50, idsRetryBaseMs: 20 });
      api = new IdsClient(server.url);
      await api.post('/pools', { name: 'vni', kind: 'integer', ranges: ['50000-70000'], strategy: 'random' });
      const spec = await api.post('/allocation-specs', {
        name: 'virtualwire',
        attributes: {
          vni: { from: 'pool', pool: 'vni' },
          router_a_mgmt_ip: { from: 'lookup', inventory: 'routers', key_attribute: 'router_a' },
          router_z_mgmt_ip: { from: 'lookup', inventory: 'routers', key_attribute: 'router_z' },
        },
      });
      assert.equal(spec.status, 201, spec.text);
      assert.equal(
        (
          await api.post('/allocation-specs', {
            name: 'vlan-assignment',
            attributes: { vlan_id: { from: 'inventory', inventory: 'vlans', owner_attribute: 'name' } },
          })
        ).status,
        201,
      );
      assert.equal((await api.post('/allocation-specs', { name: 'by-id', attributes: { tag: { from: 'inventory', inventory: 'memory' } } })).status, 201);
    });
    after(async () => {
      await server.close();
      await inventory.end();
    });

    const wire = { router_a: 'r1', port_a: 1, vlan_a: 10, router_z: 'r2', port_z: 2, vlan_z: 20 };

    test('validate allocates into the candidate set; promote, update, re-lookup on rename, terminate frees', async () => {
      const created = await api.post('/service-instances', { allocation_spec: 'virtualwire', attributes: wire });
      assert.equal(created.status, 201);
      assert.equal(created.body.state, 'start');
      const id = created.body.id;
      problem(await api.post(`/service-instances/${id}/promote`), 409, 'ids.invalid_state');

      const validated = await api.post(`/service-instances/${id}/validate`);
      assert.equal(validated.status, 200, validated.text);
      const c = validated.body.candidate_attributes;
      assert.ok(c.vni >= 50000 && c.vni <= 70000);
      assert.deepEqual([c.router_a_mgmt_ip, c.router_z_mgmt_ip], ['10.0.0.1', '10.0.0.2']);
      assert.equal(validated.body.candidate_validated, true);
      // validating again keeps what is there
      const again = await api.post(`/service-instances/${id}/validate`);
      assert.equal(again.body.candidate_attributes.vni, c.vni);
      problem(
        await api.post(`/service-instances/${id}/promote`, undefined, { headers: { 'if-match': validated.headers.get('etag')! } }),
        412,
        'ids.precondition_failed',
      );
      const up = await api.post(`/service-instances/${id}/promote`, undefined, { headers: { 'if-match': again.headers.get('etag')! } });
      assert.equal(up.status, 200, up.text);
      assert.equal(up.body.state, 'up');
      assert.deepEqual(up.body.active_attributes, c);
      assert.equal(up.body.candidate_attributes, null);

      problem(await api.patch(`/service-instances/${id}`, { attributes: { vni: 1 } }), 400, 'ids.attribute_read_only');
      problem(await api.patch(`/service-instances/${id}`, { attributes: { port_a: 3 } }, { headers: { 'if-match': '"1"' } }), 412, 'ids.precondition_failed');
      const renamed = await api.patch(`/service-instances/${id}`, { attributes: { router_a: 'r3' } });
      assert.equal(renamed.body.state, 'update');
      assert.equal(renamed.body.candidate_attributes.vni, c.vni);
      const revalidated = (await api.post(`/service-instances/${id}/validate`)).body;
      assert.equal(revalidated.candidate_attributes.router_a_mgmt_ip, '10.0.0.3', 'a renamed router is looked up again');
      assert.equal(revalidated.candidate_attributes.router_z_mgmt_ip, '10.0.0.2');
      assert.equal(revalidated.candidate_attributes.vni, c.vni);
      const promoted = (await api.post(`/service-instances/${id}/promote`)).body;
      assert.equal(promoted.rollback_attributes.router_a_mgmt_ip, '10.0.0.1');

      const held = await api.all(`/allocations?owner=${encodeURIComponent(`service-instance/${id}`)}`);
      assert.deepEqual(
        held.map((a) => [a.pool, a.purpose, a.value, a.source]),
        [['vni', 'vni', c.vni, 'service-instance']],
      );

      const rolledBack = (await api.post(`/service-instances/${id}/rollback`)).body;
      assert.equal(rolledBack.active_attributes.router_a, 'r1');
      assert.equal((await api.delete(`/service-instances/${id}/attribute-sets/rollback`)).body.rollback_attributes, null);
      assert.equal((await api.all(`/pools/vni/allocations?owner=${encodeURIComponent(`service-instance/${id}`)}`)).length, 1, 'still held by the active set');

      const terminated = (await api.delete(`/service-instances/${id}`)).body;
      assert.equal(terminated.state, 'terminated');
      assert.equal((await api.all(`/pools/vni/allocations?owner=${encodeURIComponent(`service-instance/${id}`)}`)).length, 0);
      assert.equal((await api.delete(`/service-instances/${id}`)).status, 200, 'terminate is idempotent');
      problem(await api.post(`/service-instances/${id}/validate`), 409, 'ids.invalid_state');
    });

    test('a value already present is kept and held; a second instance cannot take it', async () => {
      const a = (await api.post('/service-instances', { allocation_spec: 'virtualwire', attributes: { ...wire, vni: 60000 } })).body;
      assert.equal((await api.post(`/service-instances/${a.id}/validate`)).body.candidate_attributes.vni, 60000);
      const b = (await api.post('/service-instances', { allocation_spec: 'virtualwire', attributes: { ...wire, vni: 60000 } })).body;
      const clash = await api.post(`/service-instances/${b.id}/validate`);
      problem(clash, 409, 'ids.value_in_use');
      assert.equal(clash.body.held_by.owner, `service-instance/${a.id}`);
      // the failure names the attribute whose value could not be had
      assert.equal(clash.body.attribute, 'vni');
      assert.match(clash.body.detail, /^attribute "vni": /);
      const bad = (await api.post('/service-instances', { allocation_spec: 'virtualwire', attributes: { ...wire, vni: 'abc' } })).body;
      const refused = await api.post(`/service-instances/${bad.id}/validate`);
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.attribute, 'vni');
      assert.equal(refused.body.index, undefined);
      assert.match(refused.body.detail, /^attribute "vni": /);
      await api.post('/allocation-specs', { name: 'two-pools', attributes: { vni: { from: 'pool', pool: 'vni' }, other: { from: 'pool', pool: 'not-yet' } } });
      const early = (await api.post('/service-instances', { allocation_spec: 'two-pools', attributes: {} })).body;
      const missing = await api.post(`/service-instances/${early.id}/validate`);
      problem(missing, 404, 'ids.not_found');
      assert.deepEqual([missing.body.attribute, missing.body.detail], ['other', 'attribute "other": pool "not-yet" not found']);
      assert.match((await api.get(`/service-instances/${b.id}`)).body.last_error, /60000/);
      // clearing the candidate of a fresh instance is not allowed, terminating frees
      await api.delete(`/service-instances/${a.id}`);
      assert.equal((await api.post(`/service-instances/${b.id}/validate`)).body.candidate_attributes.vni, 60000);
    });

    test('lookups report missing keys and unknown routers', async () => {
      const x = (await api.post('/service-instances', { allocation_spec: 'virtualwire', attributes: { router_a: 'r1' } })).body;
      problem(await api.post(`/service-instances/${x.id}/validate`), 422, 'ids.missing_attribute');
      await api.patch(`/service-instances/${x.id}`, { attributes: { router_z: 'nowhere' } });
      problem(await api.post(`/service-instances/${x.id}/validate`), 422, 'ids.lookup_not_found');
      problem(
        await api.post('/service-instances', { allocation_spec: 'virtualwire', attributes: { router_a_mgmt_ip: '1.2.3.4' } }),
        400,
        'ids.attribute_read_only',
      );
      problem(await api.post('/service-instances', { allocation_spec: 'nope', attributes: {} }), 422, 'ids.invalid_request');
      problem(
        await api.post('/allocation-specs', { name: 'bad', attributes: { x: { from: 'lookup', inventory: 'ghost', key_attribute: 'y' } } }),
        422,
        'ids.unknown_inventory',
      );
    });

    test('an inventory that owns allocation: idempotent per owner, deallocated through the outbox', async () => {
      const one = (
        await api.post('/service-instances', { allocation_spec: 'vlan-assignment', lifecycle: 'simple_with_deallocation', attributes: { name: 'cust-1' } })
      ).body;
      const two = (
        await api.post('/service-instances', { allocation_spec: 'vlan-assignment', lifecycle: 'simple_with_deallocation', attributes: { name: 'cust-2' } })
      ).body;
      const v1 = (await api.post(`/service-instances/${one.id}/validate`)).body.candidate_attributes.vlan_id;
      const v2 = (await api.post(`/service-instances/${two.id}/validate`)).body.candidate_attributes.vlan_id;
      assert.notEqual(v1, v2);
      assert.ok(v1 >= 100 && v2 >= 100);
      assert.equal((await api.post(`/service-instances/${one.id}/validate`)).body.candidate_attributes.vlan_id, v1);
      await api.post(`/service-instances/${one.id}/promote`);
      const rows = (await inventory.query("SELECT owner, allocated_value FROM allocation WHERE attribute = 'vlan_id' ORDER BY owner")).rows;
      assert.deepEqual(rows, [
        { owner: 'cust-1', allocated_value: v1 },
        { owner: 'cust-2', allocated_value: v2 },
      ]);

      const terminating = (await api.delete(`/service-instances/${one.id}`)).body;
      assert.ok(['deallocating', 'terminated'].includes(terminating.state));
      const done = await until('termination', async () => {
        const v = (await api.get(`/service-instances/${one.id}`)).body;
        return v.state === 'terminated' ? v : null;
      });
      assert.equal(done.pending_deallocations, 0);
      assert.deepEqual((await inventory.query("SELECT owner FROM allocation WHERE attribute = 'vlan_id'")).rows, [{ owner: 'cust-2' }]);
      const entries = await api.all(`/outbox?instance=${one.id}`);
      assert.deepEqual(
        entries.map((e) => [e.inventory, e.owner, e.state]),
        [['vlans', 'cust-1', 'done']],
      );
      const inventories = (await api.get('/inventories')).body.items;
      assert.deepEqual(inventories.find((i: any) => i.name === 'vlans').outbox, { pending: 0, done: 1 });
    });

    test('a plugin module inventory keyed by the instance id; creation with a client id is idempotent', async () => {
      const id = '5b0c7a56-1f0a-4c3e-9a51-0e0d4c1b2a77';
      const first = await api.post('/service-instances', { id, allocation_spec: 'by-id', attributes: { note: 'n' } });
      assert.equal(first.status, 201);
      assert.equal((await api.post('/service-instances', { id, allocation_spec: 'by-id', attributes: { note: 'n' } })).status, 200);
      problem(await api.post('/service-instances', { id, allocation_spec: 'by-id', attributes: { note: 'other' } }), 409, 'ids.instance_exists');
      // a repeat is the same request only with the same attributes: none left out, none added
      problem(await api.post('/service-instances', { id, allocation_spec: 'by-id', attributes: {} }), 409, 'ids.instance_exists');
      problem(await api.post('/service-instances', { id, allocation_spec: 'by-id', attributes: { note: 'n', site: 's1' } }), 409, 'ids.instance_exists');
      const tag = (await api.post(`/service-instances/${id}/validate`)).body.candidate_attributes.tag;
      assert.ok(tag >= 7000);
      // the values validation added do not make the first request another one
      const again = await api.post('/service-instances', { id, allocation_spec: 'by-id', attributes: { note: 'n' } });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.candidate_attributes.tag, tag);
      assert.equal((await api.post('/service-instances', { allocation_spec: 'by-id', attributes: { note: 'n' }, id: id.toUpperCase() })).status, 200);
      await api.delete(`/service-instances/${id}`);
      await until('delivery', async () => (await api.all(`/outbox?instance=${id}`)).every((e) => e.state === 'done'));
    });
  });
}

function problem(res: { status: number; body: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code, res.text);
}
