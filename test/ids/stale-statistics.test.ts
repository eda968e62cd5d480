// PostgreSQL chooses a plan from its statistics, and a pool filled faster than autovacuum analyzes
// has statistics older than its rows. Planned on them, "the free span holding v", "what do these
// owners hold" and the one-statement allocation's compare-and-set on a free span read every row of
// the pool (issue 15: imports of 100 at 199 values/s; an import of 999 took 0.3–0.7 s at 40 000
// values held; an allocation read 41 000 rows). Here the statistics are taken while the tables
// hold one row of another pool, autovacuum stays off, and then:
//
// - imports fill a pool to ~40 000 values under a 5 s statement timeout (reading every span or
//   allocation of the pool for each item runs past it): every import first brings the statistics
//   up to date;
// - 3 000 random allocations fragment a pool; once the db-statistics worker has brought the
//   statistics up to date (it looks every --statistics-interval), allocations by every
//   strategy and a listing page read a handful of rows each;
// - with every statement planned generically (as a prepared statement may be after five runs, at
//   whatever moment the statistics make it look no dearer), allocations in a pool of 1 500 values
//   held still read a handful of rows each: "does the pool hold a lease past due" had been a
//   sequential scan of the pool's allocations in that plan (migration 017).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { rowsRead, statisticsCurrent } from '../helpers/planner-statistics.js';
import { startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

const TOP = 16_777_215;

/** A fresh database whose sessions plan every statement without its values: the generic plan PostgreSQL switches a prepared statement (and PL/pgSQL its own) to after five runs when it looks no dearer. */
async function genericPlansOnly(): Promise<string> {
  const url = await freshDatabaseUrl('postgres');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`alter database "${new URL(url).pathname.slice(1)}" set plan_cache_mode = force_generic_plan`);
  } finally {
    await admin.end();
  }
  return url;
}

/** A server on a fresh database whose identifier tables have statistics from one row of another pool, and no autovacuum. */
async function staleStatistics(statisticsInterval: number) {
  const url = await freshDatabaseUrl('postgres');
  const server = await startServer({ db: url, dbStatementTimeout: 5_000, statisticsInterval });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const api = new IdsClient(server.url);
  assert.equal((await api.post('/pools', { name: 'small', kind: 'integer', ranges: ['1-10'] })).status, 201);
  assert.equal((await api.post('/pools/small/allocations', { owner: 'one' })).status, 201);
  await admin.query('alter table ids_free_ranges set (autovacuum_enabled = false)');
  await admin.query('alter table ids_allocations set (autovacuum_enabled = false)');
  await admin.query('analyze ids_free_ranges, ids_allocations');
  assert.equal((await api.post('/pools', { name: 'big', kind: 'integer', ranges: [`1-${TOP}`] })).status, 201);
  return {
    api,
    admin,
    close: async () => {
      await admin.end();
      await server.close();
    },
  };
}

const TABLES = ['ids_free_ranges', 'ids_allocations'];

/** `count` random allocations from the pool `big` by 16 clients at once: its free spans scattered. */
async function fragment(api: IdsClient, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < count; i = next++) {
        const res = await api.post('/pools/big/allocations', { owner: `r${i}`, strategy: 'random' });
        assert.equal(res.status, 201, res.text);
      }
    }),
  );
}

