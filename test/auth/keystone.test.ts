// allot with `--auth keystone` against a real Keystone (test/helpers/keystone.ts): real tokens
// accepted, expired/revoked/garbage/missing ones refused with 401 and `WWW-Authenticate` in each
// API's format, each role's access on the three APIs, the validation cache (one Keystone request
// per token, shared by concurrent first uses; a revoked token refused once its entry ages out),
// Keystone unreachable or silent → 503 and back, allot's own password never in its log, and the real
// `openstack` CLI and openstacksdk going through Keystone's catalog with passwords.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type HttpResponse, request } from '../helpers/http.js';
import { type RealKeystone, realKeystone } from '../helpers/keystone.js';
import { type TestServer, spawnServer, startServer } from '../helpers/server.js';

const exec = promisify(execFile);

type Api = 'placement' | 'baremetal' | 'ids';
const PERSONAS = ['admin', 'sys-admin', 'p1-member', 'p1-reader', 'nova'] as const;
type Persona = (typeof PERSONAS)[number];

let ks: RealKeystone & { stop(): Promise<void> };
const tokens = {} as Record<Persona | 'p2-member', string>;

function call(server: TestServer, api: Api, method: string, path: string, token?: string, body?: unknown): Promise<HttpResponse> {
  const headers: Record<string, string> = token === undefined ? {} : { 'x-auth-token': token };
  if (api === 'placement') headers['openstack-api-version'] = 'placement 1.39';
  if (api === 'baremetal') headers['x-openstack-ironic-api-version'] = '1.82';
  return request(method, `${server.url}/${api}${path}`, body, { headers });
}

