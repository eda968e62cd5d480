// Random requests against every route of the three APIs, on both databases: whatever the method,
// path parameters, query, headers and body, the answer is never a 5xx. A fixed seed and a bounded
// count keep the run reproducible (a failure prints the seed and the shrunk request).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { baremetalRoutes } from '../../src/baremetal/api.js';
import type { RouteTable } from '../../src/http/router.js';
import { idsRoutes } from '../../src/ids/api.js';
import { placementRoutes } from '../../src/placement/api.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { request } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';

const SEED = 20261124;
const RUNS = Number(process.env.ALLOT_FUZZ_RUNS ?? 300);

const MOUNTS: Array<{ prefix: string; routes: RouteTable<any>; headers: fc.Arbitrary<Record<string, string>> }> = [
  {
    prefix: '/placement',
    routes: placementRoutes,
    headers: fc.record({
      'x-auth-token': fc.constantFrom('admin', 'admin', 'user:project', ''),
      'openstack-api-version': fc.oneof(
        fc.integer({ min: 0, max: 40 }).map((m) => `placement 1.${m}`),
        fc.constantFrom('placement latest', 'placement 2.0', 'placement x', 'compute 1.2', ''),
      ),
    }),
  },
  {
    prefix: '/baremetal',
    routes: baremetalRoutes,
    headers: fc.record({
      'x-openstack-ironic-api-version': fc.oneof(
        fc.integer({ min: 0, max: 90 }).map((m) => `1.${m}`),
        fc.constantFrom('latest', '2.0', 'x', ''),
      ),
    }),
  },
  { prefix: '/ids', routes: idsRoutes, headers: fc.constant({}) },
];

/** URL parts as they travel (percent-encoded): plausible ones, and the ones that break naive code. */
const encoded = (s: string) => encodeURIComponent(s.toWellFormed());
/** Identifiers of things that exist (made before the run), so requests reach past "not found". */
const known: string[] = [];
const text = fc.oneof(
  fc.nat().map((i) => (known.length ? encoded(known[i % known.length]!) : '')),
  fc.uuid().map(encoded),
  fc
    .constantFrom('VCPU', 'CUSTOM_X', 'HW_CPU_X86_AVX2', 'available', 'active', 'fake-hardware', 'in:a,b', '!x', 'true', '1', '0', '-1', '1e400', 'null')
    .map(encoded),
  fc.string({ maxLength: 40 }).map(encoded),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encoded),
  fc.constantFrom('%00', 'a%00b', '%', '%zz', '..', '%ED%A0%80', '%FF', 'x'.repeat(300), '%20', ''),
);

const jsonBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.dictionary(
    fc.constantFrom(
      'name',
      'uuid',
      'total',
      'resources',
      'allocations',
      'traits',
      'kind',
      'ranges',
      'owner',
      'resource_class',
      'driver',
      'op',
      'path',
      'value',
    ),
    fc.jsonValue({ maxDepth: 3 }),
  ),
);

const requestArb = fc
  .record({
    mount: fc.nat(MOUNTS.length - 1),
    pick: fc.nat(),
    otherMethod: fc.boolean(),
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
    params: fc.array(text, { minLength: 4, maxLength: 4 }),
    query: fc.array(fc.tuple(text, text), { maxLength: 3 }),
    body: fc.option(
      fc.oneof(
        jsonBody.map((v) => JSON.stringify(v)),
        fc.string({ maxLength: 50 }),
      ),
      { nil: undefined },
    ),
    contentType: fc.constantFrom('application/json', 'application/json', 'text/plain', '', 'application/merge-patch+json'),
  })
  .chain((r) => MOUNTS[r.mount]!.headers.map((headers) => ({ ...r, headers })));

for (const dialect of DIALECTS) {
  describe(`fuzzed requests on every route (${dialect})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      const json = { 'content-type': 'application/json' };
      const placement = { ...json, 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
      const rp = (await request('POST', `${server.url}/placement/resource_providers`, { name: 'fuzz' }, { headers: placement })).body.uuid;
      await request(
        'PUT',
        `${server.url}/placement/resource_providers/${rp}/inventories`,
        { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } },
        { headers: placement },
      );
      const node = (
        await request(
          'POST',
          `${server.url}/baremetal/v1/nodes`,
          { driver: 'fake-hardware', name: 'fuzz-node', resource_class: 'fuzz' },
          { headers: { ...json, 'x-openstack-ironic-api-version': '1.82' } },
        )
      ).body.uuid;
      const pool = (await request('POST', `${server.url}/ids/v1/pools`, { name: 'fuzz-pool', kind: 'integer', ranges: ['1-100'] }, { headers: json })).body
        .name;
      const id = (await request('POST', `${server.url}/ids/v1/pools/${pool}/allocations`, { owner: 'fuzz' }, { headers: json })).body.id;
      known.push(...[rp, node, 'fuzz-node', pool, id, 'VCPU', 'CUSTOM_FUZZ'].filter((x): x is string => typeof x === 'string'));
    });
    after(() => server.close());

    test(`${RUNS} random requests: none answers 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(requestArb, async (r) => {
          const mount = MOUNTS[r.mount]!;
          const templates = Object.keys(mount.routes);
          const template = templates[r.pick % templates.length]!;
          const allowed = Object.keys(mount.routes[template]!);
          const method = r.otherMethod ? r.method : allowed[r.pick % allowed.length]!;
          let n = 0;
          const path = template.replace(/:\w+/g, () => r.params[n++ % r.params.length]!);
          const query = r.query.map(([k, v]) => `${k}=${v}`).join('&');
          const url = `${server.url}${mount.prefix}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
          const headers = { ...r.headers, ...(r.contentType ? { 'content-type': r.contentType } : {}) };
          const res = await request(method, url, undefined, { raw: method === 'GET' || method === 'HEAD' ? undefined : r.body, headers });
          assert.ok(res.status < 500, `${method} ${url} → ${res.status} ${res.text.slice(0, 300)}`);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });
  });
}
