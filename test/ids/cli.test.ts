// `allot ids …` against a running server: the built CLI (dist/) as a user runs it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';

const run = promisify(execFile);
const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');

for (const dialect of DIALECTS) {
  describe(`allot ids (${dialect})`, () => {
    let server: TestServer;
    const allot = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, [cli, 'ids', '--url', server.url, ...args]);
      return stdout.trim() ? JSON.parse(stdout) : null;
    };
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
    });
    after(() => server.close());

    test('pools, allocations and service instances from the command line', async () => {
      const pool = await allot('pools', 'create', 'vlan', '--kind', 'integer', '--range', '1-4094', '--exclude', '1', '--static', '2-9');
      assert.equal(pool.utilization.total, '4093');
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
  });
}
