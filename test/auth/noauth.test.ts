// The development mode (`--auth noauth`) over HTTP: requests addressed to a name that is not this
// machine are refused on every API (DNS rebinding), the Placement caller's roles come from the
// headers and go through the same policy engine as Keystone's, the switches change the answers,
// an operator's policy file is read, and noauth refuses an address other machines reach.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient, request } from '../helpers/http.js';
import { type TestServer, spawnServer, startServer } from '../helpers/server.js';

const run = promisify(execFile);
const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-noauth-'));

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One request with exactly these headers (fetch will not send a Host of our choosing). */
function raw(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      { method, headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const PLACEMENT = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', accept: 'application/json' };
const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };

after(() => rmSync(dir, { recursive: true, force: true }));

for (const dialect of DIALECTS) {
  describe(`noauth on ${dialect}`, () => {
    let server: TestServer;
    let port: string;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), allowedHosts: ['allot.internal'] });
      port = new URL(server.url).port;
    });
    after(() => server.close());

    test('a request addressed to another name is refused on every API, in its own format (DNS rebinding)', async () => {
      const evil = { host: `evil.example:${port}` };
      const placement = await raw(`${server.url}/placement/resource_providers`, 'GET', { ...PLACEMENT, ...evil });
      assert.equal(placement.status, 403);
      assert.equal(placement.body.errors[0].status, 403);
      assert.match(placement.body.errors[0].detail, /Host "evil\.example:\d+" is not allowed: without authentication/);
      const root = await raw(`${server.url}/placement/`, 'GET', { ...PLACEMENT, ...evil });
      assert.equal(root.status, 403, 'even the version document');
      const ironic = await raw(`${server.url}/baremetal/v1/nodes`, 'GET', { ...IRONIC, ...evil });
      assert.equal(ironic.status, 403);
      assert.match(JSON.parse(ironic.body.error_message).faultstring, /is not allowed: without authentication/);
      const ids = await raw(`${server.url}/ids/v1/pools`, 'GET', evil);
      assert.equal(ids.status, 403);
      assert.equal(ids.headers['content-type'], 'application/problem+json');
      assert.equal(ids.body.code, 'ids.forbidden');
      const write = await raw(`${server.url}/ids/v1/pools`, 'POST', evil, { name: 'rebound', kind: 'integer', ranges: ['1-10'] });
      assert.equal(write.status, 403);
      assert.equal((await request('GET', `${server.url}/ids/v1/pools/rebound`)).status, 404, 'nothing was written');
    });

    test("a page of another site cannot send requests through the browser's own connection (a POST without a body needs no preflight)", async () => {
      await request('POST', `${server.url}/ids/v1/pools`, { name: 'csrf', kind: 'integer', ranges: ['1-10'] });
      const before = (await request('GET', `${server.url}/ids/v1/pools/csrf`)).body.version;
      const local = { host: `127.0.0.1:${port}` };
      for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'null', 'file://']) {
        const res = await raw(`${server.url}/ids/v1/pools/csrf`, 'PATCH', { ...local, origin }, { description: 'x' });
        assert.equal(res.status, 403, origin);
        assert.match(res.body.detail, /is not allowed: without authentication/);
        const ironic = await raw(`${server.url}/baremetal/v1/nodes`, 'POST', { ...IRONIC, ...local, origin }, { resource_class: 'csrf' });
        assert.equal(ironic.status, 403, origin);
      }
      assert.equal((await request('GET', `${server.url}/ids/v1/pools/csrf`)).body.version, before, 'nothing was changed');
      // what changes nothing is answered, as Placement answers it (CORS decides whether the page may read it)
      assert.equal((await raw(`${server.url}/ids/v1/pools/csrf`, 'GET', { ...local, origin: 'https://evil.example' })).status, 200);
      // pages this machine serves (the dashboard), and those of an allowed name, are answered
      for (const origin of [`http://127.0.0.1:${port}`, 'http://localhost:3000', `http://allot.internal:${port}`]) {
        const res = await raw(`${server.url}/ids/v1/pools/csrf`, 'PATCH', { ...local, origin }, { description: origin });
        assert.equal(res.status, 200, origin);
      }
    });

    test('loopback names (any port, any case) and --allowed-hosts names are answered', async () => {
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', 'localhost.', `allot.internal:${port}`, 'Allot.Internal']) {
        const res = await raw(`${server.url}/placement/resource_providers`, 'GET', { ...PLACEMENT, host });
        assert.equal(res.status, 200, host);
      }
      assert.equal((await raw(`${server.url}/ids/v1/pools`, 'GET', { host: 'other.internal' })).status, 403);
      // a loopback name followed by anything but a port is no loopback Host
      for (const host of [`127.0.0.1:${port}@evil.example`, `localhost:${port}/x`, 'localhost:80:80', `[::1]:${port}x`])
        assert.equal((await raw(`${server.url}/ids/v1/pools`, 'GET', { host })).status, 403, host);
    });

    test('Placement: the roles in the headers go through the default rules (new defaults, scope enforced)', async () => {
      const api = new PlacementClient(server.placementUrl);
      const as = (roles: string, extra: Record<string, string> = {}) => ({
        headers: { 'x-auth-token': 'someone', 'x-roles': roles, 'x-project-id': 'p1', ...extra },
      });
      const denied = await api.get('/resource_providers', as('member,reader'));
      assert.equal(denied.status, 403);
      assert.match(denied.body.errors[0].detail, /Policy does not allow placement:resource_providers:list to be performed\./);
      assert.equal((await api.get('/resource_providers', as('service'))).status, 200);
      assert.equal((await api.get('/resource_providers', as('admin', { 'openstack-system-scope': 'all' }))).status, 403, 'system scope is not for Placement');
      assert.equal((await api.get('/usages?project_id=p1', as('reader'))).status, 200, "a reader sees its own project's usages");
      assert.equal((await api.get('/usages?project_id=p2', as('reader'))).status, 403, 'but not those of another project');
      const reshape = await api.post('/reshaper', { inventories: {}, allocations: {} });
      assert.equal(reshape.status, 403, 'reshaping is for services only');
      assert.notEqual((await api.post('/reshaper', { inventories: {}, allocations: {} }, { headers: { 'x-roles': 'service' } })).status, 403);
      assert.equal((await api.get('/resource_providers', { headers: { 'x-auth-token': '' } })).status, 401);
    });

    test('the bare-metal and identifier APIs treat every local caller as a system administrator', async () => {
      assert.equal((await request('GET', `${server.url}/baremetal/v1/nodes`, undefined, { headers: IRONIC })).status, 200);
      assert.equal((await request('POST', `${server.url}/ids/v1/pools`, { name: 'local', kind: 'integer', ranges: ['1-10'] })).status, 201);
    });
  });
}

