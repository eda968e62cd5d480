// Issue 15's identifier paths, for correctness (their speed is bench:ids --served's): keyset pages
// of every identifier listing (limit, cursor, a bad cursor, order kept while others allocate),
// bulk imports all or nothing, and blocks of count=N, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const problem = (res: { status: number; headers: Headers; body: any }, status: number, code: string) => {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(res.body.code, code);
};

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

for (const dialect of DIALECTS) {
  describe(`identifier listings and bulk writes (${dialect})`, () => {
    let server: TestServer;
    let api: IdsClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsWorkerIntervalMs: 60_000 });
      api = new IdsClient(server.url);
    });
    after(() => server.close());

    test('free ranges page in value order across both bands; pages hold at most limit; what is free and what is held add up', async () => {
      await api.post('/pools', { name: 'frag', kind: 'integer', ranges: ['1-1000'], static: ['100-199'] });
      const held = Array.from({ length: 333 }, (_, i) => 3 * (i + 1)); // 3, 6, …, 999
      const imported = await api.post('/pools/frag/imports', { items: held.map((value) => ({ value, owner: `h${value}` })) });
      assert.equal(imported.body.imported, 333);

      const first = await api.get('/pools/frag/free-ranges?limit=7');
      assert.equal(first.body.items.length, 7);
      assert.match(first.headers.get('link')!, /rel="next"/);
      const ranges = await api.all('/pools/frag/free-ranges?limit=7');
      for (const [i, r] of ranges.entries()) {
        // in value order; adjacent only where the band changes (spans merge within a band)
        const prev = ranges[i - 1];
        if (prev) assert.ok(r.first > prev.last + (prev.band === r.band ? 1 : 0), JSON.stringify([prev, r]));
        assert.equal(r.band, r.first >= 100 && r.last <= 199 ? 'static' : 'auto', JSON.stringify(r));
      }
      const free = new Set<number>();
      for (const r of ranges) for (let v = r.first; v <= r.last; v++) free.add(v);
      for (let v = 1; v <= 1000; v++) assert.equal(free.has(v), !held.includes(v), `value ${v}`);

      const auto = await api.all('/pools/frag/free-ranges?band=auto&limit=50');
      assert.deepEqual(
        auto,
        ranges.filter((r) => r.band === 'auto'),
      );
    });

    test("a bad cursor, or another list's, is a 400 problem on every identifier listing", async () => {
      await api.post('/pools', { name: 'cursors', kind: 'integer', ranges: ['1-10'] });
      await api.post('/pools', { name: 'cursors-2', kind: 'integer', ranges: ['1-10'] });
      for (const name of ['cursor-spec-1', 'cursor-spec-2']) {
        const spec = await api.post('/allocation-specs', { name, attributes: { n: { from: 'pool', pool: 'cursors' } } });
        assert.equal(spec.status, 201, spec.text);
      }
      for (const owner of ['c1', 'c2']) await api.post('/pools/cursors/allocations', { owner });
      await api.post('/pools/cursors/allocations', { owner: 'c4', value: 5 });
      await api.post('/pools/cursors-2/allocations', { owner: 'c3' });
      const lists = [
        '/pools',
        '/allocations',
        '/pools/cursors/allocations',
        '/pools/cursors/free-ranges',
        '/allocation-specs',
        '/service-instances',
        '/outbox',
      ];
      // a cursor each list gives out (where it has a second page), to try on the others
      const given = new Map<string, string>();
      for (const path of lists) {
        const first = await api.get(`${path}?limit=1`);
        assert.equal(first.status, 200, first.text);
        if (first.body.next_cursor) given.set(path, first.body.next_cursor);
      }
      assert.ok(given.size >= 5, [...given.keys()].join());
      for (const path of lists) {
        problem(await api.get(`${path}?cursor=garbage`), 400, 'ids.invalid_request');
        problem(await api.get(`${path}?cursor=${cursorOf({ not: 'a position' })}`), 400, 'ids.invalid_request');
        // what the database could not compare is no position: a NUL in a string (it was a 500 on PostgreSQL)
        problem(await api.get(`${path}?cursor=${cursorOf('\u0000')}`), 400, 'ids.invalid_request');
        problem(await api.get(`${path}?limit=1001`), 400, 'ids.invalid_request');
        for (const [from, cursor] of given) {
          const res = await api.get(`${path}?limit=1&cursor=${cursor}`);
          if (from === path) assert.equal(res.status, 200, res.text);
          else problem(res, 400, 'ids.invalid_request');
        }
      }
    });

    test('a filter with a closed set of values refuses any other value with a 400 naming the parameter, on every listing', async () => {
      await api.post('/pools', { name: 'closed', kind: 'integer', ranges: ['1-10'] });
      for (const [path, parameter] of [
        ['/pools?kind=bogus', 'kind'],
        ['/allocations?state=bogus', 'state'],
        ['/pools/closed/allocations?state=bogus', 'state'],
        ['/pools/closed/free-ranges?band=bogus', 'band'],
        ['/service-instances?state=bogus', 'state'],
        ['/outbox?state=bogus', 'state'],
      ]) {
        const refused = await api.get(path!);
        problem(refused, 400, 'ids.invalid_request');
        assert.deepEqual(
          refused.body.errors.map((e: { parameter: string }) => e.parameter),
          [parameter],
          path,
        );
      }
      // and the values they take answer
      for (const path of ['/pools?kind=integer', '/allocations?state=allocated', '/service-instances?state=terminated', '/outbox?state=pending']) {
        assert.equal((await api.get(path)).status, 200, path);
      }
    });

    test('?state=reserved pages through the reservations only, in value order', async () => {
      await api.post('/pools', { name: 'leases', kind: 'integer', ranges: ['1-100'] });
      for (let i = 0; i < 12; i++) {
        const res = await api.post('/pools/leases/allocations', i % 3 === 0 ? { owner: `r${i}`, ttl_seconds: 600 } : { owner: `a${i}` });
        assert.equal(res.status, 201);
      }
      const reserved = await api.all('/pools/leases/allocations?state=reserved&limit=2');
      assert.deepEqual(
        reserved.map((a) => [a.value, a.state]),
        [
          [1, 'reserved'],
          [4, 'reserved'],
          [7, 'reserved'],
          [10, 'reserved'],
        ],
      );
      assert.deepEqual(
        (await api.all('/allocations?pool=leases&state=reserved&limit=3')).map((a) => a.value),
        [1, 4, 7, 10],
      );
      const confirmed = await api.patch(`/allocations/${reserved[1].id}`, { state: 'allocated' });
      assert.equal(confirmed.status, 200);
      assert.deepEqual(
        (await api.all('/allocations?state=reserved&limit=1')).filter((a) => a.pool === 'leases').map((a) => a.value),
        [1, 7, 10],
      );
      assert.equal((await api.all('/pools/leases/allocations?state=allocated&limit=5')).length, 9);
    });

    test('paging keeps its order while others allocate: every allocation there before the walk is seen once, in order', async () => {
      await api.post('/pools', { name: 'walk', kind: 'integer', ranges: ['1-100000'] });
      const before = Array.from({ length: 300 }, (_, i) => 2 * (i + 1)); // the even values 2 … 600
      assert.equal((await api.post('/pools/walk/imports', { items: before.map((value) => ({ value, owner: `e${value}` })) })).body.imported, 300);

      // Meanwhile 150 clients take the lowest free values: the odd ones, between those listed.
      const racing = Promise.all(Array.from({ length: 150 }, (_, i) => api.post('/pools/walk/allocations', { owner: `odd-${i}` })));
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res: { status: number; body: any } = await api.get(`/pools/walk/allocations?limit=17${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200);
        seen.push(...res.body.items.map((a: { value: number }) => a.value));
        cursor = res.body.next_cursor;
      } while (cursor);
      for (const r of await racing) assert.equal(r.status, 201);

      for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `strictly increasing at ${i}: ${seen[i - 1]}, ${seen[i]}`);
      const seenSet = new Set(seen);
      for (const v of before) assert.ok(seenSet.has(v), `value ${v} was there before the walk`);
      assert.equal((await api.all('/pools/walk/allocations?limit=1000')).length, 450);
    });

    test('a bulk import is all or nothing: one value held by someone else, or one repeated, imports none of 2 000', async () => {
      await api.post('/pools', { name: 'bulk', kind: 'integer', ranges: ['1-100000'] });
      assert.equal((await api.post('/pools/bulk/allocations', { owner: 'x', value: 1500 })).status, 201);
      const items = Array.from({ length: 2000 }, (_, i) => ({ value: i + 1, owner: `b${i}` }));

      const held = await api.post('/pools/bulk/imports', { items });
      problem(held, 409, 'ids.import_conflicts');
      assert.deepEqual(
        held.body.conflicts.map((c: any) => [c.index, c.code]),
        [[1499, 'ids.value_in_use']],
      );
      const repeated = await api.post('/pools/bulk/imports', {
        items: [...items.filter((i) => i.value !== 1500), { value: 7, owner: 'again' }],
      });
      problem(repeated, 409, 'ids.import_conflicts');
      const pool = (await api.get('/pools/bulk')).body;
      assert.deepEqual([pool.utilization.allocations, pool.utilization.used], [1, 1]);
      assert.deepEqual(
        (await api.all('/pools/bulk/free-ranges')).map((r) => [r.first, r.last]),
        [
          [1, 1499],
          [1501, 100000],
        ],
      );

      const ok = await api.post('/pools/bulk/imports', { items: items.filter((i) => i.value !== 1500) });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.imported, 1999);
      const after = (await api.get('/pools/bulk')).body;
      assert.deepEqual([after.utilization.allocations, after.utilization.used], [2000, 2000]);
      assert.deepEqual(
        (await api.all('/pools/bulk/free-ranges')).map((r) => [r.first, r.last]),
        [[2001, 100000]],
      );
      assert.equal((await api.post('/pools/bulk/allocations', { owner: 'next' })).body.value, 2001);
    });

    test('an import of 12 000 scattered values is all or nothing on one duplicate, and the free ranges add up after', async () => {
      await api.post('/pools', { name: 'scatter', kind: 'integer', ranges: ['1-1000000'] });
      const values = Array.from({ length: 12_000 }, (_, i) => 7 + i * 83); // every value splits a free range
      const items = values.map((value, i) => ({ value, owner: `s${i}` }));
      const repeated = await api.post('/pools/scatter/imports', { items: [...items, { value: values[11_999]!, owner: 'twice' }] });
      problem(repeated, 409, 'ids.import_conflicts');
      assert.equal((await api.get('/pools/scatter')).body.utilization.allocations, 0);
      assert.deepEqual(
        (await api.all('/pools/scatter/free-ranges')).map((r) => [r.first, r.last]),
        [[1, 1000000]],
      );

      const ok = await api.post('/pools/scatter/imports', { items });
      assert.equal(ok.body.imported, 12_000);
      const pool = (await api.get('/pools/scatter')).body;
      assert.deepEqual([pool.utilization.allocations, pool.utilization.used], [12_000, 12_000]);
      const free = await api.all('/pools/scatter/free-ranges?limit=1000');
      assert.equal(free.length, 12_001);
      assert.equal(
        free.reduce((n, r) => n + (r.last - r.first + 1), 0),
        1_000_000 - 12_000,
      );
      assert.deepEqual([free[0].first, free[0].last, free[1].first], [1, 6, 8]);
      assert.equal((await api.post('/pools/scatter/allocations', { owner: 'next' })).body.value, 1);
      assert.equal((await api.get('/allocations?owner=s5000')).body.items[0].value, values[5000]);
    });

    test('after scattered imports into both bands, the free ranges are exactly the complement of the allocations', async () => {
      await api.post('/pools', { name: 'complement', kind: 'integer', ranges: ['1-200000'], static: ['50000-59999', '150000-150999'] });
      // blocks of 1, 2 and 4 at scattered aligned values, in the auto band and in both static ranges
      const items = Array.from({ length: 6000 }, (_, i) => {
        const count = [1, 2, 4][i % 3]!;
        return { value: 4 * (3 + i * 8) + (count === 1 ? 1 : 0), owner: `c${i}`, ...(count > 1 ? { count } : {}) };
      });
      assert.equal((await api.post('/pools/complement/imports', { items: items.slice(0, 3500) })).body.imported, 3500);
      assert.equal((await api.post('/pools/complement/imports', { items: items.slice(3500) })).body.imported, 2500);
      const taken = await api.all('/pools/complement/allocations?limit=1000');
      const free = await api.all('/pools/complement/free-ranges?limit=1000');
      assert.equal(taken.length, 6000);
      assert.ok(free.some((r) => r.band === 'static') && free.some((r) => r.band === 'auto'));
      // walk 1..200000: every value in exactly one allocation or one free range, free ranges never adjacent within a band
      const pieces = [...taken.map((a) => ({ first: a.value, last: a.last_value, band: 'held' })), ...free].sort((a, b) => a.first - b.first);
      let next = 1;
      for (const [i, p] of pieces.entries()) {
        assert.equal(p.first, next, `a gap or an overlap at ${JSON.stringify([pieces[i - 1], p])}`);
        const prev = pieces[i - 1];
        if (prev && prev.band !== 'held') assert.notEqual(prev.band, p.band, `two free ranges of one band side by side: ${JSON.stringify([prev, p])}`);
        if (p.band !== 'held') assert.equal(p.band, (p.first >= 50000 && p.last <= 59999) || (p.first >= 150000 && p.last <= 150999) ? 'static' : 'auto');
        next = p.last + 1;
      }
      assert.equal(next, 200001);
    });

    test('a bad item deep in a large import is a 400 problem pointing at that item, and nothing is imported', async () => {
      await api.post('/pools', { name: 'badbulk', kind: 'integer', ranges: ['1-100000'] });
      const items: Array<Record<string, unknown>> = Array.from({ length: 5000 }, (_, i) => ({ value: i + 1, owner: `o${i}` }));
      for (const [bad, pointer] of [
        [{ value: 4321, owner: 'x', colour: 'red' }, '/items/4320'],
        [{ value: -1, owner: 'x' }, '/items/4320/value'],
        [{ value: 4321, owner: '' }, '/items/4320/owner'],
        [{ value: 4321, owner: 'x', count: 0 }, '/items/4320/count'],
        [{ value: 4321, owner: 'x', metadata: [] }, '/items/4320/metadata'],
      ] as const) {
        const res = await api.post('/pools/badbulk/imports', { items: items.map((item, i) => (i === 4320 ? bad : item)) });
        problem(res, 400, 'ids.invalid_request');
        assert.equal(res.body.errors[0].pointer, pointer, JSON.stringify(res.body));
      }
      problem(await api.post('/pools/badbulk/imports', { items, on_conflict: 'sometimes' }), 400, 'ids.invalid_request');
      problem(await api.post('/pools/badbulk/imports', { items: [] }), 400, 'ids.invalid_request');
      assert.equal((await api.get('/pools/badbulk')).body.utilization.allocations, 0);
    });

    test('count=N takes aligned blocks by every strategy, and a repeat gets the same block', async () => {
      await api.post('/pools', { name: 'blocks', kind: 'integer', ranges: ['1-64'] });
      const take = async (body: Record<string, unknown>) => {
        const res = await api.post('/pools/blocks/allocations', body);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return [res.body.value, res.body.last_value];
      };
      assert.deepEqual(await take({ owner: 'a', count: 4 }), [4, 7]);
      assert.deepEqual(await take({ owner: 'b', count: 8 }), [8, 15]);
      assert.deepEqual(await take({ owner: 'c', count: 2 }), [2, 3]);
      assert.deepEqual(await take({ owner: 'd', count: 4, value: 16 }), [16, 19]);
      assert.deepEqual(await take({ owner: 'e', count: 16, strategy: 'highest' }), [48, 63]);
      assert.deepEqual(await take({ owner: 'f', count: 8, strategy: 'next_after_last' }), [24, 31]);
      const random = await take({ owner: 'g', count: 4, strategy: 'random' });
      assert.ok([20, 32, 36, 40, 44].includes(random[0]), JSON.stringify(random));
      const repeat = await api.post('/pools/blocks/allocations', { owner: 'a', count: 4 });
      assert.deepEqual([repeat.status, repeat.body.value], [200, 4]);
      problem(await api.post('/pools/blocks/allocations', { owner: 'a', count: 8 }), 409, 'ids.idempotency_mismatch');
      problem(await api.post('/pools/blocks/allocations', { owner: 'h', count: 32 }), 409, 'ids.pool_exhausted');
      const pool = (await api.get('/pools/blocks')).body;
      assert.deepEqual([pool.utilization.allocations, pool.utilization.used], [7, 46]);
    });
  });
}
