// Pools and allocations over HTTP, on SQLite and PostgreSQL: kinds, strategies, explicit values,
// blocks, static band, exclusions, utilization, paging, idempotency, dry runs, leases, If-Match,
// imports, and bad input answered as problem+json.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const problem = (res: { status: number; headers: Headers; body: any }, status: number, code: string) => {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(res.body.code, code);
  assert.equal(res.body.type, `urn:allot:problem:${code}`);
  assert.equal(res.body.status, status);
};

for (const dialect of DIALECTS) {
  describe(`identifier pools (${dialect})`, () => {
    const clock = new ManualClock();
    let server: TestServer;
    let api: IdsClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsWorkerIntervalMs: 60_000 }, { clock });
      api = new IdsClient(server.url);
    });
    after(() => server.close());

    test('a VLAN pool: lowest free, static band only on request, exclusions never, release frees for real', async () => {
      const created = await api.post('/pools', { name: 'vlan', kind: 'integer', ranges: ['1-4094'], excluded: [2, '5-6'], static: ['1-3'] });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('etag'), '"0"');
      assert.equal(created.headers.get('location'), '/ids/v1/pools/vlan');
      assert.equal(created.body.utilization.total, 4091);

      const values = [];
      for (const owner of ['a', 'b', 'c']) values.push((await api.post('/pools/vlan/allocations', { owner })).body.value);
      assert.deepEqual(values, [4, 7, 8]);
      const s = await api.post('/pools/vlan/allocations', { owner: 'static-user', value: 3 });
      assert.equal(s.status, 201);
      problem(await api.post('/pools/vlan/allocations', { owner: 'x', value: 2 }), 422, 'ids.value_excluded');
      problem(await api.post('/pools/vlan/allocations', { owner: 'x', value: 5000 }), 422, 'ids.value_outside_pool');
      const taken = await api.post('/pools/vlan/allocations', { owner: 'x', value: 7 });
      problem(taken, 409, 'ids.value_in_use');
      assert.equal(taken.body.held_by.owner, 'b');

      const b = (await api.get('/allocations?owner=b')).body.items[0];
      const del = await api.delete(`/allocations/${b.id}`, { headers: { 'if-match': '"1"' } });
      assert.equal(del.status, 204);
      assert.equal((await api.post('/pools/vlan/allocations', { owner: 'd' })).body.value, 7);
      const pool = (await api.get('/pools/vlan')).body;
      assert.equal(pool.utilization.used, 4);
      assert.equal(pool.utilization.allocations, 4);
    });

    test('allocate is idempotent per owner+purpose; other parameters are a 409, never a second value', async () => {
      await api.post('/pools', { name: 'vni', kind: 'integer', ranges: [{ lower: 1, upper: 16777215 }], strategy: 'random' });
      const first = await api.post('/pools/vni/allocations', { owner: 'svc-1', purpose: 'tunnel' });
      assert.equal(first.status, 201);
      assert.ok(first.headers.get('location')!.endsWith(`/ids/v1/allocations/${first.body.id}`));
      const again = await api.post('/pools/vni/allocations', { owner: 'svc-1', purpose: 'tunnel' });
      assert.equal(again.status, 200);
      assert.equal(again.body.id, first.body.id);
      assert.equal(again.body.value, first.body.value);
      problem(await api.post('/pools/vni/allocations', { owner: 'svc-1', purpose: 'tunnel', count: 2 }), 409, 'ids.idempotency_mismatch');
      problem(
        await api.post('/pools/vni/allocations', { owner: 'svc-1', purpose: 'tunnel', value: first.body.value === 9 ? 10 : 9 }),
        409,
        'ids.idempotency_mismatch',
      );
      const other = await api.post('/pools/vni/allocations', { owner: 'svc-1', purpose: 'second' });
      assert.notEqual(other.body.value, first.body.value);
      const n = (await api.get('/pools/vni')).body.utilization.allocations;
      assert.equal(n, 2);
    });

    test('next_after_last does not reuse a released value at once; blocks are aligned', async () => {
      await api.post('/pools', { name: 'nal', kind: 'integer', ranges: ['10-25'], strategy: 'next_after_last' });
      const a = (await api.post('/pools/nal/allocations', { owner: 'a' })).body;
      assert.equal(a.value, 10);
      await api.delete(`/allocations/${a.id}`);
      assert.equal((await api.post('/pools/nal/allocations', { owner: 'b' })).body.value, 11);
      const block = (await api.post('/pools/nal/allocations', { owner: 'c', count: 4 })).body;
      assert.deepEqual([block.value, block.last_value, block.count], [12, 15, 4]);
      const lowestBlock = (await api.post('/pools/nal/allocations', { owner: 'd', count: 8, strategy: 'lowest' })).body;
      assert.deepEqual([lowestBlock.value, lowestBlock.last_value], [16, 23]);
      // wraps around to the lowest free value
      const rest = [];
      for (const o of ['e', 'f', 'g']) rest.push((await api.post('/pools/nal/allocations', { owner: o })).body.value);
      assert.deepEqual(rest, [24, 25, 10]);
      problem(await api.post('/pools/nal/allocations', { owner: 'z' }), 409, 'ids.pool_exhausted');
    });

    test('highest takes from the top (a gateway at the end of a subnet), blocks too', async () => {
      await api.post('/pools', { name: 'gw', kind: 'address', ranges: ['198.51.100.0/24'], strategy: 'highest' });
      assert.equal((await api.post('/pools/gw/allocations', { owner: 'gw' })).body.value, '198.51.100.254');
      const block = (await api.post('/pools/gw/allocations', { owner: 'vip', count: 4 })).body;
      assert.deepEqual([block.value, block.last_value], ['198.51.100.248', '198.51.100.251']);
      assert.equal((await api.post('/pools/gw/allocations', { owner: 'next' })).body.value, '198.51.100.253');
      assert.equal((await api.post('/pools/gw/allocations', { owner: 'low', strategy: 'lowest' })).body.value, '198.51.100.1');
    });

    test('address and prefix pools: IPv4, IPv6, sub-prefixes of several lengths', async () => {
      await api.post('/pools', { name: 'mgmt', kind: 'address', ranges: ['192.0.2.0/29'] });
      const ips = [];
      for (let i = 0; i < 6; i++) ips.push((await api.post('/pools/mgmt/allocations', { owner: `r${i}` })).body.value);
      assert.deepEqual(ips, ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5', '192.0.2.6']);
      problem(await api.post('/pools/mgmt/allocations', { owner: 'r7' }), 409, 'ids.pool_exhausted');

      await api.post('/pools', { name: 'v6', kind: 'prefix', ranges: ['2001:db8::/48'], prefix_length: 64 });
      const p1 = (await api.post('/pools/v6/allocations', { owner: 'a' })).body;
      assert.equal(p1.value, '2001:db8::/64');
      assert.equal(p1.prefix_length, 64);
      const p2 = (await api.post('/pools/v6/allocations', { owner: 'b', prefix_length: 56 })).body;
      assert.equal(p2.value, '2001:db8:0:100::/56');
      const p3 = (await api.post('/pools/v6/allocations', { owner: 'c' })).body;
      assert.equal(p3.value, '2001:db8:0:1::/64');
      const explicit = await api.post('/pools/v6/allocations', { owner: 'd', value: '2001:db8:0:1::/64' });
      problem(explicit, 409, 'ids.value_in_use');
      const pool = (await api.get('/pools/v6')).body;
      // counted in /64s: 2^16 of them in the /48; the /56 holds 256, each /64 one
      assert.deepEqual([pool.utilization.total, pool.utilization.used, pool.utilization.free], [65536, 258, 65278]);
      assert.equal(pool.family, 'ipv6');
      const free = (await api.get('/pools/v6/free-ranges?limit=1')).body;
      assert.equal(free.items[0].first, '2001:db8:0:2::');
      assert.ok(free.next_cursor);
    });

    test('a prefix pool counts child prefixes of its prefix_length, only those it can hand out whole', async () => {
      // four /24s; 10.0.3.7 excluded cuts the last, so three count; the third is the static band
      const created = await api.post('/pools', {
        name: 'util-p',
        kind: 'prefix',
        ranges: ['10.0.0.0/22'],
        prefix_length: 24,
        excluded: ['10.0.3.7'],
        static: ['10.0.2.0/24'],
      });
      assert.equal(created.status, 201, created.text);
      const counts = async () => {
        const u = (await api.get('/pools/util-p')).body.utilization;
        return [u.total, u.used, u.free, u.allocations, u.largest_free_block, u.static_total, u.used_percent];
      };
      assert.deepEqual(await counts(), [3, 0, 3, 0, 2, 1, 0]);
      const take = async (owner: string, body: object) => {
        const res = await api.post('/pools/util-p/allocations', { owner, ...body });
        assert.equal(res.status, 201, res.text);
        return res.body.id as string;
      };
      await take('whole', {});
      // two /26s in one /24 use that /24 once; a /28 in the cut /24 uses nothing the total counts
      const quarters = [await take('q1', { value: '10.0.1.64/26', prefix_length: 26 }), await take('q2', { value: '10.0.1.128/26', prefix_length: 26 })];
      await take('cut', { value: '10.0.3.16/28', prefix_length: 28 });
      // the largest free span of the automatic band is 10.0.3.32–255 (224 addresses): no whole /24
      assert.deepEqual(await counts(), [3, 2, 1, 4, 0, 1, 66.66]);
      assert.equal((await api.delete(`/allocations/${quarters[0]}`)).status, 204);
      assert.deepEqual((await counts()).slice(0, 3), [3, 2, 1], 'the other /26 still holds its /24');
      assert.equal((await api.delete(`/allocations/${quarters[1]}`)).status, 204);
      assert.deepEqual(await counts(), [3, 1, 2, 2, 1, 1, 33.33]);
      // counted again in the new length: seven whole /25s (10.0.3.0/25 holds the excluded address)
      const etag = (await api.get('/pools/util-p')).headers.get('etag')!;
      assert.equal((await api.patch('/pools/util-p', { prefix_length: 25 }, { headers: { 'if-match': etag } })).status, 200);
      assert.deepEqual((await counts()).slice(0, 3), [7, 2, 5]);
    });

    test('utilization counts are numbers up to 2^53 − 1, decimal strings for a larger pool', async () => {
      const utilization = async (body: object) => {
        const res = await api.post('/pools', body);
        assert.equal(res.status, 201, res.text);
        return res.body.utilization;
      };
      const v6 = await utilization({ name: 'count-v6', kind: 'address', ranges: ['2001:db8::/64'] });
      assert.deepEqual(
        [v6.total, v6.used, v6.free, v6.largest_free_block, v6.static_total, v6.allocations],
        [(2n ** 64n).toString(), '0', (2n ** 64n).toString(), (2n ** 64n).toString(), '0', 0],
      );
      const small6 = await utilization({ name: 'count-v6-small', kind: 'address', ranges: ['2001:db8::1-2001:db8::ff'] });
      assert.deepEqual([small6.total, small6.free], [255, 255]);
      const widest = await utilization({ name: 'count-widest', kind: 'integer', ranges: ['1-9007199254740991'] });
      assert.equal(widest.total, Number.MAX_SAFE_INTEGER);
      const over = await utilization({ name: 'count-over', kind: 'integer', ranges: ['0-9007199254740991'] });
      assert.deepEqual([over.total, over.used], ['9007199254740992', '0']);
    });

    test('atomic multi-allocation: all or nothing across pools', async () => {
      await api.post('/pools', { name: 'm-vni', kind: 'integer', ranges: ['100-199'] });
      await api.post('/pools', { name: 'm-vlan', kind: 'integer', ranges: ['10-11'] });
      const ok = await api.post('/allocations', {
        allocations: [
          { pool: 'm-vni', owner: 'wire-1', purpose: 'vni' },
          { pool: 'm-vlan', owner: 'wire-1', purpose: 'a' },
          { pool: 'm-vlan', owner: 'wire-1', purpose: 'z' },
        ],
      });
      assert.equal(ok.status, 201);
      assert.deepEqual(
        ok.body.allocations.map((a: any) => a.value),
        [100, 10, 11],
      );
      const failed = await api.post('/allocations', {
        allocations: [
          { pool: 'm-vni', owner: 'wire-2', purpose: 'vni' },
          { pool: 'm-vlan', owner: 'wire-2', purpose: 'a' },
        ],
      });
      problem(failed, 409, 'ids.pool_exhausted');
      assert.equal(failed.body.index, 1);
      assert.equal((await api.get('/allocations?owner=wire-2')).body.items.length, 0);
      assert.equal((await api.get('/pools/m-vni')).body.utilization.used, 1);
      problem(await api.post('/allocations', { allocations: [{ pool: 'nope', owner: 'x' }] }), 404, 'ids.not_found');
    });

    test('dry run previews without holding anything', async () => {
      await api.post('/pools', { name: 'dry', kind: 'integer', ranges: ['1-10'] });
      const preview = await api.post('/pools/dry/allocations', { owner: 'p', dry_run: true });
      assert.equal(preview.status, 200);
      assert.equal(preview.body.dry_run, true);
      assert.equal(preview.body.value, 1);
      assert.equal((await api.get('/pools/dry')).body.utilization.used, 0);
      assert.equal((await api.post('/pools/dry/allocations', { owner: 'q' })).body.value, 1);
      const batch = await api.post('/allocations', { dry_run: true, allocations: [{ pool: 'dry', owner: 'r' }] });
      assert.equal(batch.status, 200);
      assert.equal(batch.body.allocations[0].value, 2);
      assert.equal((await api.get('/pools/dry')).body.utilization.allocations, 1);
    });

    test('reservations: a lease expires by itself; confirming keeps the value; If-Match guards changes', async () => {
      await api.post('/pools', { name: 'lease', kind: 'integer', ranges: ['1-3'] });
      const r = (await api.post('/pools/lease/allocations', { owner: 'r1', ttl_seconds: 30 })).body;
      assert.equal(r.state, 'reserved');
      assert.ok(r.expires_at);
      const c = (await api.post('/pools/lease/allocations', { owner: 'r2', ttl_seconds: 30 })).body;
      problem(await api.patch(`/allocations/${c.id}`, { state: 'allocated' }, { headers: { 'if-match': '"7"' } }), 412, 'ids.precondition_failed');
      const confirmed = await api.patch(`/allocations/${c.id}`, { state: 'allocated' }, { headers: { 'if-match': '"1"' } });
      assert.equal(confirmed.status, 200);
      assert.equal(confirmed.body.state, 'allocated');
      assert.equal(confirmed.body.expires_at, null);
      assert.equal(confirmed.headers.get('etag'), '"2"');
      clock.advance(31_000);
      assert.equal((await api.get(`/allocations/${r.id}`)).status, 404);
      assert.equal((await api.get(`/allocations/${c.id}`)).status, 200);
      // the expired value is free again: lowest gets it
      assert.equal((await api.post('/pools/lease/allocations', { owner: 'r3' })).body.value, 1);
      assert.equal((await api.get('/pools/lease')).body.utilization.allocations, 2);
    });

    test('If-Match compares strongly and may list ETags; a merge patch merges metadata, plain JSON replaces it', async () => {
      await api.post('/pools', { name: 'labels', kind: 'integer', ranges: ['1-9'], description: 'lab', metadata: { site: 'x', rack: 'r0' } });
      const a = (await api.post('/pools/labels/allocations', { owner: 'm', metadata: { a: 1, b: 2, deep: { x: 1, y: 2 } } })).body;
      // a weak tag never matches (RFC 9110 13.1.1), whatever its version; one of a list does
      problem(await api.patch(`/allocations/${a.id}`, { metadata: { a: 1 } }, { headers: { 'if-match': 'W/"1"' } }), 412, 'ids.precondition_failed');
      problem(await api.patch(`/allocations/${a.id}`, { metadata: { a: 1 } }, { headers: { 'if-match': '"7", "8"' } }), 412, 'ids.precondition_failed');
      problem(await api.patch(`/allocations/${a.id}`, { metadata: { a: 1 } }, { headers: { 'if-match': '"7", 1' } }), 400, 'ids.invalid_request');
      const merge = { headers: { 'content-type': 'application/merge-patch+json', 'if-match': '"7", "1"' } };
      const merged = await api.patch(`/allocations/${a.id}`, { metadata: { c: 3, a: null, deep: { x: null, z: 3 } } }, merge);
      assert.equal(merged.status, 200, merged.text);
      assert.deepEqual(merged.body.metadata, { b: 2, c: 3, deep: { y: 2, z: 3 } });
      // plain JSON replaces the metadata whole; a null in it is a value
      const replaced = await api.patch(`/allocations/${a.id}`, { metadata: { only: null } });
      assert.deepEqual(replaced.body.metadata, { only: null });
      const cleared = await api.patch(`/allocations/${a.id}`, { metadata: null }, { headers: { 'content-type': 'application/merge-patch+json' } });
      assert.deepEqual(cleared.body.metadata, {});
      problem(await api.patch(`/allocations/${a.id}`, { metadata: null }), 400, 'ids.invalid_request');

      const pool = await api.patch(
        '/pools/labels',
        { metadata: { site: null, row: 'r1' }, description: null },
        { headers: { 'content-type': 'application/merge-patch+json' } },
      );
      assert.equal(pool.status, 200, pool.text);
      assert.deepEqual([pool.body.metadata, pool.body.description], [{ rack: 'r0', row: 'r1' }, '']);
      problem(await api.patch('/pools/labels', { description: null }), 400, 'ids.invalid_request');
      // what a merge leaves is held to the same limit as what is sent
      const many = Object.fromEntries(Array.from({ length: 63 }, (_, i) => [`k${i}`, i]));
      const over = await api.patch('/pools/labels', { metadata: many }, { headers: { 'content-type': 'application/merge-patch+json' } });
      problem(over, 400, 'ids.invalid_request');
      assert.deepEqual((await api.get('/pools/labels')).body.metadata, { rack: 'r0', row: 'r1' });
    });

    test('an import that accepts nothing still accounts for the leases it expired (counters and ETag move)', async () => {
      await api.post('/pools', { name: 'lease-import', kind: 'integer', ranges: ['1-10'] });
      await api.post('/pools/lease-import/allocations', { owner: 'keeps', value: 1 });
      await api.post('/pools/lease-import/allocations', { owner: 'forgets', ttl_seconds: 5 });
      const before = await api.get('/pools/lease-import');
      assert.deepEqual([before.body.utilization.used, before.body.utilization.allocations], [2, 2]);
      clock.advance(6_000);
      // Nothing is accepted: one item is already held identically, the other is outside the pool.
      const outcome = await api.post('/pools/lease-import/imports', {
        items: [
          { value: 1, owner: 'keeps' },
          { value: 99, owner: 'outside' },
        ],
        on_conflict: 'skip',
      });
      assert.equal(outcome.status, 200, outcome.text);
      assert.deepEqual([outcome.body.imported, outcome.body.unchanged, outcome.body.conflicts.length], [0, 1, 1]);
      const after = await api.get('/pools/lease-import');
      assert.deepEqual([after.body.utilization.used, after.body.utilization.free, after.body.utilization.allocations], [1, 9, 1]);
      assert.deepEqual(
        (await api.all('/pools/lease-import/allocations')).map((a) => a.owner),
        ['keeps'],
      );
      assert.notEqual(after.headers.get('etag'), before.headers.get('etag'), 'releasing the expired reservation changed the pool');
      assert.equal(after.body.generation, before.body.generation + 1);
    });

    test('listing pages with cursors and Link headers, filtered', async () => {
      await api.post('/pools', { name: 'paged', kind: 'integer', ranges: ['1-100'] });
      for (let i = 0; i < 7; i++) await api.post('/pools/paged/allocations', { owner: `o${i}`, purpose: i % 2 ? 'odd' : 'even' });
      const first = await api.get('/pools/paged/allocations?limit=3');
      assert.equal(first.body.items.length, 3);
      assert.match(first.headers.get('link')!, /rel="next"/);
      const all = await api.all('/pools/paged/allocations?limit=3');
      assert.deepEqual(
        all.map((a) => a.value),
        [1, 2, 3, 4, 5, 6, 7],
      );
      const odd = await api.all('/allocations?pool=paged&purpose=odd');
      assert.equal(odd.length, 3);
      problem(await api.get('/allocations?cursor=garbage'), 400, 'ids.invalid_request');
      problem(await api.get('/allocations?limit=0'), 400, 'ids.invalid_request');
      problem(await api.get('/allocations?color=red'), 400, 'ids.invalid_request');
      const pools = await api.all('/pools?limit=2');
      assert.ok(pools.length >= 2);
    });

    test('brownfield import: conflicts reported per item; abort imports nothing, skip imports the rest', async () => {
      await api.post('/pools', { name: 'brown', kind: 'integer', ranges: ['1-1000'], excluded: [13] });
      await api.post('/pools/brown/allocations', { owner: 'existing', value: 5 });
      const items = [
        { value: 1, owner: 'svc-a' },
        { value: 5, owner: 'svc-b' },
        { value: 13, owner: 'svc-c' },
        { value: 2000, owner: 'svc-d' },
        { value: 7, owner: 'svc-e' },
        { value: 7, owner: 'svc-f' },
        { value: 'x', owner: 'svc-g' },
      ];
      const aborted = await api.post('/pools/brown/imports', { items });
      problem(aborted, 409, 'ids.import_conflicts');
      assert.deepEqual(
        aborted.body.conflicts.map((c: any) => [c.index, c.code]),
        [
          [1, 'ids.value_in_use'],
          [2, 'ids.value_excluded'],
          [3, 'ids.value_outside_pool'],
          [5, 'ids.value_in_use'],
          [6, 'ids.invalid_value'],
        ],
      );
      assert.equal(aborted.body.conflicts[0].held_by.owner, 'existing');
      assert.equal((await api.get('/pools/brown')).body.utilization.allocations, 1);
      const skipped = await api.post('/pools/brown/imports', { items, on_conflict: 'skip' });
      assert.equal(skipped.status, 200);
      assert.equal(skipped.body.imported, 2);
      assert.equal(skipped.body.conflicts.length, 5);
      const again = await api.post('/pools/brown/imports', { items: [{ value: 1, owner: 'svc-a' }] });
      assert.deepEqual([again.body.imported, again.body.unchanged], [0, 1]);
      // a large import goes through the bulk path
      const many = Array.from({ length: 300 }, (_, i) => ({ value: 100 + i * 2, owner: `bulk-${i}` }));
      const bulk = await api.post('/pools/brown/imports', { items: many });
      assert.equal(bulk.body.imported, 300);
      assert.equal((await api.post('/pools/brown/allocations', { owner: 'next' })).body.value, 2);
      const free = await api.all('/pools/brown/free-ranges');
      const held = await api.all('/pools/brown/allocations');
      const freeCount = free.reduce((n, r) => n + Number(r.size), 0);
      assert.equal(freeCount + held.length, 999);
    });

    test('pool changes: add exclusions (refused while held), If-Match, delete only when empty', async () => {
      const created = await api.post('/pools', { name: 'chg', kind: 'integer', ranges: ['1-10'] });
      const again = await api.post('/pools', { name: 'chg', kind: 'integer', ranges: ['1-10'] });
      assert.equal(again.status, 200);
      problem(await api.post('/pools', { name: 'chg', kind: 'integer', ranges: ['1-11'] }), 409, 'ids.pool_exists');
      const a = (await api.post('/pools/chg/allocations', { owner: 'a' })).body;
      const refused = await api.patch('/pools/chg', { excluded: ['1-2'] });
      problem(refused, 409, 'ids.pool_in_use');
      assert.equal(refused.body.allocations[0].owner, 'a');
      problem(await api.patch('/pools/chg', { excluded: ['2'] }, { headers: { 'if-match': `"${created.body.generation}"` } }), 412, 'ids.precondition_failed');
      const etag = (await api.get('/pools/chg')).headers.get('etag')!;
      const changed = await api.patch('/pools/chg', { excluded: ['2-3'], description: 'lab' }, { headers: { 'if-match': etag } });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.utilization.total, 8);
      assert.equal((await api.post('/pools/chg/allocations', { owner: 'b' })).body.value, 4);
      problem(await api.delete('/pools/chg'), 409, 'ids.pool_in_use');
      for (const al of await api.all('/pools/chg/allocations')) await api.delete(`/allocations/${al.id}`);
      assert.equal((await api.delete('/pools/chg')).status, 204);
      assert.equal((await api.get('/pools/chg')).status, 404);
      assert.equal((await api.get(`/allocations/${a.id}`)).status, 404);
    });

    // PostgreSQL decides a batch with the pool as its process last read it, and the statement that
    // takes the values refuses when that is no longer the pool: each change below is seen at once
    test("the next allocation follows a pool's new strategy, a new pool of the same name, and a lease past due", async () => {
      await api.post('/pools', { name: 'turns', kind: 'integer', ranges: ['1-10'] });
      assert.equal((await api.post('/pools/turns/allocations', { owner: 'a' })).body.value, 1);
      assert.equal((await api.patch('/pools/turns', { strategy: 'highest' })).status, 200);
      assert.equal((await api.post('/pools/turns/allocations', { owner: 'b' })).body.value, 10);
      for (const al of await api.all('/pools/turns/allocations')) await api.delete(`/allocations/${al.id}`);
      assert.equal((await api.delete('/pools/turns')).status, 204);
      await api.post('/pools', { name: 'turns', kind: 'integer', ranges: ['20-30'] });
      const leased = (await api.post('/pools/turns/allocations', { owner: 'c', ttl_seconds: 5 })).body;
      assert.equal(leased.value, 20);
      clock.advance(6_000);
      // the lease ran out: its value is released first and is the lowest free again
      assert.equal((await api.post('/pools/turns/allocations', { owner: 'd' })).body.value, 20);
      assert.equal((await api.get(`/allocations/${leased.id}`)).status, 404);
    });

    test('bad input is a clear problem+json, never a 500', async () => {
      problem(await api.call('POST', '/pools', undefined, { raw: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'ids.invalid_request');
      problem(await api.call('POST', '/pools', undefined, { raw: 'name=x', headers: { 'content-type': 'text/plain' } }), 415, 'ids.unsupported_media_type');
      const unknown = await api.post('/pools', { name: 'u', kind: 'integer', ranges: ['1-2'], colour: 'red' });
      problem(unknown, 400, 'ids.invalid_request');
      assert.match(unknown.body.detail, /colour/);
      const wrongType = await api.post('/pools', { name: 'u', kind: 'integer', ranges: 'all' });
      assert.equal(wrongType.body.errors[0].pointer, '/ranges');
      // an integer literal beyond 2^53-1 is refused as it is read (JSON.parse would round it); the
      // same number written as a float reaches the definition's check
      const inexact = await api.post('/pools', { name: 'u', kind: 'integer', ranges: [{ lower: 1, upper: 2 ** 60 }] });
      problem(inexact, 400, 'ids.invalid_request');
      assert.match(inexact.body.detail, /integer beyond ±9007199254740991/);
      const json = { 'content-type': 'application/json' };
      const float = await api.call('POST', '/pools', undefined, {
        raw: '{"name":"u","kind":"integer","ranges":[{"lower":1,"upper":1.152921504606847e18}]}',
        headers: json,
      });
      problem(float, 422, 'ids.invalid_pool_definition');
      problem(await api.post('/pools', { name: 'u', kind: 'integer', ranges: [2 ** 60] }), 400, 'ids.invalid_request');
      problem(await api.post('/pools', { name: 'u', kind: 'integer', ranges: ['1-99999999999999999999'] }), 422, 'ids.invalid_pool_definition');
      problem(await api.post('/pools', { name: 'ünïcode☃', kind: 'integer', ranges: ['1-2'] }), 400, 'ids.invalid_request');
      problem(await api.post('/pools', { name: 'p', kind: 'address', ranges: ['10.0.0.1/24'] }), 422, 'ids.invalid_pool_definition');
      await api.post('/pools', { name: 'bad-input', kind: 'integer', ranges: ['1-100'] });
      const uni = await api.post('/pools/bad-input/allocations', { owner: 'ünïcode ☃ owner', purpose: '日本' });
      assert.equal(uni.status, 201);
      assert.equal((await api.get(`/allocations?owner=${encodeURIComponent('ünïcode ☃ owner')}`)).body.items[0].purpose, '日本');
      problem(await api.post('/pools/bad-input/allocations', { owner: 'x', count: 3 }), 422, 'ids.invalid_value');
      problem(await api.post('/pools/bad-input/allocations', { owner: 'x', value: '5' }), 422, 'ids.invalid_value');
      problem(await api.post('/pools/bad-input/allocations', { owner: 'x', value: 1.5 }), 400, 'ids.invalid_request');
      problem(await api.post('/pools/bad-input/allocations', { owner: '' }), 400, 'ids.invalid_request');
      problem(await api.post('/pools/bad-input/allocations', { owner: 'x'.repeat(256) }), 400, 'ids.invalid_request');
      problem(await api.get('/allocations/not-a-uuid'), 404, 'ids.not_found');
      problem(await api.delete('/allocations/00000000-0000-0000-0000-000000000000'), 404, 'ids.not_found');
      problem(await api.patch('/allocations/00000000-0000-0000-0000-000000000000', { state: 'allocated' }), 404, 'ids.not_found');
      problem(await api.get('/allocations/00000000-0000-0000-0000-000000000000', { headers: { accept: 'text/html' } }), 406, 'ids.not_acceptable');
      const wrongMethod = await api.call('PUT', '/pools');
      problem(wrongMethod, 405, 'ids.method_not_allowed');
      assert.equal(wrongMethod.headers.get('allow'), 'GET, POST, HEAD');
      // a size limit says the limit, not the value
      const tooMany = await api.post('/allocations', { allocations: Array.from({ length: 101 }, (_, i) => ({ pool: 'bad-input', owner: `o${i}` })) });
      problem(tooMany, 400, 'ids.invalid_request');
      assert.equal(tooMany.body.detail, '/allocations: holds 101 items, at most 100 allowed');
      assert.equal(
        (await api.post('/pools/bad-input/allocations', { owner: 'o'.repeat(300) })).body.detail,
        '/owner: is 300 characters long, at most 255 allowed',
      );
      // HEAD is GET without the body (RFC 9110 9.3.2): the same status and headers
      const got = await api.get('/pools/bad-input');
      const head = await fetch(`${server.url}/ids/v1/pools/bad-input`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), '');
      assert.deepEqual([head.headers.get('etag'), head.headers.get('content-type')], [got.headers.get('etag'), got.headers.get('content-type')]);
      assert.equal((await fetch(`${server.url}/ids/v1/pools/no-such-pool`, { method: 'HEAD' })).status, 404);
      problem(await api.get('/nothing-here'), 404, 'ids.not_found');
      problem(await api.patch('/pools/bad-input', { description: 'x' }, { headers: { 'if-match': 'garbage' } }), 400, 'ids.invalid_request');
      const big = await api.post('/pools/bad-input/imports', { items: Array.from({ length: 40000 }, (_, i) => ({ value: i, owner: `owner-number-${i}` })) });
      problem(big, 413, 'ids.body_too_large');
      assert.equal((await api.get('/pools/bad-input')).body.utilization.allocations, 1);
    });

    test('the OpenAPI document describes exactly the routes served', async () => {
      const { idsRoutes } = await import('../../src/ids/api.js');
      const doc = (await api.get('/openapi.json')).body;
      assert.equal(doc.openapi, '3.1.0');
      const served = Object.entries(idsRoutes)
        .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path.replace(/:(\w+)/g, '{$1}')}`))
        .sort();
      const documented = Object.entries(doc.paths as Record<string, object>)
        .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
        .sort();
      assert.deepEqual(documented, served);
      const root = (await api.get('')).body;
      assert.equal(root.links.openapi, '/ids/v1/openapi.json');
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`lease expiry worker (${dialect})`, () => {
    const clock = new ManualClock();
    let server: TestServer;
    let api: IdsClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsWorkerIntervalMs: 20 }, { clock });
      api = new IdsClient(server.url);
    });
    after(() => server.close());

    test('a reservation nobody confirms is released by the worker, without any other request', async () => {
      await api.post('/pools', { name: 'lw', kind: 'integer', ranges: ['1-5'] });
      await api.post('/pools/lw/allocations', { owner: 'keeps' });
      await api.post('/pools/lw/allocations', { owner: 'forgets', ttl_seconds: 5 });
      assert.equal((await api.get('/pools/lw')).body.utilization.used, 2);
      clock.advance(6_000);
      for (let i = 0; i < 200 && (await api.get('/pools/lw')).body.utilization.used !== 1; i++) await new Promise((r) => setTimeout(r, 25));
      const pool = (await api.get('/pools/lw')).body;
      assert.equal(pool.utilization.used, 1);
      assert.equal(pool.utilization.allocations, 1);
      assert.deepEqual(
        (await api.all('/allocations?pool=lw')).map((a) => a.owner),
        ['keeps'],
      );
    });
  });
}
