// The client commands of `allot` (the built dist/, as a user runs it) against a real server on
// SQLite and PostgreSQL: every API's resources, output formats, one-line errors, and the exit
// codes the README documents.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { cliCommands, runCli } from '../helpers/cli.js';
import { DIALECTS } from '../helpers/databases.js';
import { type TestServer, serverFor } from '../helpers/server.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-cli-cmd-'));

for (const dialect of DIALECTS) {
  describe(`allot client commands (${dialect})`, () => {
    let server: TestServer;
    serverFor(dialect, (s) => (server = s));
    const { allot, fails } = cliCommands(() => server.url);

    test('placement: providers, inventories, traits, aggregates, allocations, candidates, usages', async () => {
      const rp = await allot('placement', 'provider', 'create', 'cn1');
      assert.equal(rp.generation, 0);
      assert.deepEqual(
        (await allot('placement', 'provider', 'list', '--name', 'cn1')).map((p: { uuid: string }) => p.uuid),
        [rp.uuid],
      );
      await allot('placement', 'inventory', 'set', rp.uuid, 'VCPU', '--total', '16', '--reserved', '2');
      const inv = await allot('placement', 'inventory', 'set', rp.uuid, 'MEMORY_MB', '--total', '4096');
      assert.deepEqual(Object.keys(inv.inventories).sort(), ['MEMORY_MB', 'VCPU'], 'setting one class keeps the others');
      assert.equal(inv.inventories.VCPU.reserved, 2);
      assert.equal(
        (await allot('placement', 'inventory', 'set', rp.uuid, 'VCPU', '--allocation-ratio', '2')).inventories.VCPU.total,
        16,
        'a change keeps unnamed fields',
      );

      await allot('placement', 'trait', 'create', 'CUSTOM_GOLD');
      assert.deepEqual((await allot('placement', 'provider-trait', 'add', rp.uuid, 'CUSTOM_GOLD', 'HW_CPU_X86_AVX2')).traits.sort(), [
        'CUSTOM_GOLD',
        'HW_CPU_X86_AVX2',
      ]);
      assert.deepEqual((await allot('placement', 'provider-trait', 'remove', rp.uuid, 'HW_CPU_X86_AVX2')).traits, ['CUSTOM_GOLD']);
      const agg = '11111111-2222-4333-8444-555555555555';
      assert.deepEqual((await allot('placement', 'aggregate', 'add', rp.uuid, agg)).aggregates, [agg]);
      await allot('placement', 'resource-class', 'create', 'CUSTOM_FPGA');
      assert.ok((await allot('placement', 'resource-class', 'list')).some((c: { name: string }) => c.name === 'CUSTOM_FPGA'));

      const candidates = await allot(
        'placement',
        'candidates',
        '--resources',
        'VCPU:2,MEMORY_MB:512',
        '--required',
        'CUSTOM_GOLD',
        '--member-of',
        `in:${agg}`,
        '--limit',
        '3',
      );
      assert.equal(candidates.allocation_requests.length, 1);
      const consumer = '6a9e7f41-6f1e-4a5c-9a0f-0d5a2f0c9b11';
      const set = await allot(
        'placement',
        'allocation',
        'set',
        consumer,
        '--allocation',
        `rp=${rp.uuid},VCPU=2,MEMORY_MB=512`,
        '--project',
        'p1',
        '--user',
        'u1',
      );
      assert.deepEqual(set.allocations[rp.uuid].resources, { VCPU: 2, MEMORY_MB: 512 });
      // setting again moves the consumer generation on: the command reads it first
      assert.equal(
        (await allot('placement', 'allocation', 'set', consumer, '--allocation', `rp=${rp.uuid},VCPU=4`, '--project', 'p1', '--user', 'u1'))
          .consumer_generation,
        2,
      );
      assert.deepEqual((await allot('placement', 'allocation', 'list', rp.uuid)).allocations[consumer].resources, { VCPU: 4 });
      assert.deepEqual((await allot('placement', 'usage', 'show', rp.uuid)).usages, { VCPU: 4, MEMORY_MB: 0 });
      assert.equal((await allot('placement', 'usage', 'total', '--project', 'p1')).usages.INSTANCE.VCPU, 4);

      const inUse = await fails(5, 'placement', 'provider', 'delete', rp.uuid);
      assert.match(inUse, /^allot: .*Resource provider has allocations\. \(HTTP 409 placement\.resource_provider\.inuse, request req-[0-9a-f-]+\)\n$/);
      await allot('placement', 'allocation', 'delete', consumer);
      assert.equal(await allot('placement', 'provider', 'delete', rp.uuid), null, 'json output of a delete is empty');
      const missing = await fails(4, 'placement', 'provider', 'show', rp.uuid);
      assert.equal(missing.split('\n').filter(Boolean).length, 1, 'one line, no stack');
      assert.doesNotMatch(missing, /\n\s+at /);
    });

    test('output: table on request, yaml parses, json by default when stdout is not a terminal', async () => {
      await allot('placement', 'provider', 'create', 'cn-out');
      const table = await runCli(server.url, ['placement', 'provider', 'list', '--output', 'table']);
      const [header, rule, ...rows] = table.stdout.trimEnd().split('\n');
      assert.match(header!, /^uuid\s+name\s+generation\s+parent_provider_uuid\s+root_provider_uuid$/);
      assert.match(rule!, /^-+\s+-+/);
      assert.ok(rows.some((r) => /\bcn-out\b/.test(r)));
      const yaml = await runCli(server.url, ['placement', 'provider', 'list', '-o', 'yaml']);
      assert.ok((parseYaml(yaml.stdout) as Array<{ name: string }>).some((p) => p.name === 'cn-out'));
      const env = await runCli(server.url, ['placement', 'provider', 'list'], { ALLOT_OUTPUT: 'yaml' });
      assert.deepEqual(parseYaml(env.stdout), parseYaml(yaml.stdout), 'ALLOT_OUTPUT chooses the format');
    });

    test('baremetal: nodes through their states, traits, maintenance; allocations waited for', async () => {
      const node = await allot('baremetal', 'node', 'create', '--name', 'n1', '--resource-class', 'bm-cli', '--property', 'cpus=8', '--extra', 'rack=r1');
      assert.deepEqual([node.properties, node.extra], [{ cpus: 8 }, { rack: 'r1' }]);
      assert.equal((await allot('baremetal', 'node', 'manage', 'n1', '--wait', '60')).provision_state, 'manageable');
      assert.equal((await allot('baremetal', 'node', 'provide', 'n1', '--wait', '60')).provision_state, 'available');
      assert.equal((await allot('baremetal', 'node', 'power', 'off', 'n1', '--wait', '60')).power_state, 'power off');
      assert.deepEqual(await allot('baremetal', 'node', 'trait', 'add', 'n1', 'CUSTOM_CLI'), ['CUSTOM_CLI']);
      assert.equal((await allot('baremetal', 'node', 'set', 'n1', '--description', 'racked')).description, 'racked');
      assert.deepEqual((await allot('baremetal', 'node', 'unset', 'n1', '--extra', 'rack')).extra, {});
      await allot('baremetal', 'node', 'maintenance', 'set', 'n1', '--reason', 'check');
      assert.deepEqual(
        (await allot('baremetal', 'node', 'list', '--maintenance')).map((n: { name: string }) => n.name),
        ['n1'],
      );
      await allot('baremetal', 'node', 'maintenance', 'unset', 'n1');

      const active = await allot('baremetal', 'allocation', 'create', '--resource-class', 'bm-cli', '--trait', 'CUSTOM_CLI', '--name', 'a1', '--wait', '60');
      assert.deepEqual([active.state, active.node_uuid], ['active', node.uuid]);
      assert.equal((await allot('baremetal', 'allocation', 'set', 'a1', '--extra', 'ticket=T-9')).extra.ticket, 'T-9');
      assert.equal((await allot('baremetal', 'allocation', 'list', '--state', 'active')).length, 1);
      await allot('baremetal', 'allocation', 'delete', 'a1');
      assert.equal((await allot('baremetal', 'node', 'show', 'n1')).allocation_uuid, null);

      // an allocation nothing matches: printed, then exit 6 with its last_error
      const failed = await runCli(server.url, ['baremetal', 'allocation', 'create', '--resource-class', 'bm-none', '--wait', '60']);
      assert.equal(failed.code, 6, failed.stderr);
      assert.equal(JSON.parse(failed.stdout).state, 'error');
      assert.match(failed.stderr, /^allot: allocation .* failed: .*bm-none/);

      const missing = await fails(4, 'baremetal', 'node', 'show', 'no-such-node');
      assert.match(missing, /^allot: Node no-such-node could not be found\. \(HTTP 404 Client, request req-/);
    });

    test('ids: a large batch in requests of 100 and a chunked import; conflicts exit 5', async () => {
      await allot('ids', 'pools', 'create', 'vni', '--kind', 'integer', '--range', '1-100000');
      const batchFile = path.join(dir, `batch-${dialect}.json`);
      writeFileSync(batchFile, JSON.stringify(Array.from({ length: 250 }, (_, i) => ({ pool: 'vni', owner: `wire-${i}` }))));
      const batch = await runCli(server.url, ['ids', 'allocations', 'batch', batchFile]);
      assert.equal(batch.code, 0, batch.stderr);
      assert.equal(batch.stderr, '', 'no progress bar when stderr is not a terminal');
      const values = (JSON.parse(batch.stdout) as Array<{ value: number }>).map((a) => a.value);
      assert.equal(new Set(values).size, 250);

      const importFile = path.join(dir, `import-${dialect}.json`);
      writeFileSync(
        importFile,
        JSON.stringify(
          Array.from({ length: 1200 }, (_, i) => ({ value: 50_000 + i, owner: `legacy-${i}` })).concat([{ value: values[0]!, owner: 'intruder' }]),
        ),
      );
      const aborted = await fails(5, 'ids', 'pools', 'import', 'vni', importFile);
      assert.match(aborted, /ids\.import_conflicts/);
      assert.equal((await allot('ids', 'pools', 'show', 'vni')).utilization.allocations, 250, 'an aborted import imports nothing');
      const skipped = await allot('ids', 'pools', 'import', 'vni', importFile, '--skip-conflicts', '--batch-size', '500');
      assert.deepEqual([skipped.imported, skipped.conflicts.length, skipped.conflicts[0].index], [1200, 1, 1200]);
      assert.equal((await allot('ids', 'pools', 'show', 'vni')).utilization.allocations, 1450);

      // a large batch stops at the first request that fails; what earlier requests took is printed
      const stopFile = path.join(dir, `batch-stop-${dialect}.json`);
      const stopItems: Array<Record<string, unknown>> = Array.from({ length: 250 }, (_, i) => ({ pool: 'vni', owner: `late-${i}` }));
      stopItems[150] = { pool: 'vni', owner: 'late-150', value: values[0] }; // held by wire-0
      writeFileSync(stopFile, JSON.stringify(stopItems));
      const stopped = await runCli(server.url, ['ids', 'allocations', 'batch', stopFile]);
      assert.equal(stopped.code, 5, stopped.stderr);
      assert.equal((JSON.parse(stopped.stdout) as unknown[]).length, 100);
      assert.match(
        stopped.stderr,
        /^allot: .*held by owner "wire-0" \(item 150 of the file; the 100 allocated before stay allocated\) \(HTTP 409 ids\.value_in_use, request /,
      );
      assert.equal((await allot('ids', 'allocations', 'list', '--owner', 'late-0')).length, 1);
      assert.equal((await allot('ids', 'allocations', 'list', '--owner', 'late-100')).length, 0, 'the failing request took nothing');
    });

    test('usage errors exit 2 before anything is sent; an unreachable server exits 3', async () => {
      assert.match(await fails(2, 'placement', 'provider', 'lst'), /unknown command 'lst'/);
      assert.match(await fails(2, 'placement', 'inventory', 'set', 'x', 'VCPU', '--total', 'many'), /--total/);
      assert.match(await fails(2, 'placement', 'allocation', 'set', 'c', '--allocation', 'VCPU=1', '--project', 'p', '--user', 'u'), /names no provider/);
      assert.match(await fails(2, 'placement', 'provider', 'list', '--url', 'ftp://x'), /--url must be an http\(s\) URL/);
      assert.match(await fails(2, 'ids', 'specs', 'create', path.join(dir, 'missing.json')), /cannot read .*ENOENT/);
      // an integer JSON would round is not sent rounded
      const inexact = path.join(dir, 'inexact.json');
      writeFileSync(inexact, '[{"value": 1, "owner": "o", "metadata": {"n": 9007199254740993}}]');
      assert.match(await fails(2, 'ids', 'pools', 'import', 'vni', inexact), /inexact\.json holds an integer beyond ±9007199254740991/);
      assert.match(
        await fails(2, 'baremetal', 'node', 'create', '--resource-class', 'bm-cli', '--property', 'disk=99999999999999999999'),
        /--property disk: 99999999999999999999 holds an integer beyond/,
      );
      const noPassword = await runCli(server.url, ['placement', 'provider', 'list'], { OS_AUTH_URL: 'http://127.0.0.1:1/v3', OS_USERNAME: 'u' });
      assert.equal(noPassword.code, 2);
      assert.match(noPassword.stderr, /needs --os-password \/ OS_PASSWORD/);
      const down = await runCli('http://127.0.0.1:1', ['placement', 'provider', 'list']);
      assert.equal(down.code, 3);
      assert.match(down.stderr, /^allot: cannot reach http:\/\/127\.0\.0\.1:1\/placement\/.*\(client\.unreachable\)\n$/);
      const keystoneDown = await runCli(server.url, ['ids', 'pools', 'list'], { OS_AUTH_URL: 'http://127.0.0.1:1/v3', OS_USERNAME: 'u', OS_PASSWORD: 'p' });
      assert.equal(keystoneDown.code, 3);
      assert.match(keystoneDown.stderr, /cannot reach Keystone at http:\/\/127\.0\.0\.1:1\/v3\/auth\/tokens/);
    });
  });
}
