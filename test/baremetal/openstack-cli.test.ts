// The real `openstack baremetal` client (Debian python3-ironicclient, which negotiates 1.78)
// against a running allot: nodes from create to undeploy, allocations from create to delete, the
// conductor list with paging options, through the dedicated port (API at /) and the main port (API
// at /baremetal).
// The client must be installed (.ci/run installs python3-openstackclient and python3-ironicclient);
// a missing client fails the test instead of skipping it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, nodeSettled } from './helpers.js';

const run = promisify(execFile);

for (const dialect of DIALECTS) {
  describe(`openstack baremetal CLI (${dialect})`, () => {
    let server: TestServer;
    let endpoint: string;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 50, baremetalPort: 0 });
      endpoint = server.running.urls.baremetal!;
    });
    after(() => server.close());

    /** Run `openstack …` against allot; returns stdout, fails the test with stderr on a non-zero exit. */
    async function openstack(args: string[], at = endpoint): Promise<string> {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
      try {
        const { stdout } = await run('openstack', ['--os-auth-type', 'none', '--os-endpoint', at, ...args], { env, timeout: 120_000 });
        return stdout;
      } catch (err) {
        const e = err as { code?: string; stderr?: string; stdout?: string };
        if (e.code === 'ENOENT') assert.fail('the `openstack` command is missing: apt-get install -y python3-openstackclient python3-ironicclient');
        assert.fail(`openstack ${args.join(' ')} failed:\n${e.stderr}\n${e.stdout}`);
      }
    }
    const json = async (args: string[], at?: string) => JSON.parse(await openstack([...args, '-f', 'json'], at));

    /** Checks go through plain HTTP: each `openstack` run costs about two seconds of CPU. */
    const http = () => new IronicClient(endpoint);

    test('node create, list, show, set, manage, provide, power, deploy and undeploy', async () => {
      const created = await json(['baremetal', 'node', 'create', '--driver', 'fake-hardware', '--name', 'cli-1', '--resource-class', 'cli']);
      assert.equal(created.provision_state, 'enroll');
      const listed = await json(['baremetal', 'node', 'list']);
      assert.deepEqual(
        listed.map((n: Record<string, unknown>) => n.Name),
        ['cli-1'],
      );
      await openstack(['baremetal', 'node', 'set', 'cli-1', '--property', 'cpus=8', '--extra', 'rack=4', '--description', 'first']);
      const shown = await json(['baremetal', 'node', 'show', 'cli-1']);
      assert.deepEqual(shown.properties, { cpus: 8 });
      assert.deepEqual(shown.extra, { rack: 4 }); // the client parses values as JSON when they are
      await openstack(['baremetal', 'node', 'manage', 'cli-1', '--wait', '60']);
      await openstack(['baremetal', 'node', 'provide', 'cli-1', '--wait', '60']);
      await openstack(['baremetal', 'node', 'power', 'off', 'cli-1']);
      assert.equal((await nodeSettled(http(), 'cli-1')).power_state, 'power off');
      assert.equal((await http().put('/v1/nodes/cli-1/traits/CUSTOM_CLI')).status, 204);
      await openstack(['baremetal', 'node', 'deploy', 'cli-1', '--wait', '60']);
      assert.equal((await http().get('/v1/nodes/cli-1')).body.provision_state, 'active');
      await openstack(['baremetal', 'node', 'undeploy', 'cli-1', '--wait', '60']);
      assert.equal((await http().get('/v1/nodes/cli-1')).body.provision_state, 'available');
    });

    test('allocation create, list, show, set and delete; node delete', async () => {
      const created = await json(['baremetal', 'allocation', 'create', '--resource-class', 'cli', '--trait', 'CUSTOM_CLI', '--name', 'cli-a', '--wait', '60']);
      assert.equal(created.state, 'active');
      const node = (await http().get('/v1/nodes/cli-1')).body;
      assert.equal(created.node_uuid, node.uuid);
      assert.equal(node.allocation_uuid, created.uuid);
      // the main port serves the same API under /baremetal
      const listed = await json(['baremetal', 'allocation', 'list', '--state', 'active', '--node', 'cli-1'], `${server.url}/baremetal`);
      assert.deepEqual(
        listed.map((a: Record<string, unknown>) => a.Name),
        ['cli-a'],
      );
      await openstack(['baremetal', 'allocation', 'set', 'cli-a', '--name', 'cli-b', '--extra', 'k=v']);
      const shown = await json(['baremetal', 'allocation', 'show', 'cli-b']);
      assert.deepEqual(shown.extra, { k: 'v' });
      await openstack(['baremetal', 'allocation', 'delete', 'cli-b']);
      assert.deepEqual((await http().get('/v1/allocations')).body.allocations, []);
      assert.equal((await http().get('/v1/nodes/cli-1')).body.instance_uuid, null);
      await openstack(['baremetal', 'node', 'delete', 'cli-1']);
      assert.equal((await http().get('/v1/nodes/cli-1')).status, 404);
    });

    test('conductor list with --limit, --sort and --fields (paging parameters on /v1/conductors)', async () => {
      const listed = await json(['baremetal', 'conductor', 'list', '--limit', '1', '--sort', 'hostname:desc', '--fields', 'hostname', 'alive']);
      assert.deepEqual(listed, [{ Hostname: server.running.context.config.conductorId, Alive: true }]);
    });
  });
}