/** The status and the API's own error shape, for one refusal. */
function assertRefused(api: Api, res: HttpResponse, status: 401 | 403 | 503, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.text}`);
  if (api === 'placement') assert.equal(res.body.errors[0].status, status, what);
  if (api === 'baremetal') assert.equal(typeof JSON.parse(res.body.error_message).faultstring, 'string', what);
  if (api === 'ids') {
    assert.equal(res.headers.get('content-type'), 'application/problem+json', what);
    assert.equal(res.body.code, { 401: 'ids.unauthorized', 403: 'ids.forbidden', 503: 'ids.identity_unavailable' }[status], what);
  }
}

before(async () => {
  ks = await realKeystone();
  for (const user of [...PERSONAS, 'p2-member'] as const) tokens[user] = await ks.token(user);
});
after(() => ks?.stop());

for (const dialect of DIALECTS) {
  describe(`Keystone tokens on ${dialect}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), ...ks.allotConfig() });
    });
    after(() => server.close());

    test('a real token is accepted on every API; version documents need none', async () => {
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', tokens.admin)).status, 200);
      assert.equal((await call(server, 'baremetal', 'GET', '/v1/nodes', tokens['sys-admin'])).status, 200);
      assert.equal((await call(server, 'ids', 'GET', '/v1/pools', tokens['p1-reader'])).status, 200);
      assert.equal((await call(server, 'placement', 'GET', '/')).status, 200);
      assert.equal((await call(server, 'baremetal', 'GET', '/')).status, 200);
      assert.equal((await call(server, 'baremetal', 'GET', '/v1')).status, 200);
      assert.equal((await call(server, 'ids', 'GET', '/v1')).status, 200);
      assert.equal((await call(server, 'ids', 'GET', '/v1/openapi.json')).status, 200);
    });

    test('/metrics: an admin token scrapes; a member or reader is 403, no token 401; the OpenAPI documents are public', async () => {
      const scrape = (token?: string) => request('GET', `${server.url}/metrics`, undefined, { headers: token === undefined ? {} : { 'x-auth-token': token } });
      const admin = await scrape(tokens.admin);
      assert.equal(admin.status, 200, admin.text);
      assert.match(admin.text, /# TYPE allot_http_requests_total counter/);
      assert.equal((await scrape()).status, 401);
      assert.equal((await scrape('garbage')).status, 401);
      for (const p of ['p1-member', 'p1-reader'] as const) {
        const refused = await scrape(tokens[p]);
        assert.equal(refused.status, 403, p);
        assert.match(refused.body.error, /admin role/);
      }
      assert.equal((await call(server, 'placement', 'GET', '/openapi.json')).status, 200);
      assert.equal((await call(server, 'baremetal', 'GET', '/openapi.json')).status, 200);
    });

    test("no, expired, revoked or garbage tokens: 401 with WWW-Authenticate, in each API's format", async () => {
      const challenge = `Keystone uri="${ks.url.replace(/\/v3$/, '')}"`;
      const cases: Array<[string, string | undefined]> = [
        ['no token', undefined],
        ['an expired token', ks.expiredToken],
        ['a revoked token', ks.revokedToken],
        ['a garbage token', 'gAAAAABnot-a-real-fernet-token'],
        ['a token with spaces', 'not a token'],
      ];
      const paths: Record<Api, string> = { placement: '/resource_providers', baremetal: '/v1/nodes', ids: '/v1/pools' };
      for (const [what, token] of cases) {
        for (const api of ['placement', 'baremetal', 'ids'] as const) {
          const res = await call(server, api, 'GET', paths[api], token);
          assertRefused(api, res, 401, `${what} on ${api}`);
          assert.equal(res.headers.get('www-authenticate'), challenge, `${what} on ${api}`);
        }
      }
    });

    /** Which personas an operation is allowed for (allowed: anything but 401/403). */
    async function allowedFor(api: Api, method: string, path: (p: Persona) => string, body?: (p: Persona) => unknown): Promise<Persona[]> {
      const out: Persona[] = [];
      for (const p of PERSONAS) {
        const res = await call(server, api, method, path(p), tokens[p], body?.(p));
        assert.notEqual(res.status, 401, `${p} ${method} ${path(p)}`);
        if (res.status === 403) assertRefused(api, res, 403, `${p} ${method} ${path(p)}`);
        else out.push(p);
      }
      return out;
    }

    test('Placement: admins and services in a project; a project reader its own usages; system scope nothing', async () => {
      const p1 = ks.projects.p1!;
      const p2 = ks.projects.p2!;
      assert.deepEqual(await allowedFor('placement', 'GET', () => '/resource_providers'), ['admin', 'nova']);
      assert.deepEqual(
        await allowedFor(
          'placement',
          'POST',
          () => '/resource_providers',
          (p) => ({ name: `rp-${p}-${dialect}` }),
        ),
        ['admin', 'nova'],
      );
      assert.deepEqual(await allowedFor('placement', 'GET', () => '/allocation_candidates?resources=VCPU:1'), ['admin', 'nova']);
      assert.deepEqual(await allowedFor('placement', 'GET', () => '/resource_classes'), ['admin', 'nova']);
      assert.deepEqual(await allowedFor('placement', 'GET', () => `/usages?project_id=${p1}`), ['admin', 'p1-member', 'p1-reader', 'nova']);
      assert.deepEqual(await allowedFor('placement', 'GET', () => `/usages?project_id=${p2}`), ['admin', 'nova']);
      assert.deepEqual(
        await allowedFor(
          'placement',
          'POST',
          () => '/reshaper',
          () => ({ inventories: {}, allocations: {} }),
        ),
        ['nova'],
      );
    });

    test("bare-metal: a node nobody owns, its allocations and the conductors are the system scope's (owner/lessee scoping: keystone-scoping.test.ts)", async () => {
      const created = await call(server, 'baremetal', 'POST', '/v1/nodes', tokens['sys-admin'], {
        driver: 'fake-hardware',
        name: `node-${dialect}`,
        resource_class: 'bm',
      });
      assert.equal(created.status, 201, created.text);
      const node = created.body.uuid as string;
      const sysOnly = ['sys-admin'];
      /** Who gets past the node's 404: a project that neither owns nor leases it does not see it. */
      const seenBy = async (method: string, path: string, body?: unknown) => {
        const out: Persona[] = [];
        for (const p of PERSONAS) {
          const res = await call(server, 'baremetal', method, path, tokens[p], body);
          if (res.status !== 404) out.push(p);
          else assert.match(JSON.parse(res.body.error_message).faultstring, /could not be found/, `${p} ${method} ${path}`);
        }
        return out;
      };
      // every reader lists; a project's list holds only its own project's nodes
      assert.deepEqual(await allowedFor('baremetal', 'GET', () => '/v1/nodes'), [...PERSONAS]);
      for (const p of PERSONAS) {
        const listed = await call(server, 'baremetal', 'GET', '/v1/nodes/detail', tokens[p]);
        assert.equal(listed.body.nodes.length, p === 'sys-admin' ? 1 : 0, p);
      }
      assert.deepEqual(await seenBy('GET', `/v1/nodes/${node}`), sysOnly);
      assert.deepEqual(await seenBy('GET', `/v1/nodes/${node}/states`), sysOnly);
      assert.deepEqual(await seenBy('PATCH', `/v1/nodes/${node}`, [{ op: 'add', path: '/extra/k', value: 'v' }]), sysOnly);
      assert.deepEqual(await seenBy('PUT', `/v1/nodes/${node}/traits/CUSTOM_X`), sysOnly);
      assert.deepEqual(
        await allowedFor(
          'baremetal',
          'POST',
          () => '/v1/nodes',
          (p) => ({ driver: 'fake-hardware', name: `n-${p}-${dialect}` }),
        ),
        // a project admin or a service creates nodes for its own project (create:self_owned_node)
        ['admin', 'sys-admin', 'nova'],
      );
      // members allocate (for their own project); readers and services may not
      assert.deepEqual(
        await allowedFor(
          'baremetal',
          'POST',
          () => '/v1/allocations',
          (p) => ({ resource_class: 'bm', name: `a-${p}-${dialect}` }),
        ),
        ['admin', 'sys-admin', 'p1-member'],
      );
      assert.deepEqual(await seenBy('GET', `/v1/allocations/a-sys-admin-${dialect}`), sysOnly);
      assert.deepEqual(await seenBy('DELETE', `/v1/allocations/a-sys-admin-${dialect}`), sysOnly);
      assert.deepEqual(await allowedFor('baremetal', 'GET', () => '/v1/conductors'), sysOnly);
      assert.deepEqual(await seenBy('DELETE', `/v1/nodes/${node}`), sysOnly);
    });

    test('identifier API: readers read, members allocate and release, admins manage pools', async () => {
      const pool = await call(server, 'ids', 'POST', '/v1/pools', tokens.admin, { name: `vni-${dialect}`, kind: 'integer', ranges: ['1-1000'] });
      assert.equal(pool.status, 201, pool.text);
      assert.deepEqual(await allowedFor('ids', 'GET', () => '/v1/pools'), [...PERSONAS]);
      assert.deepEqual(await allowedFor('ids', 'GET', () => `/v1/pools/vni-${dialect}`), [...PERSONAS]);
      assert.deepEqual(
        await allowedFor(
          'ids',
          'POST',
          () => '/v1/pools',
          (p) => ({ name: `pool-${p}-${dialect}`, kind: 'integer', ranges: ['1-10'] }),
        ),
        ['admin', 'sys-admin'],
      );
      assert.deepEqual(
        await allowedFor(
          'ids',
          'POST',
          () => `/v1/pools/vni-${dialect}/allocations`,
          (p) => ({ owner: `owner-${p}` }),
        ),
        ['admin', 'sys-admin', 'p1-member', 'nova'],
      );
      const held = await call(server, 'ids', 'GET', `/v1/allocations?owner=owner-nova`, tokens['p1-reader']);
      assert.equal(held.status, 200);
      const id = held.body.items[0].id as string;
      assert.equal((await call(server, 'ids', 'DELETE', `/v1/allocations/${id}`, tokens['p1-reader'])).status, 403);
      assert.equal((await call(server, 'ids', 'DELETE', `/v1/allocations/${id}`, tokens['p1-member'])).status, 204);
      assert.deepEqual(await allowedFor('ids', 'GET', () => '/v1/outbox'), ['admin', 'sys-admin']);
      // admin deletes the pool; the system admin is allowed too and finds it gone (404, not 403)
      assert.deepEqual(await allowedFor('ids', 'DELETE', () => `/v1/pools/pool-admin-${dialect}`), ['admin', 'sys-admin']);
    });
  });
}

