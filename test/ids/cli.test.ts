// `allot ids …` against a running server: the built CLI (dist/) as a user runs it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { AllotClient } from '../../src/client/index.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { BW, GBIT, seedReservationCloud, tenantServerSpec } from './reservation-cloud.js';

const run = promisify(execFile);
const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');

for (const dialect of DIALECTS) {
  describe(`allot ids (${dialect})`, () => {
    let server: TestServer;
    /** the command's standard output as it printed it */
    const printed = async (...args: string[]) => (await run(process.execPath, [cli, 'ids', '--url', server.url, ...args])).stdout;
    const allot = async (...args: string[]) => {
      const stdout = await printed(...args);
      return stdout.trim() ? JSON.parse(stdout) : null;
    };
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
    });
    after(() => server.close());

    test('pools, allocations and service instances from the command line', async () => {
      const pool = await allot('pools', 'create', 'vlan', '--kind', 'integer', '--range', '1-4094', '--exclude', '1', '--static', '2-9');
      assert.equal(pool.utilization.total, 4093);
      assert.equal(pool.project_id, null, 'a pool without --project-id is shared');
      const owned = await allot('pools', 'create', 'tenant-vlan', '--kind', 'integer', '--range', '1-9', '--project-id', 'p-123');
      assert.equal(owned.project_id, 'p-123');
      const a = await allot('allocate', 'vlan', '--owner', 'svc-1', '--purpose', 'a');
      assert.equal(a.value, 10);
      assert.equal((await allot('allocate', 'vlan', '--owner', 'svc-1', '--purpose', 'a')).id, a.id);
      assert.equal((await allot('allocate', 'vlan', '--owner', 'svc-2', '--value', '5')).value, 5);
      const r = await allot('allocate', 'vlan', '--owner', 'svc-3', '--ttl', '60');
      assert.equal(r.state, 'reserved');
      assert.equal((await allot('allocations', 'confirm', r.id)).state, 'allocated');
      assert.equal((await allot('allocations', 'list', '--pool', 'vlan')).length, 3);
      await allot('allocations', 'release', a.id);
      assert.equal((await allot('pools', 'show', 'vlan')).utilization.allocations, 2);
      assert.equal((await allot('pools', 'free', 'vlan'))[0].band, 'static');

      await assert.rejects(allot('allocate', 'vlan', '--owner', 'svc-4', '--value', '5'), /409 ids.value_in_use/);

      // who holds a value, and releasing it by pool and value
      const block = await allot('allocate', 'vlan', '--owner', 'svc-5', '--value', '104', '--count', '4');
      assert.equal((await allot('allocations', 'show', '--pool', 'vlan', '5')).owner, 'svc-2');
      assert.equal((await allot('allocations', 'show', '--pool', 'vlan', '106')).id, block.id, 'a value inside a block finds the block');
      assert.deepEqual(
        (await allot('allocations', 'list', '--pool', 'vlan', '--value', '105')).map((x: { id: string }) => x.id),
        [block.id],
      );
      const nobody = await run(process.execPath, [cli, 'ids', '--url', server.url, 'allocations', 'show', '--pool', 'vlan', '6']).catch((e) => e);
      assert.equal(nobody.code, 4);
      assert.equal(nobody.stderr, 'allot: no allocation of pool vlan holds 6\n');
      const inside = await run(process.execPath, [cli, 'ids', '--url', server.url, 'allocations', 'release', '--pool', 'vlan', '106']).catch((e) => e);
      assert.equal(inside.code, 4, 'a value inside a block releases nothing');
      assert.match(inside.stderr, /no allocation of pool "vlan" has the value 106; allocation .* of value 104 holds part of it/);
      await allot('allocations', 'release', '--pool', 'vlan', '104');
      await allot('allocations', 'release', '--pool', 'vlan', '5');
      assert.deepEqual(await allot('allocations', 'list', '--pool', 'vlan', '--value', '5'), []);
      assert.equal((await allot('allocate', 'vlan', '--owner', 'svc-4', '--value', '5')).value, 5, 'free again');

      await allot('pools', 'create', 'vni', '--kind', 'integer', '--range', '5000-5999');
      const spec = path.join(path.dirname(cli), '..', '..', 'test', 'ids', 'fixtures', 'vni-spec.json');
      await allot('specs', 'create', spec);
      const inst = await allot('instances', 'create', '--spec', 'vni-only', '--attr', 'name=wire-1', '--attr', 'port=7');
      assert.deepEqual(inst.candidate_attributes, { name: 'wire-1', port: 7 });
      assert.equal((await allot('instances', 'validate', inst.id)).candidate_attributes.vni, 5000);
      assert.equal((await allot('instances', 'promote', inst.id)).state, 'up');
      assert.equal((await allot('instances', 'terminate', inst.id)).state, 'terminated');
      assert.equal((await allot('instances', 'list', '--state', 'terminated')).length, 1);
    });

    test('an instance reserving a node, bandwidth and values in one command; show prints its holdings with their links', async () => {
      const cloud = await seedReservationCloud(new AllotClient({ url: server.url, token: 'admin' }), {
        nodes: ['cli-gold-1'],
        resourceClass: 'cli-gold',
        owner: 'p-cli',
      });
      const [node] = [...cloud.nodes.values()];
      await allot('pools', 'create', 'cli-vlan', '--kind', 'integer', '--range', '300-309');
      await allot('pools', 'create', 'cli-addr', '--kind', 'address', '--range', '10.2.0.0/28');
      // the spec file is sent as it is: the node and capacity sources come back as written
      const spec = tenantServerSpec('cli-tenant', 'cli-gold', { vlan: 'cli-vlan', address: 'cli-addr' });
      const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'allot-cli-')), 'tenant.json');
      await writeFile(file, JSON.stringify({ ...spec, project_id: 'p-cli' }));
      const created = await allot('specs', 'create', file);
      assert.deepEqual([created.attributes, created.project_id], [spec.attributes, 'p-cli']);

      await assert.rejects(printed('instances', 'create', '--spec', 'cli-tenant', '--promote'), (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2, err.stderr);
        assert.match(err.stderr, /--promote needs --validate/);
        return true;
      });
      const id = randomUUID();
      const create = ['instances', 'create', '--spec', 'cli-tenant', '--id', id, '--project-id', 'p-cli', '--validate', '--promote'];
      const up = await allot(...create);
      assert.deepEqual([up.id, up.state, up.project_id], [id, 'up', 'p-cli']);
      assert.equal(up.active_attributes.server.node, node);
      assert.deepEqual(up.active_attributes.uplink.allocations, { [cloud.nics.get(node!)!]: { resources: { [BW]: 10 * GBIT } } });
      assert.deepEqual(up.holdings.map((h: { attribute: string; source: string }) => `${h.attribute}:${h.source}`).sort(), [
        'address:pool',
        'server:node',
        'uplink:capacity',
        'vlan:pool',
      ]);
      // the same command again: the same instance and holdings (idempotent by --id)
      assert.deepEqual((await allot(...create)).holdings, up.holdings);
      // one node only: a second instance cannot have one, and holds nothing (exit 5: a conflict)
      await assert.rejects(
        printed('instances', 'create', '--spec', 'cli-tenant', '--project-id', 'p-cli', '--validate'),
        (err: { code: number; stderr: string }) => {
          assert.equal(err.code, 5, err.stderr);
          assert.match(err.stderr, /attribute "server": no node can be had.*ids\.node_unavailable/);
          return true;
        },
      );

      // as a table: the instance's fields, then one row per holding with the link into its API
      const table = await printed('instances', 'show', id, '--output', 'table');
      const [fields, holdings] = table.split('\nholdings:\n');
      assert.match(fields!, /^project_id +p-cli$/m);
      const rows = holdings!.trim().split('\n');
      assert.match(rows[0]!, /^attribute +source +value +link$/);
      const byAttribute = new Map(rows.slice(2).map((r) => [r.split(/ +/)[0], r]));
      const holding = (attr: string) => up.holdings.find((h: { attribute: string }) => h.attribute === attr);
      for (const [attr, source, value] of [
        ['server', 'node', `cli-gold-1 (${node})`],
        ['uplink', 'capacity', `${BW}=${10 * GBIT} on ${cloud.nics.get(node!)}`],
        ['vlan', 'pool', String(up.active_attributes.vlan)],
        ['address', 'pool', up.active_attributes.address],
      ]) {
        const row = byAttribute.get(attr!)!;
        const link = `${server.url}${holding(attr!).href}`;
        assert.deepEqual(row.split(/ {2,}/), [attr, source, value, link], row);
        const followed = await fetch(link, { headers: { 'x-auth-token': 'admin', 'x-openstack-ironic-api-version': '1.82' } });
        assert.equal(followed.status, 200, link);
      }

      const gone = await allot('instances', 'terminate', id);
      assert.deepEqual([gone.state, gone.holdings], ['terminated', []]);
      assert.match(await printed('instances', 'show', id, '--output', 'table'), /\nholdings:\n\(none\)\n$/);
    });
  });
}