describe('identifier queries whatever the planner statistics say (postgres)', () => {
  test('imports of 999 fill a pool to ~40 000 values within a 5 s statement timeout; allocations, listings and releases follow', async () => {
    const { api, admin, close } = await staleStatistics(60_000); // no help from the worker
    try {
      const imports = 40;
      const perImport = 999;
      // value i = i·419 + (i² mod 413): distinct and scattered; import b takes every 40th one
      const value = (i: number) => 1 + i * 419 + ((i * i) % 413);
      for (let b = 0; b < imports; b++) {
        const items = Array.from({ length: perImport }, (_, j) => ({ value: value(b + j * imports), owner: `i${b}-${j}` }));
        const res = await api.post('/pools/big/imports', { items });
        assert.equal(res.status, 200, `import ${b}: ${res.text}`);
        assert.equal(res.body.imported, perImport);
      }
      const spans = (await admin.query(`select count(*)::int as n from ids_free_ranges f join ids_pools p on p.id = f.pool_id where p.name = 'big'`)).rows[0].n;
      assert.ok(spans >= imports * perImport, `${spans} free spans`);

      for (const strategy of ['lowest', 'highest', 'next_after_last', 'random']) {
        const res = await api.post('/pools/big/allocations', { owner: `auto-${strategy}`, strategy });
        assert.equal(res.status, 201, `${strategy}: ${res.text}`);
      }
      const block = await api.post('/pools/big/allocations', { owner: 'block', count: 16 });
      assert.equal(block.status, 201, block.text);
      const explicit = await api.post('/pools/big/allocations', { owner: 'explicit', value: value(5) + 1 });
      assert.equal(explicit.status, 201, explicit.text);
      assert.equal((await api.post('/allocations', { allocations: [{ pool: 'big', owner: 'batch', count: 4 }] })).status, 201);

      const page = await api.get('/pools/big/free-ranges?limit=100');
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.items.length, 100);
      const next = await api.get(`/pools/big/free-ranges?limit=100&cursor=${encodeURIComponent(page.body.next_cursor)}`);
      assert.equal(next.status, 200, next.text);
      assert.ok(next.body.items[0].first > page.body.items[99].last);

      assert.equal((await api.delete(`/allocations/${explicit.body.id}`)).status, 204);
      assert.equal((await api.get('/pools/big')).body.utilization.allocations, imports * perImport + 6);
    } finally {
      await close();
    }
  });

  test('in a pool fragmented by 3 000 random allocations, once the db-statistics worker has looked, allocations by every strategy, count=N and a listing page read a handful of rows each', async () => {
    const { api, admin, close } = await staleStatistics(1_000);
    try {
      await fragment(api, 3_000);
      await statisticsCurrent(admin, TABLES);
      const asks: Array<[string, unknown]> = [
        ['lowest', { strategy: 'lowest' }],
        ['highest', { strategy: 'highest' }],
        ['next_after_last', { strategy: 'next_after_last' }],
        ['random', { strategy: 'random' }],
        ['count=16', { count: 16, strategy: 'random' }],
      ];
      const before = await rowsRead(admin, TABLES);
      for (const [what, ask] of asks) {
        const res = await api.post('/pools/big/allocations', { owner: `after-${what}`, ...(ask as object) });
        assert.equal(res.status, 201, `${what}: ${res.text}`);
      }
      assert.equal((await api.get('/pools/big/free-ranges?limit=50')).status, 200);
      // probes walk to their rows: a few each, a few per alignment class for count=N (~60 in all
      // measured, with the page of 50); one request reading the pool would read thousands
      const read = (await rowsRead(admin, TABLES)) - before;
      assert.ok(read < 600, `the six requests read ${read} rows`);
    } finally {
      await close();
    }
  });

  test('with every statement planned without its values, allocations by every strategy, single and in batches, read a handful of rows each', async () => {
    const url = await genericPlansOnly();
    const server = await startServer({ db: url });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const api = new IdsClient(server.url);
      assert.equal((await api.post('/pools', { name: 'big', kind: 'integer', ranges: [`1-${TOP}`] })).status, 201);
      await fragment(api, 1_500);
      const before = await rowsRead(admin, TABLES);
      for (const strategy of ['lowest', 'highest', 'next_after_last', 'random']) {
        for (let i = 0; i < 6; i++) {
          // one item: the pool read without its lock, then one statement (allot_take_auto); not
          // random's, whose generic plan may scan the pool's free spans while they are so few that
          // the scan costs less than the ten index probes it assumes (as it does here: 1 500)
          if (strategy !== 'random') {
            const one = await api.post('/pools/big/allocations', { owner: `${strategy}-${i}`, strategy });
            assert.equal(one.status, 201, `${strategy}: ${one.text}`);
          }
          // two items: the locked path (the pools' lock and its lease check, the probes)
          const batch = await api.post('/allocations', {
            allocations: [0, 1].map((j) => ({ pool: 'big', owner: `${strategy}-batch-${i}-${j}`, strategy })),
          });
          assert.equal(batch.status, 201, `${strategy} batch: ${batch.text}`);
        }
      }
      // 66 allocations in 42 requests; a plan that scanned the pool's allocations read 1 500 rows for each
      const read = (await rowsRead(admin, TABLES)) - before;
      assert.ok(read < 1_500, `66 allocations read ${read} rows`);
    } finally {
      await admin.end();
      await server.close();
    }
  });
});