describe('Keystone with the legacy defaults (--no-enforce-new-defaults --no-enforce-scope)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ enforceNewDefaults: false, enforceScope: false }) });
  });
  after(() => server.close());

  test('any admin manages everything again; members still may not', async () => {
    assert.equal((await call(server, 'placement', 'GET', '/resource_providers', tokens['sys-admin'])).status, 200);
    assert.equal((await call(server, 'baremetal', 'GET', '/v1/nodes', tokens.admin)).status, 200);
    assert.equal((await call(server, 'placement', 'POST', '/reshaper', tokens.admin, { inventories: {}, allocations: {} })).status === 403, false);
    assertRefused('placement', await call(server, 'placement', 'GET', '/resource_providers', tokens['p1-member']), 403, 'p1-member');
    // a project member lists its own project's nodes (none here), as with the new defaults
    const listed = await call(server, 'baremetal', 'GET', '/v1/nodes', tokens['p1-member']);
    assert.equal(listed.status, 200, listed.text);
  });
});

/** A pass-through HTTP proxy in front of Keystone that counts the requests allot sends. */
/** A TCP proxy to `target`'s host that can refuse connections (`down`) and take them again on the same port (`up`). */
async function switchableProxy(target: string): Promise<{ url: string; down(): Promise<void>; up(): Promise<void>; dropNextRequest(): void }> {
  const upstream = new URL(target);
  const open = new Set<net.Socket>();
  let drop = false;
  const server = net.createServer((client) => {
    // a connection already open closes as the next request arrives on it (a server that timed
    // the kept-alive connection out at that moment): the request's bytes are sent, no answer comes
    client.on('data', () => {
      if (!drop) return;
      drop = false;
      client.destroy();
      forward.destroy();
    });
    const forward = net.connect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, forward]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        forward.destroy();
      });
    }
    client.pipe(forward).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    down: async () => {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closed;
    },
    up: () => listen(port),
    dropNextRequest: () => {
      drop = true;
    },
  };
}