describe('noauth: switches, policy file, refusals', () => {
  test('openstack --os-auth-type none is refused as by Placement, and the log says why, once', async () => {
    const server = await spawnServer(['--db', 'sqlite::memory:']);
    try {
      // keystoneauth's "none" plugin sends the token "notused": a caller with no role
      const osc = () =>
        run('openstack', ['--os-auth-type', 'none', '--os-endpoint', server.placementUrl, 'resource', 'provider', 'list'], {
          env: { ...process.env, OS_CLOUD: '' },
        }).then(
          () => assert.fail('the openstack CLI was answered'),
          (err: { code: number; stderr: string }) => err,
        );
      for (let i = 0; i < 2; i++) {
        const refused = await osc();
        assert.equal(refused.stderr.trim(), 'Policy does not allow placement:resource_providers:list to be performed. (HTTP 403)');
      }
      // the wire answer is Placement noauth2's
      const res = await request('GET', `${server.placementUrl}/resource_providers`, undefined, { headers: { 'x-auth-token': 'notused' } });
      assert.equal(res.status, 403);
      assert.equal(
        res.body.errors[0].detail,
        'Access was denied to this resource.\n\n Policy does not allow placement:resource_providers:list to be performed.  ',
      );
      const hints = server
        .output()
        .split('\n')
        .filter((line) => line.includes('noauth: refused'));
      assert.equal(hints.length, 1, server.output());
      const hint = JSON.parse(hints[0]!) as { level: number; msg: string; rule: string; user: string };
      assert.equal(hint.level, 40);
      assert.deepEqual([hint.rule, hint.user], ['placement:resource_providers:list', 'notused']);
      assert.match(hint.msg, /the token "admin" is an administrator \(openstack --os-auth-type admin_token --os-token admin/);
      assert.match(hint.msg, /x-roles header \(docs\/auth\.md\)/);
    } finally {
      await server.stop();
    }
  });

  test("--no-enforce-new-defaults: an admin may reshape again (Placement's legacy rule)", async () => {
    const server = await startServer({ db: 'sqlite::memory:', enforceNewDefaults: false });
    try {
      const res = await new PlacementClient(server.placementUrl).post('/reshaper', { inventories: {}, allocations: {} });
      assert.notEqual(res.status, 403, res.text);
    } finally {
      await server.close();
    }
  });

  test("an operator's policy file changes the answers", async () => {
    const file = path.join(dir, 'policy.yaml');
    writeFileSync(file, '"placement:resource_providers:list": "role:reader"\n"ids:pools:create": "!"\n');
    const server = await startServer({ db: 'sqlite::memory:', policyFile: file });
    try {
      const api = new PlacementClient(server.placementUrl);
      assert.equal((await api.get('/resource_providers', { headers: { 'x-auth-token': 'r', 'x-roles': 'reader' } })).status, 200);
      assert.equal((await api.post('/resource_providers', { name: 'x' }, { headers: { 'x-auth-token': 'r', 'x-roles': 'reader' } })).status, 403);
      const pool = await request('POST', `${server.url}/ids/v1/pools`, { name: 'nobody', kind: 'integer', ranges: ['1-10'] });
      assert.equal(pool.status, 403);
      assert.equal(pool.body.rule, 'ids:pools:create');
    } finally {
      await server.close();
    }
  });

  test('allot serve refuses noauth on a non-loopback address, and a policy file with a mistake, saying why', async () => {
    await assert.rejects(
      run(process.execPath, [cli, 'serve', '--db', 'sqlite::memory:', '--host', '0.0.0.0', '--port', '0']),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /refusing to listen on 0\.0\.0\.0 without authentication.*--insecure-noauth/);
        return true;
      },
    );
    const file = path.join(dir, 'typo.yaml');
    writeFileSync(file, '"placement:resource_provider:list": "role:admin"\n');
    await assert.rejects(
      run(process.execPath, [cli, 'serve', '--db', 'sqlite::memory:', '--port', '0', '--policy-file', file]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /typo\.yaml: policy rule "placement:resource_provider:list" is not a rule of placement, baremetal, ids/);
        return true;
      },
    );
    await assert.rejects(run(process.execPath, [cli, 'serve', '--enforce-scope', 'maybe']), /error: too many arguments|unknown|maybe/);
    await assert.rejects(
      run(process.execPath, [cli, 'serve', '--db', 'sqlite::memory:', '--port', '0'], { env: { ...process.env, ALLOT_ENFORCE_SCOPE: 'maybe' } }),
      /enforce scope must be true or false/,
    );
  });

  test('an origin in --cors-allowed-origins may call in noauth too', async () => {
    const server = await startServer({ db: 'sqlite::memory:', corsAllowedOrigins: ['https://dash.example.com'] });
    try {
      const host = { host: new URL(server.url).host };
      const ok = await raw(
        `${server.url}/ids/v1/pools`,
        'POST',
        { ...host, origin: 'https://dash.example.com' },
        { name: 'cors', kind: 'integer', ranges: ['1-2'] },
      );
      assert.equal(ok.status, 201);
      assert.equal(ok.headers['access-control-allow-origin'], 'https://dash.example.com');
      const other = await raw(
        `${server.url}/ids/v1/pools`,
        'POST',
        { ...host, origin: 'https://other.example.com' },
        { name: 'cors2', kind: 'integer', ranges: ['1-2'] },
      );
      assert.equal(other.status, 403);
    } finally {
      await server.close();
    }
  });

  test('--insecure-noauth starts on 0.0.0.0 and still answers only loopback and allowed names', async () => {
    const server = await startServer({ db: 'sqlite::memory:', host: '0.0.0.0', insecureNoauth: true });
    try {
      const port = new URL(server.url).port;
      assert.equal((await raw(`http://127.0.0.1:${port}/ids/v1/pools`, 'GET', { host: `127.0.0.1:${port}` })).status, 200);
      assert.equal((await raw(`http://127.0.0.1:${port}/ids/v1/pools`, 'GET', { host: `allot.example:${port}` })).status, 403);
    } finally {
      await server.close();
    }
  });
});
