// The `allot` command as users run it: serve (free port, graceful SIGTERM, the drain of
// --shutdown-delay), migrate (also by several processes at once), and refusal of bad options.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { after, describe, test } from 'node:test';
import { request } from './helpers/http.js';
import { spawnServer } from './helpers/server.js';

const run = promisify(execFile);
const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli/main.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-cli-'));

describe('allot command', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('serve picks a free port with --port 0, says where, and stops cleanly on SIGTERM', async () => {
    const server = await spawnServer(['--db', `sqlite:${path.join(dir, 'serve.db')}`, '--placement-port', '0']);
    const index = await request('GET', `${server.url}/`);
    assert.equal(index.status, 200);
    assert.deepEqual(index.body.apis.placement, '/placement');
    assert.deepEqual((await request('GET', `${server.url}/healthz`)).body, { status: 'ok' });
    // health checkers that send HEAD get the GET's status
    for (const probe of ['/healthz', '/readyz', '/metrics']) assert.equal((await fetch(`${server.url}${probe}`, { method: 'HEAD' })).status, 200, probe);
    const root = await request('GET', `${server.placementUrl}/`);
    assert.equal(root.body.versions[0].max_version, '1.39');
    assert.match(server.output(), /placement listening on http:\/\/127\.0\.0\.1:\d+\//);
    // each listener says where it listens once (the framework's own "Server listening at" is not repeated)
    assert.deepEqual(
      server
        .output()
        .split('\n')
        .filter((line) => /listening/i.test(line))
        .map((line) => (JSON.parse(line) as { msg: string }).msg.split(' ')[0]),
      ['main', 'placement'],
    );
    assert.equal(await server.stop(), 0);
    assert.match(server.output(), /allot stopped/);
  });

  test('a port another listener has, or another process holds, stops the start naming the option and the port', async () => {
    const refused = (args: string[]) =>
      run(process.execPath, [cli, 'serve', '--db', 'sqlite::memory:', ...args]).then(
        () => assert.fail(`allot serve ${args.join(' ')} started`),
        (err: { code: number; stderr: string }) => err,
      );
    const same = await refused(['--port', '18779', '--placement-port', '18779']);
    assert.equal(same.code, 1);
    assert.match(same.stderr, /^allot: cannot start: --placement-port 18779 is also --port: every listener needs a port of its own/);
    const both = await refused(['--port', '0', '--placement-port', '18780', '--baremetal-port', '18780']);
    assert.match(both.stderr, /--baremetal-port 18780 is also --placement-port/);

    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const held = (holder.address() as net.AddressInfo).port;
    try {
      for (const option of ['--port', '--baremetal-port']) {
        const args = option === '--port' ? ['--port', String(held)] : ['--port', '0', option, String(held)];
        const inUse = await refused(args);
        assert.equal(inUse.code, 1);
        assert.ok(
          inUse.stderr.includes(
            `allot: cannot start: cannot listen on 127.0.0.1:${held} (${option}): another process is using the port; stop it, or choose another port with ${option}`,
          ),
          inUse.stderr,
        );
      }
    } finally {
      holder.close();
    }
  });

  test('SIGTERM finishes a request whose body is still arriving; a client that leaves mid-body is no 5xx and no database fault', async () => {
    const server = await spawnServer(['--db', `sqlite:${path.join(dir, 'drain.db')}`]);
    const { port } = new URL(server.url);
    const body = JSON.stringify({ name: 'drained', kind: 'integer', ranges: ['1-9'] });
    const head = `POST /ids/v1/pools HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;

    // a client that sends half its body and goes away
    const leaver = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => leaver.once('connect', r));
    leaver.write(head + body.slice(0, 10));
    await sleep(200);
    leaver.destroy();
    await sleep(300);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.doesNotMatch(metrics, /allot_http_requests_total\{[^}]*api="ids"[^}]*status_class="5xx"/, metrics);
    assert.doesNotMatch(server.output(), /database fault/);

    // a request whose head came before SIGTERM, its body after: answered, and the connection closed
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    const closed = new Promise((r) => socket.once('close', r));
    socket.write(head + body.slice(0, 10));
    await sleep(200);
    const stopped = server.stop();
    await sleep(500);
    socket.write(body.slice(10));
    await closed;
    assert.match(answer, /^HTTP\/1\.1 201 /, answer);
    assert.match(answer, /\r\nconnection: close\r\n/i, answer);
    const started = Date.now();
    assert.equal(await stopped, 0);
    assert.ok(Date.now() - started < 3_000, 'no keep-alive holds the exit back');
    // a request that arrives once it is stopping is refused as allot's, not the database's
    assert.doesNotMatch(server.output(), /"status":5\d\d/);
  });

  test('--shutdown-delay: after SIGTERM requests are served, with Connection: close, while /readyz is 503; then the listener closes and it exits 0', async () => {
    const server = await spawnServer(['--db', `sqlite:${path.join(dir, 'delay.db')}`, '--shutdown-delay', '2']);
    const sigterm = Date.now();
    const stopped = server.stop();
    await sleep(300);
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(await ready.text(), /draining/);
    const served = await fetch(`${server.url}/ids/v1/pools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'while-draining', kind: 'integer', ranges: ['1-9'] }),
    });
    assert.equal(served.status, 201, await served.text());
    assert.equal(served.headers.get('connection'), 'close');
    assert.equal(await stopped, 0);
    assert.ok(Date.now() - sigterm >= 2_000, 'it served for the whole delay');
    assert.match(server.output(), /draining/);
    await assert.rejects(fetch(`${server.url}/readyz`), 'the listener is closed');
  });

  test('migrate creates the schema once, even when several processes run it at the same time', async () => {
    const db = `sqlite:${path.join(dir, 'migrate.db')}`;
    const results = await Promise.all([1, 2, 3, 4].map(() => run(process.execPath, [cli, 'migrate', '--db', db])));
    const outputs = results.map((r) => r.stdout.trim()).sort();
    assert.equal(outputs.filter((o) => o.startsWith('applied:')).length, 1, outputs.join('\n'));
    assert.equal(outputs.filter((o) => o === 'schema is up to date').length, 3, outputs.join('\n'));
    const again = await run(process.execPath, [cli, 'migrate', '--db', db]);
    assert.equal(again.stdout.trim(), 'schema is up to date');
  });

  test('an invalid option value is refused with a message and exit code 2', async () => {
    await assert.rejects(run(process.execPath, [cli, 'serve', '--port', 'eighty']), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 2);
      assert.match(err.stderr, /port must be an integer/);
      return true;
    });
    await assert.rejects(run(process.execPath, [cli, 'migrate', '--db', 'mysql://x']), /unsupported database URL/);
  });

  test('options also come from the environment', async () => {
    const server = await spawnServer([], { ALLOT_DB: `sqlite:${path.join(dir, 'env.db')}`, ALLOT_LOG_LEVEL: 'info' });
    assert.match(server.output(), new RegExp(`sqlite:${path.join(dir, 'env.db').replace(/[.]/g, '\\.')}`));
    assert.equal(await server.stop(), 0);
  });
});

