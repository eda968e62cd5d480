// The real `openstack` CLI (python3-osc-placement) against allot, as an operator would use it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';

const exec = promisify(execFile);

describe('openstack CLI (osc-placement) against allot', () => {
  let server: TestServer;
  /** run a command; commands that print a table print it as JSON */
  let osc: (...args: string[]) => Promise<any>;
  /** run a command that prints nothing */
  let oscQuiet: (...args: string[]) => Promise<void>;
  before(async () => {
    server = await startServer({ db: await freshDatabaseUrl('sqlite') });
    const run = (args: string[]) =>
      exec(
        'openstack',
        ['--os-auth-type', 'admin_token', '--os-token', 'admin', '--os-endpoint', server.placementUrl, '--os-placement-api-version', '1.39', ...args],
        {
          env: { ...process.env, OS_CLOUD: '' },
        },
      );
    osc = async (...args) => JSON.parse((await run([...args, '-f', 'json'])).stdout);
    oscQuiet = async (...args) => {
      await run(args);
    };
  });
  after(() => server.close());

  test('providers, inventories, traits, classes, allocations and usages', async () => {
    const created = await osc('resource', 'provider', 'create', 'cn1');
    assert.equal(created.name, 'cn1');
    const rp = created.uuid as string;
    const listed = await osc('resource', 'provider', 'list');
    assert.deepEqual(
      listed.map((p: { uuid: string }) => p.uuid),
      [rp],
    );
    assert.equal((await osc('resource', 'provider', 'show', rp)).generation, 0);

    await osc('resource', 'provider', 'inventory', 'set', rp, '--resource', 'VCPU=16', '--resource', 'VCPU:reserved=2', '--resource', 'MEMORY_MB=4096');
    const inventory = await osc('resource', 'provider', 'inventory', 'list', rp);
    const vcpu = inventory.find((i: { resource_class: string }) => i.resource_class === 'VCPU');
    assert.equal(vcpu.total, 16);
    assert.equal(vcpu.reserved, 2);

    const traits = await osc('resource', 'provider', 'trait', 'set', rp, '--trait', 'HW_CPU_X86_AVX2', '--trait', 'STORAGE_DISK_SSD');
    assert.deepEqual(traits.map((t: { name: string }) => t.name).sort(), ['HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD']);

    await oscQuiet('resource', 'class', 'create', 'CUSTOM_GPU_A100');
    const classes = await osc('resource', 'class', 'list');
    assert.ok(classes.some((c: { name: string }) => c.name === 'CUSTOM_GPU_A100'));

    const consumer = randomUUID();
    const set = await osc(
      'resource',
      'provider',
      'allocation',
      'set',
      consumer,
      '--allocation',
      `rp=${rp},VCPU=2,MEMORY_MB=512`,
      '--project-id',
      'p1',
      '--user-id',
      'u1',
      '--consumer-type',
      'INSTANCE',
    );
    assert.deepEqual(set[0].resources, { VCPU: 2, MEMORY_MB: 512 });
    const shown = await osc('resource', 'provider', 'allocation', 'show', consumer);
    assert.equal(shown[0].resource_provider, rp);
    assert.equal(shown[0].consumer_type, 'INSTANCE');

    const usage = await osc('resource', 'provider', 'usage', 'show', rp);
    assert.deepEqual(Object.fromEntries(usage.map((u: { resource_class: string; usage: number }) => [u.resource_class, u.usage])), { VCPU: 2, MEMORY_MB: 512 });

    await osc('resource', 'provider', 'allocation', 'unset', consumer, '--provider', rp);
    assert.deepEqual(await osc('resource', 'provider', 'allocation', 'show', consumer), []);
    const after = await osc('resource', 'provider', 'usage', 'show', rp);
    assert.ok(after.every((u: { usage: number }) => u.usage === 0));
  });
});
