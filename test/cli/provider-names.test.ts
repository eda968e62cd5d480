// `allot placement` takes a provider by uuid or by name wherever it takes one (`<provider>`,
// `--parent`, `--in-tree`, `rp=` of `--allocation`), as `allot baremetal` takes node names: the
// built CLI (dist/) against a real server on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliCommands } from '../helpers/cli.js';
import { DIALECTS } from '../helpers/databases.js';
import { type TestServer, serverFor } from '../helpers/server.js';

for (const dialect of DIALECTS) {
  describe(`allot placement with provider names (${dialect})`, () => {
    let server: TestServer;
    serverFor(dialect, (s) => (server = s));
    const { allot, fails } = cliCommands(() => server.url);

    test('placement: a provider is named by uuid or by name wherever a command takes one; an unknown name exits 4', async () => {
      // every command taking a <provider> resolves it the same way (onProvider); each kind of place is tried once
      const root = await allot('placement', 'provider', 'create', 'rack-7');
      const child = await allot('placement', 'provider', 'create', 'rack-7-nic', '--parent', 'rack-7');
      assert.equal(child.parent_provider_uuid, root.uuid);
      assert.deepEqual(Object.keys((await allot('placement', 'inventory', 'set', 'rack-7', 'VCPU', '--total', '8')).inventories), ['VCPU']);
      const consumer = '31111111-2222-4333-8444-555555555555';
      // a name and the uuid of the same provider in one --allocation list are one provider
      const args = ['--allocation', 'rp=rack-7,VCPU=2', '--allocation', `rp=${root.uuid},VCPU=3`, '--project', 'p', '--user', 'u'];
      await allot('placement', 'allocation', 'set', consumer, ...args);
      assert.equal((await allot('placement', 'usage', 'show', 'rack-7')).usages.VCPU, 3);
      assert.deepEqual(
        (await allot('placement', 'provider', 'list', '--in-tree', 'rack-7-nic')).map((p: { uuid: string }) => p.uuid).sort(),
        [root.uuid, child.uuid].sort(),
      );
      const candidates = await allot('placement', 'candidates', '--resources', 'VCPU:1', '--in-tree', 'rack-7-nic');
      assert.deepEqual(
        candidates.allocation_requests.map((r: { allocations: object }) => Object.keys(r.allocations)),
        [[root.uuid]],
      );
      assert.equal((await allot('placement', 'provider', 'set', 'rack-7-nic', '--name', 'rack-7-nic0')).name, 'rack-7-nic0');
      await allot('placement', 'provider', 'delete', 'rack-7-nic0');

      assert.equal(await fails(4, 'placement', 'inventory', 'list', 'rack-99'), 'allot: no resource provider is named "rack-99"\n');
      assert.match(await fails(4, 'placement', 'provider', 'create', 'rack-8', '--parent', 'rack-99'), /no resource provider is named "rack-99"/);
    });
  });
}