describe('CORS', () => {
  test('only configured origins get CORS headers; preflights are answered before routing', async () => {
    // configured in upper case with the default port written out; browsers send lower case without it
    const server = await spawnServer(['--db', 'sqlite::memory:', '--cors-allowed-origins', 'HTTPS://Dash.Example.com:443, https://other.example.com']);
    try {
      const preflight = await request('OPTIONS', `${server.placementUrl}/resource_providers`, undefined, {
        headers: {
          origin: 'https://dash.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'openstack-api-version, x-auth-token',
        },
      });
      assert.equal(preflight.status, 200);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://dash.example.com');
      assert.equal(preflight.headers.get('access-control-allow-headers'), 'openstack-api-version, x-auth-token');
      const stranger = await request('OPTIONS', `${server.placementUrl}/resource_providers`, undefined, {
        headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
      });
      assert.equal(stranger.headers.get('access-control-allow-origin'), null);
      // another port, or another scheme, is another origin
      for (const other of ['https://dash.example.com:8443', 'http://dash.example.com']) {
        const near = await request('OPTIONS', `${server.placementUrl}/resource_providers`, undefined, {
          headers: { origin: other, 'access-control-request-method': 'POST' },
        });
        assert.equal(near.headers.get('access-control-allow-origin'), null, other);
      }
      const get = await request('GET', `${server.placementUrl}/`, undefined, { headers: { origin: 'https://other.example.com' } });
      assert.equal(get.headers.get('access-control-allow-origin'), 'https://other.example.com');
      assert.match(get.headers.get('vary') ?? '', /origin/);
      assert.match(get.headers.get('vary') ?? '', /openstack-api-version/);
    } finally {
      await server.stop();
    }
  });
});