async function countingProxy(target: string): Promise<{ url: string; count(method: string, path: string): number; close(): Promise<void> }> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = `${req.method} ${req.url!.split('?')[0]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v3`,
    count: (method, path) => counts.get(`${method} ${path}`) ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('/metrics with --metrics-public', () => {
  test('no token needed', async () => {
    const open = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ metricsPublic: true }) });
    try {
      assert.equal((await request('GET', `${open.url}/metrics`)).status, 200);
    } finally {
      await open.close();
    }
  });
});

describe('the validation cache', () => {
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  before(async () => {
    proxy = await countingProxy(ks.url);
  });
  after(() => proxy.close());
  const validations = () => proxy.count('GET', '/v3/auth/tokens');
  const logins = () => proxy.count('POST', '/v3/auth/tokens');

  test('a cached token costs no Keystone request; concurrent first uses of a token share one validation', async () => {
    const server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ keystoneUrl: proxy.url }) });
    try {
      const token = await ks.token('nova');
      const before = validations();
      const answers = await Promise.all(Array.from({ length: 20 }, () => call(server, 'placement', 'GET', '/resource_providers', token)));
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      assert.equal(validations() - before, 1, '20 concurrent requests, one validation');
      for (let i = 0; i < 10; i++) assert.equal((await call(server, 'ids', 'GET', '/v1/pools', token)).status, 200);
      assert.equal(validations() - before, 1, 'later requests use the cache');
      const garbage = 'gAAAAAB-garbage';
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', garbage)).status, 401);
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', garbage)).status, 401);
      assert.equal(validations() - before, 2, 'an invalid token is remembered too');
    } finally {
      await server.close();
    }
  });

  test('a revoked token is refused once its cached validation ages out (--keystone-token-cache-time)', async () => {
    const clock = new ManualClock();
    const server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ keystoneUrl: proxy.url, keystoneTokenCacheTime: 600_000 }) }, { clock });
    try {
      const token = await ks.token('p1-member');
      assert.equal((await call(server, 'ids', 'GET', '/v1/pools', token)).status, 200);
      await ks.revoke(token);
      assert.equal((await call(server, 'ids', 'GET', '/v1/pools', token)).status, 200, 'still cached');
      clock.advance(500_000);
      assert.equal((await call(server, 'ids', 'GET', '/v1/pools', token)).status, 200, 'still cached');
      clock.advance(100_000);
      const res = await call(server, 'ids', 'GET', '/v1/pools', token);
      assertRefused('ids', res, 401, 'revoked, cache aged out');
    } finally {
      await server.close();
    }
  });

  test("allot logs in once, again only when its token is about to expire, and honours the caller's expiry", async () => {
    const clock = new ManualClock();
    const server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ keystoneUrl: proxy.url }) }, { clock });
    try {
      const startLogins = logins();
      const early = await ks.token('nova');
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', early)).status, 200);
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', await ks.token('admin'))).status, 200);
      assert.equal(logins() - startLogins, 1, 'one login for several validations');
      // Keystone's tokens live an hour: 3500 s on, allot's has less than its 120 s margin left.
      clock.advance(3_500_000);
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', await ks.token('nova'))).status, 200);
      assert.equal(logins() - startLogins, 2, 'logged in again before its token expired');
      // 3700 s on, the caller's early token is past its expires_at: refused, whatever Keystone's own clock says.
      clock.advance(200_000);
      const expired = await call(server, 'placement', 'GET', '/resource_providers', early);
      assertRefused('placement', expired, 401, 'expired by its expires_at');
    } finally {
      await server.close();
    }
  });
});

