// The identifier API's safety promises found broken from outside (issue 14, "Identifiers"), over
// HTTP on SQLite and PostgreSQL: a value a live service instance uses cannot be freed by
// accident; columns hold every value the API accepts; malformed ranges are refused; idempotent
// repeats compare the whole request.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * An HTTP inventory with one value to give: the first owner gets 42, every later one is told
 * "nothing left" (409); owners named fail-… get a 500 and hang-… no answer at all.
 */
async function scarceHttpInventory() {
  const given = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const send = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      // lookups answer integers as text: one beyond 2^53 - 1, which JSON.parse would round
      if (req.method === 'GET' && req.url === '/lookup/big') return res.writeHead(200).end('{"value": 9007199254740993}');
      if (req.method === 'GET' && req.url === '/lookup/safe') return res.writeHead(200).end('{"value": 9007199254740991, "note": "12345678901234567890"}');
      if (req.method !== 'POST' || req.url !== '/allocations') return send(404, { error: 'no such endpoint' });
      const { owner } = JSON.parse(body) as { owner: string };
      if (owner.startsWith('fail-')) return send(500, { error: 'broken' });
      if (owner.startsWith('hang-')) return;
      if (!given.has(owner) && given.size > 0) return send(409, { error: 'nothing left' });
      given.set(owner, 42);
      send(201, { value: 42 });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

function problem(res: { status: number; headers: Headers; body: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(res.body.code, code, res.text);
}

for (const dialect of DIALECTS) {
  describe(`identifier safety (${dialect})`, () => {
    let server: TestServer;
    let api: IdsClient;
    let scarce: Awaited<ReturnType<typeof scarceHttpInventory>>;
    let table: pg.Client;
    before(async () => {
      scarce = await scarceHttpInventory();
      const tableUrl = await freshDatabaseUrl('postgres');
      table = new pg.Client({ connectionString: tableUrl });
      await table.connect();
      await table.query(
        'CREATE TABLE allocation (attribute text NOT NULL, owner text NOT NULL, allocated_value integer NOT NULL, UNIQUE (attribute, owner), UNIQUE (attribute, allocated_value))',
      );
      const config = path.join(mkdtempSync(path.join(os.tmpdir(), 'allot-ids-safety-')), 'ids.json');
      const inventories = {
        odd: { module: path.join(here, 'fixtures/odd-inventory.mjs') },
        'scarce-http': { type: 'http', url: scarce.url, timeout_ms: 300 },
        'scarce-table': { type: 'postgres-table', url: tableUrl, first: 1, last: 1 },
      };
      writeFileSync(config, JSON.stringify({ inventories }));
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsConfig: config, idsWorkerIntervalMs: 60_000 });
      api = new IdsClient(server.url);
    });
    after(async () => {
      await server.close();
      await scarce.close();
      await table.end();
    });

    const allocationOf = async (owner: string, pool: string) => {
      const items = await api.all(`/pools/${pool}/allocations?owner=${encodeURIComponent(owner)}`);
      assert.equal(items.length, 1, `${owner} holds one value in ${pool}`);
      return items[0];
    };

    test('a value a live instance refers to is not released unless forced; a forced release is recorded and noticed', async () => {
      assert.equal((await api.post('/pools', { name: 'tiny', kind: 'integer', ranges: ['1-3'] })).status, 201);
      assert.equal((await api.post('/allocation-specs', { name: 'tiny-wire', attributes: { vni: { from: 'pool', pool: 'tiny' } } })).status, 201);
      const id = (await api.post('/service-instances', { allocation_spec: 'tiny-wire', attributes: { name: 'w1' } })).body.id;
      const owner = `service-instance/${id}`;
      assert.equal((await api.post(`/service-instances/${id}/validate`)).body.candidate_attributes.vni, 1);
      const held = await allocationOf(owner, 'tiny');

      // candidate set
      const refused = await api.delete(`/allocations/${held.id}`);
      problem(refused, 409, 'ids.value_held_by_instance');
      assert.equal(refused.body.instance, id);
      assert.equal(refused.body.attribute, 'vni');
      assert.deepEqual(refused.body.sets, ['candidate']);
      assert.match(refused.body.detail, new RegExp(`service instance ${id}`));
      problem(await api.delete(`/allocations/${held.id}?force=yes`), 400, 'ids.invalid_request');
      problem(await api.delete(`/allocations/${held.id}?force=false`), 409, 'ids.value_held_by_instance');

      // active set, then active + rollback
      assert.equal((await api.post(`/service-instances/${id}/promote`)).body.state, 'up');
      assert.deepEqual((await api.delete(`/allocations/${held.id}`)).body.sets, ['active']);
      assert.equal((await api.patch(`/service-instances/${id}`, { attributes: { name: 'w1-renamed' } })).body.state, 'update');
      assert.deepEqual((await api.delete(`/allocations/${held.id}`)).body.sets, ['candidate', 'active']);
      await api.post(`/service-instances/${id}/validate`);
      assert.equal((await api.post(`/service-instances/${id}/promote`)).body.rollback_attributes.vni, 1);
      assert.deepEqual((await api.delete(`/allocations/${held.id}`)).body.sets, ['active', 'rollback']);

      // The unforced path never hands the value to another owner: not asked for, not automatically.
      problem(await api.post('/pools/tiny/allocations', { owner: 'other', value: 1 }), 409, 'ids.value_in_use');
      assert.equal((await api.post('/pools/tiny/allocations', { owner: 'b' })).body.value, 2);
      assert.equal((await api.post('/pools/tiny/allocations', { owner: 'c' })).body.value, 3);
      problem(await api.post('/pools/tiny/allocations', { owner: 'd' }), 409, 'ids.pool_exhausted');
      assert.equal((await api.get(`/allocations/${held.id}`)).status, 200, 'the refused releases left the allocation in place');

      // Forced: released, recorded on the instance (its version moves).
      const before = (await api.get(`/service-instances/${id}`)).body;
      assert.deepEqual(before.forced_releases, []);
      assert.equal((await api.delete(`/allocations/${held.id}?force=true`)).status, 204);
      assert.equal((await api.get(`/allocations/${held.id}`)).status, 404);
      const after = (await api.get(`/service-instances/${id}`)).body;
      assert.equal(after.version, before.version + 1);
      assert.equal(after.forced_releases.length, 1);
      const [record] = after.forced_releases;
      assert.deepEqual(
        { ...record, released_at: undefined },
        { source: 'pool', allocation_id: held.id, pool: 'tiny', attribute: 'vni', value: 1, sets: ['active', 'rollback'], released_at: undefined },
      );

      // Another owner takes the freed value; the instance's next validation notices and allocates another.
      assert.equal((await api.post('/pools/tiny/allocations', { owner: 'd' })).body.value, 1);
      assert.equal((await api.delete(`/allocations/${(await allocationOf('c', 'tiny')).id}`)).status, 204);
      await api.patch(`/service-instances/${id}`, { attributes: { name: 'w1-again' } });
      const revalidated = (await api.post(`/service-instances/${id}/validate`)).body;
      assert.equal(revalidated.candidate_attributes.vni, 3, 'a value taken by another owner is replaced, not shared');
      assert.deepEqual(revalidated.forced_releases, []);
      assert.equal((await allocationOf(owner, 'tiny')).value, 3);
      assert.equal((await allocationOf('d', 'tiny')).value, 1);
    });

    test('a value released by force and still free is taken again by the next validation', async () => {
      assert.equal((await api.post('/pools', { name: 'small', kind: 'integer', ranges: ['10-20'] })).status, 201);
      assert.equal((await api.post('/allocation-specs', { name: 'small-wire', attributes: { tag: { from: 'pool', pool: 'small' } } })).status, 201);
      const id = (await api.post('/service-instances', { allocation_spec: 'small-wire', attributes: {} })).body.id;
      const tag = (await api.post(`/service-instances/${id}/validate`)).body.candidate_attributes.tag;
      const held = await allocationOf(`service-instance/${id}`, 'small');
      assert.equal((await api.delete(`/allocations/${held.id}?force=true`)).status, 204);
      assert.deepEqual(
        (await api.get(`/service-instances/${id}`)).body.forced_releases.map((f: any) => f.sets),
        [['candidate']],
      );
      const again = (await api.post(`/service-instances/${id}/validate`)).body;
      assert.equal(again.candidate_attributes.tag, tag);
      assert.deepEqual(again.forced_releases, []);
      assert.equal((await allocationOf(`service-instance/${id}`, 'small')).value, tag);
      // Once the instance is terminated its values are free to release as any other.
      await api.delete(`/service-instances/${id}`);
      assert.equal((await api.all(`/pools/small/allocations`)).length, 0);
    });

    test('IPv6 pools hold every value the API accepts: explicit prefixes, ::/0, a /0 block', async () => {
      assert.equal((await api.post('/pools', { name: 'v6-prefixes', kind: 'prefix', ranges: ['2001:db8::/32'], prefix_length: 64 })).status, 201);
      const explicit = await api.post('/pools/v6-prefixes/allocations', { owner: 'a', value: '2001:db8:0:5::/64' });
      assert.equal(explicit.status, 201, explicit.text);
      assert.equal(explicit.body.value, '2001:db8:0:5::/64');
      const repeat = await api.post('/pools/v6-prefixes/allocations', { owner: 'a', value: '2001:db8:0:5::/64' });
      assert.equal(repeat.status, 200, 'an idempotent repeat of an explicit IPv6 prefix');
      assert.equal(repeat.body.id, explicit.body.id);
      assert.equal((await api.post('/pools/v6-prefixes/allocations', { owner: 'b', value: '2001:db8:ffff:ffff::/64' })).status, 201);
      assert.equal((await api.post('/pools/v6-prefixes/imports', { items: [{ owner: 'c', value: '2001:db8:ffff:fffe::/64' }] })).body.imported, 1);

      const all = await api.post('/pools', { name: 'v6-all', kind: 'address', ranges: ['::/0'] });
      assert.equal(all.status, 201, all.text);
      assert.equal(all.body.utilization.total, (1n << 128n).toString());
      assert.equal(all.body.utilization.largest_free_block, (1n << 128n).toString());
      assert.equal((await api.post('/pools/v6-all/allocations', { owner: 'a', strategy: 'highest' })).body.value, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
      assert.equal((await api.post('/pools/v6-all/allocations', { owner: 'b', value: '::' })).body.value, '::');
      const used = (await api.get('/pools/v6-all')).body.utilization;
      assert.deepEqual([used.used, used.largest_free_block], ['2', ((1n << 128n) - 2n).toString()]);

      const whole = await api.post('/pools', { name: 'v6-whole', kind: 'prefix', ranges: ['::/0'], prefix_length: 48 });
      assert.equal(whole.status, 201, whole.text);
      const block = await api.post('/pools/v6-whole/allocations', { owner: 'everything', prefix_length: 0 });
      assert.equal(block.status, 201, block.text);
      assert.equal(block.body.value, '::/0');
      // counted in /48s: 2^48 of them, a number (at most 2^53 − 1); ::/0 holds them all
      const full = (await api.get('/pools/v6-whole')).body.utilization;
      assert.deepEqual([full.total, full.used, full.free], [2 ** 48, 2 ** 48, 0]);
      assert.equal((await api.delete(`/allocations/${block.body.id}`)).status, 204);
      assert.equal((await api.get('/pools/v6-whole')).body.utilization.largest_free_block, 2 ** 48);
    });

    test('what the database cannot store is a 4xx before it gets there: NUL anywhere, long owner keys, odd inventory answers', async () => {
      const H = { headers: { 'content-type': 'application/json' } };
      for (const raw of ['{"owner":"a\\u0000b"}', '{"owner":"x","metadata":{"k\\u0000":1}}', '{"owner":"x","purpose":"\\u0000"}']) {
        problem(await api.call('POST', '/pools/tiny/allocations', undefined, { ...H, raw }), 400, 'ids.invalid_request');
      }
      problem(await api.get('/allocations?owner=a%00b'), 400, 'ids.invalid_request');
      assert.equal((await api.get('/pools/a%00b')).status, 404);
      problem(
        await api.call('POST', '/service-instances', undefined, { ...H, raw: '{"allocation_spec":"tiny-wire","attributes":{"n":"\\u0000"}}' }),
        400,
        'ids.invalid_request',
      );

      assert.equal(
        (
          await api.post('/allocation-specs', {
            name: 'odd',
            attributes: {
              found: { from: 'lookup', inventory: 'odd', key_attribute: 'key' },
              slot: { from: 'inventory', inventory: 'odd', owner_attribute: 'customer' },
            },
          })
        ).status,
        201,
      );
      const long = 'c'.repeat(256);
      const tooLong = await api.post('/service-instances', { allocation_spec: 'odd', attributes: { key: 'k', customer: long } });
      problem(tooLong, 400, 'ids.invalid_request');
      assert.equal(tooLong.body.attribute, 'customer');
      problem(
        await api.post('/service-instances', { allocation_spec: 'odd', attributes: { key: 'k', customer: { nested: long } } }),
        400,
        'ids.invalid_request',
      );
      const fits = (await api.post('/service-instances', { allocation_spec: 'odd', attributes: { key: 'k', customer: 'c'.repeat(255) } })).body;
      assert.equal((await api.post(`/service-instances/${fits.id}/validate`)).body.candidate_attributes.slot, 255);
      problem(await api.patch(`/service-instances/${fits.id}`, { attributes: { customer: long } }), 400, 'ids.invalid_request');

      for (const key of ['nul', 'deep']) {
        const odd = (await api.post('/service-instances', { allocation_spec: 'odd', attributes: { key, customer: 'c' } })).body;
        const res = await api.post(`/service-instances/${odd.id}/validate`);
        problem(res, 502, 'ids.inventory_unavailable');
        assert.equal(res.body.inventory, 'odd');
        const after = (await api.get(`/service-instances/${odd.id}`)).body;
        assert.equal(after.candidate_validated, false);
        assert.match(after.last_error, /answered a value that/);
      }

      // an integer an HTTP inventory answers beyond 2^53 - 1 is refused, not stored rounded
      await api.post('/allocation-specs', { name: 'looked-up', attributes: { found: { from: 'lookup', inventory: 'scarce-http', key_attribute: 'key' } } });
      const big = (await api.post('/service-instances', { allocation_spec: 'looked-up', attributes: { key: 'big' } })).body;
      const refused = await api.post(`/service-instances/${big.id}/validate`);
      problem(refused, 502, 'ids.inventory_unavailable');
      assert.match((await api.get(`/service-instances/${big.id}`)).body.last_error, /integer beyond ±9007199254740991/);
      const safe = (await api.post('/service-instances', { allocation_spec: 'looked-up', attributes: { key: 'safe' } })).body;
      assert.equal((await api.post(`/service-instances/${safe.id}/validate`)).body.candidate_attributes.found, 9007199254740991);
    });

    test("deeply nested JSON is a 400 in each API's format, also where JSON is stored and echoed; the deepest accepted round-trips", async () => {
      const nest = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
      const deep = nest(5000);
      const json = { 'content-type': 'application/json' };
      const send = (method: string, url: string, body: string | undefined, headers: Record<string, string> = {}) =>
        fetch(`${server.url}${url}`, { method, headers: { ...json, ...headers }, body }).then(async (r) => ({
          status: r.status,
          contentType: r.headers.get('content-type') ?? '',
          text: await r.text(),
        }));

      // identifiers: metadata of an allocation (create, PATCH), of a pool; attribute sets of an instance
      const alloc = (await api.post('/pools/small/allocations', { owner: 'meta' })).body;
      const idsCases: Array<[string, string, string]> = [
        ['POST', '/ids/v1/pools/small/allocations', `{"owner":"deep","metadata":${deep}}`],
        ['PATCH', `/ids/v1/allocations/${alloc.id}`, `{"metadata":${deep}}`],
        ['POST', '/ids/v1/pools', `{"name":"deep","kind":"integer","ranges":["1-2"],"metadata":${deep}}`],
        ['POST', '/ids/v1/service-instances', `{"allocation_spec":"small-wire","attributes":{"x":${deep}}}`],
        ['POST', '/ids/v1/allocations', `{"allocations":[{"pool":"small","owner":"deep","metadata":${deep}}]}`],
      ];
      for (const [method, url, body] of idsCases) {
        const res = await send(method, url, body);
        assert.equal(res.status, 400, `${method} ${url}: ${res.text.slice(0, 200)}`);
        assert.match(res.contentType, /problem\+json/);
        assert.match(JSON.parse(res.text).detail, /nested more than 64 levels/);
      }
      // the deepest body accepted (64 levels) is stored and echoed whole, also inside a list page
      const deepest = JSON.parse(nest(62));
      const stored = await api.patch(`/allocations/${alloc.id}`, { metadata: deepest });
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual((await api.get(`/allocations/${alloc.id}`)).body.metadata, deepest);
      assert.deepEqual((await api.all('/allocations?owner=meta'))[0].metadata, deepest);
      const instance = await api.post('/service-instances', { allocation_spec: 'small-wire', attributes: { x: JSON.parse(nest(61)) } });
      assert.equal(instance.status, 201, instance.text);
      assert.deepEqual((await api.get(`/service-instances/${instance.body.id}`)).body.candidate_attributes.x, JSON.parse(nest(61)));

      // bare metal: a node's extra (create and JSON patch) — Ironic's error envelope
      const bm = { 'x-openstack-ironic-api-version': '1.82' };
      const node = await send('POST', '/baremetal/v1/nodes', JSON.stringify({ driver: 'fake-hardware', name: 'deep-node' }), bm);
      assert.equal(node.status, 201, node.text);
      for (const [method, url, body] of [
        ['POST', '/baremetal/v1/nodes', `{"driver":"fake-hardware","extra":${deep}}`],
        ['PATCH', '/baremetal/v1/nodes/deep-node', `[{"op":"add","path":"/extra/x","value":${deep}}]`],
      ] as const) {
        const res = await send(method, url, body, bm);
        assert.equal(res.status, 400, `${method} ${url}: ${res.text.slice(0, 200)}`);
        assert.equal(typeof JSON.parse(res.text).error_message, 'string');
      }
      const patched = await send('PATCH', '/baremetal/v1/nodes/deep-node', JSON.stringify([{ op: 'add', path: '/extra/x', value: JSON.parse(nest(60)) }]), bm);
      assert.equal(patched.status, 200, patched.text.slice(0, 300));
      assert.deepEqual(JSON.parse((await send('GET', '/baremetal/v1/nodes/deep-node', undefined, bm)).text).extra.x, JSON.parse(nest(60)));

      // placement: allocations of a consumer — Placement's error envelope
      const pl = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
      const res = await send(
        'PUT',
        '/placement/allocations/6b5a4d3c-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
        `{"allocations":${deep},"project_id":"p","user_id":"u","consumer_generation":null}`,
        pl,
      );
      assert.equal(res.status, 400, res.text.slice(0, 200));
      assert.equal(JSON.parse(res.text).errors[0].status, 400);
    });

    test('malformed ranges are a 400 naming the field and the value, and nothing is stored', async () => {
      const cases: Array<[Record<string, unknown>, string, unknown, RegExp]> = [
        [{ kind: 'integer', ranges: ['1-2-3'] }, '/ranges/0', '1-2-3', /not a range of the form/],
        [{ kind: 'integer', ranges: ['1-10', '20-'] }, '/ranges/1', '20-', /not a range of the form/],
        [{ kind: 'integer', ranges: ['10-1'] }, '/ranges/0', '10-1', /ends reversed: lower 10 is above upper 1/],
        [{ kind: 'integer', ranges: [{ lower: 9, upper: 3 }] }, '/ranges/0', { lower: 9, upper: 3 }, /ends reversed/],
        [{ kind: 'address', ranges: ['10.0.0.9-10.0.0.1'] }, '/ranges/0', '10.0.0.9-10.0.0.1', /ends reversed: lower 10\.0\.0\.9 is above upper 10\.0\.0\.1/],
        [{ kind: 'address', ranges: ['10.0.0.1-10.0.0.5-10.0.0.9'] }, '/ranges/0', '10.0.0.1-10.0.0.5-10.0.0.9', /not a range of the form/],
        [{ kind: 'integer', ranges: ['1-10', '5-20'] }, '/ranges/1', '5-20', /overlaps ranges\[0\] \("1-10"\)/],
        [{ kind: 'integer', ranges: ['50-60', '1-10', 55] }, '/ranges/2', 55, /overlaps ranges\[0\]/],
        [{ kind: 'address', ranges: ['10.0.0.0/24', '10.0.0.128/25'] }, '/ranges/1', '10.0.0.128/25', /overlaps ranges\[0\]/],
        [{ kind: 'integer', ranges: ['1-10'], excluded: [3, '50-60'] }, '/excluded/1', '50-60', /lies outside every range/],
        [{ kind: 'integer', ranges: ['1-10'], excluded: ['8-15'] }, '/excluded/0', '8-15', /reaches outside the ranges/],
        [{ kind: 'integer', ranges: ['1-10'], static: ['9-11'] }, '/static/0', '9-11', /reaches outside the ranges/],
        [{ kind: 'integer', ranges: ['1-10'], excluded: ['7-2'] }, '/excluded/0', '7-2', /ends reversed/],
      ];
      for (const [definition, pointer, value, reason] of cases) {
        const res = await api.post('/pools', { name: 'malformed', ...definition });
        problem(res, 400, 'ids.invalid_request');
        assert.deepEqual(
          res.body.errors.map((e: any) => e.pointer),
          [pointer],
          res.text,
        );
        assert.ok(res.body.detail.includes(JSON.stringify(value)), res.text);
        assert.match(res.body.detail, reason);
      }
      assert.equal((await api.get('/pools/malformed')).status, 404);
      // the same rules on a change of the ranges, and adjacent ranges stay fine
      assert.equal((await api.post('/pools', { name: 'adjacent', kind: 'integer', ranges: ['1-10', '11-20'] })).status, 201);
      const changed = await api.patch('/pools/adjacent', { ranges: ['1-10', '10-20'] });
      problem(changed, 400, 'ids.invalid_request');
      assert.deepEqual(changed.body.errors, [{ pointer: '/ranges/1', detail: '"10-20" overlaps ranges[0] ("1-10")' }]);
      problem(await api.patch('/pools/adjacent', { excluded: ['30'] }), 400, 'ids.invalid_request');
      assert.equal((await api.get('/pools/adjacent')).body.generation, 0, 'refused changes changed nothing');
    });

    test('an idempotent repeat must be the same request: every parameter but an omitted value is compared', async () => {
      assert.equal((await api.post('/pools', { name: 'idem', kind: 'integer', ranges: ['1-1000'] })).status, 201);
      const request = { owner: 'svc', purpose: 'p', strategy: 'highest', ttl_seconds: 600, metadata: { site: 'ams1', tags: ['a', 'b'] } };
      const first = await api.post('/pools/idem/allocations', request);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.value, 1000);
      // the same request (object keys in another order are the same metadata): the same answer
      const same = await api.post('/pools/idem/allocations', {
        metadata: { tags: ['a', 'b'], site: 'ams1' },
        ttl_seconds: 600,
        strategy: 'highest',
        purpose: 'p',
        owner: 'svc',
      });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.id, first.body.id);
      // naming the value it holds is the same request; leaving out the value too
      assert.equal((await api.post('/pools/idem/allocations', { ...request, value: 1000 })).status, 200);
      const differing: Array<[Record<string, unknown>, string[]]> = [
        [{ ...request, ttl_seconds: 60 }, ['ttl_seconds']],
        [{ owner: 'svc', purpose: 'p', strategy: 'highest', metadata: request.metadata }, ['ttl_seconds']],
        [{ ...request, metadata: { site: 'fra1', tags: ['a', 'b'] } }, ['metadata']],
        [{ ...request, metadata: { site: 'ams1', tags: ['b', 'a'] } }, ['metadata']],
        [{ ...request, metadata: undefined }, ['metadata']],
        [{ ...request, strategy: 'lowest' }, ['strategy']],
        [{ ...request, strategy: undefined }, ['strategy']],
        [{ ...request, value: 999 }, ['value']],
        [{ ...request, count: 2 }, ['count']],
        [{ ...request, strategy: 'random', ttl_seconds: 5, metadata: {} }, ['strategy', 'ttl_seconds', 'metadata']],
      ];
      for (const [body, differs] of differing) {
        const res = await api.post('/pools/idem/allocations', body);
        problem(res, 409, 'ids.idempotency_mismatch');
        assert.deepEqual(res.body.differs, differs, JSON.stringify(body));
        assert.equal(res.body.allocation_id, first.body.id);
        assert.match(res.body.detail, new RegExp(`\\(${differs.join(', ')}\\)`));
      }
      // the batch form and a dry run compare the same way
      problem(await api.post('/allocations', { allocations: [{ pool: 'idem', ...request, ttl_seconds: 1 }] }), 409, 'ids.idempotency_mismatch');
      problem(await api.post('/pools/idem/allocations', { ...request, metadata: {}, dry_run: true }), 409, 'ids.idempotency_mismatch');
      assert.equal((await api.post('/pools/idem/allocations', { ...request, dry_run: true })).body.id, first.body.id);
      // what the allocation became later (confirmed, metadata replaced) does not change what the request was
      const etag = (await api.get(`/allocations/${first.body.id}`)).headers.get('etag')!;
      assert.equal(
        (await api.patch(`/allocations/${first.body.id}`, { state: 'allocated', metadata: { other: 1 } }, { headers: { 'if-match': etag } })).status,
        200,
      );
      const retried = await api.post('/pools/idem/allocations', request);
      assert.equal(retried.status, 200, retried.text);
      assert.deepEqual([retried.body.state, retried.body.metadata], ['allocated', { other: 1 }]);
      assert.equal((await api.all('/pools/idem/allocations')).length, 1, 'never a second value');
      // an imported value: a repeat compares with what the import said
      assert.equal((await api.post('/pools/idem/imports', { items: [{ owner: 'old', value: 7, metadata: { from: 'ipam' } }] })).body.imported, 1);
      assert.equal((await api.post('/pools/idem/allocations', { owner: 'old', metadata: { from: 'ipam' } })).body.value, 7);
      assert.deepEqual((await api.post('/pools/idem/allocations', { owner: 'old' })).body.differs, ['metadata']);
    });

    test('an external inventory with nothing left is 409 ids.pool_exhausted naming it; failures and timeouts stay 502/504', async () => {
      for (const inventory of ['scarce-http', 'scarce-table']) {
        const spec = `from-${inventory}`;
        assert.equal(
          (await api.post('/allocation-specs', { name: spec, attributes: { slot: { from: 'inventory', inventory, owner_attribute: 'customer' } } })).status,
          201,
        );
        const validate = async (customer: string) => {
          const id = (await api.post('/service-instances', { allocation_spec: spec, attributes: { customer } })).body.id;
          return { id, res: await api.post(`/service-instances/${id}/validate`) };
        };
        const first = await validate('first');
        assert.equal(first.res.status, 200, first.res.text);
        assert.equal(first.res.body.candidate_attributes.slot, inventory === 'scarce-http' ? 42 : 1);

        const second = await validate('second');
        problem(second.res, 409, 'ids.pool_exhausted');
        assert.equal(second.res.body.inventory, inventory);
        assert.equal(second.res.body.attribute, 'slot');
        assert.match(second.res.body.detail, new RegExp(`Inventory ${inventory} has no slot left`));
        const after = (await api.get(`/service-instances/${second.id}`)).body;
        assert.equal(after.candidate_validated, false);
        assert.match(after.last_error, /has no slot left/);
      }
      const failed = (await api.post('/service-instances', { allocation_spec: 'from-scarce-http', attributes: { customer: 'fail-1' } })).body.id;
      problem(await api.post(`/service-instances/${failed}/validate`), 502, 'ids.inventory_unavailable');
      const hung = (await api.post('/service-instances', { allocation_spec: 'from-scarce-http', attributes: { customer: 'hang-1' } })).body.id;
      problem(await api.post(`/service-instances/${hung}/validate`), 504, 'ids.inventory_timeout');
    });
  });
}
