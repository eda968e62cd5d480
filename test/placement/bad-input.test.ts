// Bad input anywhere gets a 4xx in Placement's error format: never a 500, never a hang, never a
// partial write.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';

interface Case {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  status: number;
}

for (const dialect of DIALECTS) {
  describe(`bad input (${dialect})`, () => {
    let server: TestServer;
    let api: PlacementClient;
    let rp: string;
    const consumer = randomUUID();
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      api = new PlacementClient(server.placementUrl);
      rp = (await api.post('/resource_providers', { name: 'target' })).body.uuid;
      await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } });
      await api.put(`/allocations/${consumer}`, {
        allocations: { [rp]: { resources: { VCPU: 2 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
    });
    after(() => server.close());

    const alloc = (resources: unknown, extra: Record<string, unknown> = {}) => ({
      allocations: { [rp]: { resources } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: 1,
      consumer_type: 'INSTANCE',
      ...extra,
    });

    const cases = (): Case[] => [
      { name: 'malformed JSON', method: 'POST', path: '/resource_providers', raw: '{"name": ', status: 400 },
      { name: 'JSON that is not an object', method: 'POST', path: '/resource_providers', raw: '[1,2,3]', status: 400 },
      { name: 'JSON null', method: 'POST', path: '/resource_providers', raw: 'null', status: 400 },
      { name: 'unknown field', method: 'POST', path: '/resource_providers', body: { name: 'x', colour: 'blue' }, status: 400 },
      { name: 'wrong type', method: 'POST', path: '/resource_providers', body: { name: 42 }, status: 400 },
      { name: 'name too long (unicode counted in characters)', method: 'POST', path: '/resource_providers', body: { name: '☃'.repeat(201) }, status: 400 },
      { name: 'bad uuid in body', method: 'POST', path: '/resource_providers', body: { name: 'y', uuid: 'not-a-uuid' }, status: 400 },
      { name: 'bad uuid in query', method: 'GET', path: '/resource_providers?uuid=nope', status: 400 },
      { name: 'unknown query parameter', method: 'GET', path: '/resource_providers?colour=blue', status: 400 },
      {
        name: 'total above 2^31-1',
        method: 'PUT',
        path: `/resource_providers/${rp}/inventories/VCPU`,
        body: { resource_provider_generation: 0, total: 2 ** 31 },
        status: 400,
      },
      {
        name: 'total beyond double precision',
        method: 'PUT',
        path: `/resource_providers/${rp}/inventories/VCPU`,
        raw: '{"resource_provider_generation": 0, "total": 1e400}',
        status: 400,
      },
      { name: 'fractional amount', method: 'PUT', path: `/allocations/${consumer}`, body: alloc({ VCPU: 1.5 }), status: 400 },
      { name: 'negative amount', method: 'PUT', path: `/allocations/${consumer}`, body: alloc({ VCPU: -1 }), status: 400 },
      { name: 'huge amount', method: 'PUT', path: `/allocations/${consumer}`, body: alloc({ VCPU: Number.MAX_SAFE_INTEGER }), status: 409 },
      // an integer literal JSON.parse would round (Placement, in Python, reads it exactly and answers 409)
      { name: 'amount beyond 2^53-1', method: 'PUT', path: `/allocations/${consumer}`, body: alloc({ VCPU: 2 ** 60 }), status: 400 },
      { name: 'lower-case resource class', method: 'PUT', path: `/allocations/${consumer}`, body: alloc({ vcpu: 1 }), status: 400 },
      { name: 'non-uuid consumer', method: 'PUT', path: '/allocations/abc', body: alloc({ VCPU: 1 }), status: 400 },
      {
        name: 'unknown provider',
        method: 'PUT',
        path: `/allocations/${consumer}`,
        body: { ...alloc({}), allocations: { [randomUUID()]: { resources: { VCPU: 1 } } } },
        status: 400,
      },
      { name: 'project_id too long', method: 'PUT', path: `/allocations/${consumer}`, body: alloc({ VCPU: 1 }, { project_id: 'p'.repeat(256) }), status: 400 },
      { name: 'deeply nested JSON', method: 'POST', path: '/allocations', raw: `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`, status: 400 },
      {
        name: 'wide JSON',
        method: 'PUT',
        path: `/resource_providers/${rp}/aggregates`,
        body: { resource_provider_generation: 0, aggregates: [...Array.from({ length: 20000 }, (): string => randomUUID()), 'dup', 'dup'] },
        status: 400,
      },
      { name: 'body over the size limit', method: 'POST', path: '/resource_providers', raw: JSON.stringify({ name: 'x'.repeat(2 << 20) }), status: 413 },
      {
        name: 'wrong content type',
        method: 'POST',
        path: '/resource_providers',
        raw: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        status: 415,
      },
      { name: 'lone surrogate in a name', method: 'POST', path: '/resource_providers', raw: '{"name": "\\udcff"}', status: 400 },
      { name: 'bad microversion', method: 'GET', path: '/resource_providers', headers: { 'openstack-api-version': 'placement 1.x' }, status: 400 },
      { name: 'unsupported microversion', method: 'GET', path: '/resource_providers', headers: { 'openstack-api-version': 'placement 1.99' }, status: 406 },
    ];

    test('every bad request is refused in Placement format and nothing changes', async () => {
      const before = await snapshot(api, rp, consumer);
      for (const c of cases()) {
        const res = await api.call(c.method, c.path, c.body, { raw: c.raw, headers: c.headers });
        assert.equal(res.status, c.status, `${c.name}: ${res.status} ${res.text.slice(0, 300)}`);
        if (res.status >= 400) {
          assert.equal(res.body?.errors?.[0]?.status, c.status, `${c.name}: error body ${res.text.slice(0, 200)}`);
          assert.match(res.body.errors[0].request_id, /^req-/);
        }
      }
      const afterwards = await snapshot(api, rp, consumer);
      assert.deepEqual(afterwards, before);
    });
  });
}

/** What the bad requests above could have damaged. */
async function snapshot(api: PlacementClient, rp: string, consumer: string) {
  return {
    provider: (await api.get(`/resource_providers/${rp}`)).body.generation,
    inventories: (await api.get(`/resource_providers/${rp}/inventories`)).body,
    aggregates: (await api.get(`/resource_providers/${rp}/aggregates`)).body,
    allocation: (await api.get(`/allocations/${consumer}`)).body,
    providers: (await api.get('/resource_providers')).body.resource_providers.length,
  };
}