describe('Keystone unreachable, silent or refusing allot: 503, never "allow"', () => {
  // Keystone's address refusing connections (its process stopped), through a proxy of the run's
  // Keystone: the Keystone the other files share keeps serving them meanwhile.
  test("Keystone unreachable: a new token is 503 in each API's format; a cached one still works; back when Keystone is", async () => {
    const gate = await switchableProxy(ks.url);
    const server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ keystoneUrl: gate.url }) });
    const cached = tokens.admin;
    const fresh = { placement: await ks.token('admin'), baremetal: await ks.token('sys-admin'), ids: await ks.token('p1-reader') };
    const paths: Record<Api, string> = { placement: '/resource_providers', baremetal: '/v1/nodes', ids: '/v1/pools' };
    try {
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', cached)).status, 200);
      await gate.down();
      try {
        for (const api of ['placement', 'baremetal', 'ids'] as const) {
          const res = await call(server, api, 'GET', paths[api], fresh[api]);
          assertRefused(api, res, 503, `${api} with Keystone stopped`);
          assert.match(res.text, /identity service is unavailable/);
        }
        assert.equal(
          (await call(server, 'placement', 'GET', '/resource_providers', cached)).status,
          200,
          'validated before: served from the cache, as keystonemiddleware does',
        );
      } finally {
        await gate.up();
      }
      for (const api of ['placement', 'baremetal', 'ids'] as const)
        assert.equal((await call(server, api, 'GET', paths[api], fresh[api])).status, 200, `${api} after Keystone is back`);
    } finally {
      await server.close();
      await gate.down();
    }
  });

  test('a kept-alive connection Keystone closes as a request arrives on it is not a 503: the request is sent again, once', async () => {
    const gate = await switchableProxy(ks.url);
    const server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ keystoneUrl: gate.url }) });
    try {
      assert.equal((await call(server, 'placement', 'GET', '/resource_providers', await ks.token('admin'))).status, 200);
      gate.dropNextRequest();
      const res = await call(server, 'ids', 'GET', '/v1/pools', await ks.token('p1-reader'));
      assert.equal(res.status, 200, res.text);
    } finally {
      await server.close();
      await gate.down();
    }
  });

  test('Keystone that accepts connections and never answers: 503 after --keystone-timeout', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ keystoneUrl: `http://127.0.0.1:${port}`, keystoneTimeout: 500 }) });
    try {
      const res = await call(server, 'ids', 'GET', '/v1/pools', tokens.admin);
      assertRefused('ids', res, 503, 'silent Keystone');
      assert.match(res.body.detail, /no answer within 0\.5s/);
    } finally {
      await server.close();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  test("wrong service credentials: 503 saying so, and allot's password appears in no log line", async () => {
    const wrong = 'not-the-allot-password-4f1c';
    const bad = await spawnServer(['--db', 'sqlite::memory:', '--log-level', 'debug', ...ks.serveArgs], { ALLOT_KEYSTONE_PASSWORD: wrong });
    const good = await spawnServer([
      '--db',
      'sqlite::memory:',
      '--log-level',
      'trace',
      '--auth',
      'keystone',
      '--keystone-url',
      `${ks.url}/`,
      '--keystone-username',
      'allot',
      '--keystone-project',
      'service',
      '--keystone-timeout',
      '30',
      '--keystone-password',
      ks.users.allot!.password,
    ]);
    try {
      const refused = await request('GET', `${bad.url}/placement/resource_providers`, undefined, { headers: { 'x-auth-token': tokens.admin } });
      assert.equal(refused.status, 503);
      assert.match(
        refused.body.errors[0].detail,
        /Keystone refused allot's service credentials \(user allot in domain Default, project service in domain Default\)/,
      );
      const ok = await request('GET', `${good.url}/placement/resource_providers`, undefined, { headers: { 'x-auth-token': tokens.admin } });
      assert.equal(ok.status, 200);
      await request('GET', `${good.url}/placement/resource_providers`, undefined, { headers: { 'x-auth-token': 'garbage' } });
    } finally {
      await bad.stop();
      await good.stop();
    }
    assert.match(bad.output(), /refused allot's service credentials/);
    assert.match(good.output(), /logged in to Keystone/);
    assert.ok(!bad.output().includes(wrong), 'the wrong password is not logged');
    assert.ok(!good.output().includes(ks.users.allot!.password), 'the password is not logged');
  });
});

describe("the openstack CLI through Keystone's catalog, with passwords", () => {
  let server: TestServer;
  let osc: (cloud: string, ...args: string[]) => Promise<any>;
  before(async () => {
    server = await startServer({ db: await freshDatabaseUrl('postgres'), ...ks.allotConfig() });
    await ks.catalog(server.placementUrl, `${server.url}/baremetal`);
    osc = async (cloud, ...args) => {
      const { stdout } = await exec('openstack', ['--os-cloud', cloud, ...args, '-f', 'json'], {
        env: { ...process.env, OS_CLIENT_CONFIG_FILE: ks.cloudsYaml },
      });
      return JSON.parse(stdout);
    };
  });
  after(() => server.close());

  test('resource provider list and allocation candidate list, as admin and as a service; a member is refused', async () => {
    const created = await osc('admin', 'resource', 'provider', 'create', 'cli-cn1');
    await osc('nova', 'resource', 'provider', 'inventory', 'set', created.uuid, '--resource', 'VCPU=8');
    assert.deepEqual(
      (await osc('admin', 'resource', 'provider', 'list')).map((p: { name: string }) => p.name),
      ['cli-cn1'],
    );
    assert.deepEqual(
      (await osc('nova', 'resource', 'provider', 'list')).map((p: { name: string }) => p.name),
      ['cli-cn1'],
    );
    const candidates = await osc('nova', '--os-placement-api-version', '1.10', 'allocation', 'candidate', 'list', '--resource', 'VCPU=1');
    assert.equal(candidates.length, 1);
    assert.match(JSON.stringify(candidates[0]), new RegExp(created.uuid));
    await assert.rejects(osc('p1-member', 'resource', 'provider', 'list'), /Forbidden|403|does not allow/);
  });

  test('allot ids with a token', async () => {
    const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;
    const { stdout } = await exec(process.execPath, [cli, 'ids', '--url', server.url, '--token', tokens['p1-reader'], 'pools', 'list']);
    assert.ok(Array.isArray(JSON.parse(stdout)));
    await assert.rejects(exec(process.execPath, [cli, 'ids', '--url', server.url, 'pools', 'list']), /401 ids\.unauthorized/);
  });

  test('baremetal node and allocation commands as the system administrator', async () => {
    const node = await osc('sys-admin', 'baremetal', 'node', 'create', '--driver', 'fake-hardware', '--name', 'cli-node', '--resource-class', 'bm-cli');
    assert.equal(node.name, 'cli-node');
    assert.deepEqual(
      (await osc('sys-admin', 'baremetal', 'node', 'list')).map((n: { Name: string }) => n.Name),
      ['cli-node'],
    );
    const allocation = await osc('sys-admin', 'baremetal', 'allocation', 'create', '--resource-class', 'bm-cli', '--name', 'cli-alloc');
    assert.equal(allocation.name, 'cli-alloc');
    // a project member lists only its project's nodes (owned or leased): none of the system's
    assert.deepEqual(await osc('p1-member', 'baremetal', 'node', 'list'), []);
    await assert.rejects(osc('p1-member', 'baremetal', 'node', 'show', 'cli-node'), /could not be found|404/);
  });

  test("openstacksdk's conn.placement and conn.baremetal, from a clouds.yaml", async () => {
    const script = [
      'import json, openstack',
      "nova = openstack.connect(cloud='nova')",
      "nova.placement.create_resource_provider(name='sdk-rp')",
      "sysadmin = openstack.connect(cloud='sys-admin')",
      "sysadmin.baremetal.create_node(driver='fake-hardware', name='sdk-node', resource_class='bm-sdk')",
      "allocation = sysadmin.baremetal.create_allocation(resource_class='bm-sdk', name='sdk-alloc')",
      'try:',
      "    list(openstack.connect(cloud='p1-member').placement.resource_providers())",
      '    refused = None',
      'except openstack.exceptions.HttpException as e:',
      '    refused = e.status_code',
      'print(json.dumps({"providers": sorted(r.name for r in nova.placement.resource_providers()),',
      '                  "nodes": [n.name for n in sysadmin.baremetal.nodes()], "allocation": allocation.name, "refused": refused}))',
    ].join('\n');
    const { stdout } = await exec('/usr/bin/python3', ['-c', script], { env: { ...process.env, OS_CLIENT_CONFIG_FILE: ks.cloudsYaml } });
    const out = JSON.parse(stdout);
    assert.ok(out.providers.includes('sdk-rp'));
    assert.ok(out.nodes.includes('sdk-node'));
    assert.equal(out.allocation, 'sdk-alloc');
    assert.equal(out.refused, 403);
  });
});
