// Race-freedom of allocation: many concurrent clients on SQLite, several allot processes on one
// PostgreSQL. No value is ever handed to two owners, an owner asking twice at once gets one
// value, and a pool locked by a writer does not hold up allocations from another pool.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { type SpawnedServer, type TestServer, spawnServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

interface Outcome {
  owner: string;
  status: number;
  value?: number;
  code?: string;
}

/** `owners` × `askEach` requests at once, spread over the clients; returns every answer. */
async function stampede(clients: IdsClient[], pool: string, owners: number, askEach: number, strategy?: string): Promise<Outcome[]> {
  const requests: Array<Promise<Outcome>> = [];
  let n = 0;
  for (let ask = 0; ask < askEach; ask++) {
    for (let i = 0; i < owners; i++) {
      const client = clients[n++ % clients.length]!;
      const owner = `owner-${i}`;
      requests.push(
        client
          .post(`/pools/${pool}/allocations`, { owner, ...(strategy ? { strategy } : {}) })
          .then((res) => ({ owner, status: res.status, value: res.body.value, code: res.body.code })),
      );
    }
  }
  return Promise.all(requests);
}

function checkNoDoubleHandout(outcomes: Outcome[], capacity: number, owners: number): void {
  const byOwner = new Map<string, Set<number>>();
  const byValue = new Map<number, Set<string>>();
  for (const o of outcomes) {
    if (o.status === 201 || o.status === 200) {
      byOwner.set(o.owner, (byOwner.get(o.owner) ?? new Set()).add(o.value!));
      byValue.set(o.value!, (byValue.get(o.value!) ?? new Set()).add(o.owner));
    } else {
      assert.equal(o.status, 409, JSON.stringify(o));
      assert.equal(o.code, 'ids.pool_exhausted');
    }
  }
  for (const [owner, values] of byOwner) assert.equal(values.size, 1, `${owner} got ${[...values]}`);
  for (const [value, holders] of byValue) assert.equal(holders.size, 1, `${value} went to ${[...holders]}`);
  assert.equal(byOwner.size, Math.min(capacity, owners));
}

/**
 * The last few free values of a small pool, raced for by many owners with the random strategy:
 * every 201 carries a value no other answer carries, held by that owner afterwards; the rest are
 * the API's 409 ids.pool_exhausted (never a 500); the pool ends full.
 */
async function raceForTheLastValues(clients: IdsClient[], pool: string): Promise<void> {
  const api = clients[0]!;
  await api.post('/pools', { name: pool, kind: 'integer', ranges: ['1-64'], strategy: 'random' });
  const taken = Array.from({ length: 64 }, (_, i) => i + 1).filter((v) => v % 11 !== 0); // 5 left: 11, 22, 33, 44, 55
  assert.equal((await api.post(`/pools/${pool}/imports`, { items: taken.map((value) => ({ value, owner: `old-${value}` })) })).body.imported, 59);
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      clients[i % clients.length]!.post(`/pools/${pool}/allocations`, { owner: `late-${i}` }).then((r) => ({ owner: `late-${i}`, ...r })),
    ),
  );
  const won = answers.filter((a) => a.status === 201);
  for (const a of answers) if (a.status !== 201) problemCode(a, 409, 'ids.pool_exhausted');
  assert.deepEqual(
    won.map((a) => a.body.value as number).sort((a, b) => a - b),
    [11, 22, 33, 44, 55],
  );
  const held = new Map((await api.all(`/pools/${pool}/allocations`)).map((a) => [a.value as number, a.owner as string]));
  assert.equal(held.size, 64);
  for (const a of won) assert.equal(held.get(a.body.value), a.owner, `${a.body.value} is held by the owner it was answered to`);
  assert.equal((await api.get(`/pools/${pool}`)).body.utilization.free, 0);
}

/**
 * One owner+purpose asked for at once through every client (on PostgreSQL: 2 processes), for 30
 * owners: each ends with one allocation and every answer names it; a concurrent repeat that
 * differs (its metadata) is `ids.idempotency_mismatch` unless it came first.
 */
async function raceIdempotentRepeats(clients: IdsClient[], pool: string): Promise<void> {
  const api = clients[0]!;
  await api.post('/pools', { name: pool, kind: 'integer', ranges: ['1-1000'] });
  const asks = Array.from({ length: 30 }, (_, i) =>
    [clients[0]!, clients[1 % clients.length]!].map((c) => c.post(`/pools/${pool}/allocations`, { owner: `same-${i}`, purpose: 'p' })),
  );
  const differing = Array.from({ length: 30 }, (_, i) =>
    [0, 1].map((k) => clients[k % clients.length]!.post(`/pools/${pool}/allocations`, { owner: `diff-${i}`, metadata: { k } })),
  );
  const same = await Promise.all(asks.map((pair) => Promise.all(pair)));
  const diff = await Promise.all(differing.map((pair) => Promise.all(pair)));
  const held = await api.all(`/pools/${pool}/allocations`);
  assert.equal(held.length, 60, 'one allocation per owner+purpose');
  const byOwner = new Map(held.map((a) => [a.owner as string, a]));
  for (const [i, pair] of same.entries()) {
    assert.deepEqual(pair.map((r) => r.status).sort(), [200, 201], JSON.stringify(pair.map((r) => r.body)));
    for (const r of pair) assert.equal(r.body.value, byOwner.get(`same-${i}`).value);
  }
  for (const [i, pair] of diff.entries()) {
    const won = pair.filter((r) => r.status === 201);
    assert.equal(won.length, 1, JSON.stringify(pair.map((r) => r.body)));
    assert.equal(won[0]!.body.value, byOwner.get(`diff-${i}`).value);
    problemCode(pair.find((r) => r.status !== 201)!, 409, 'ids.idempotency_mismatch');
  }
}

function problemCode(res: { status: number; body: any }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.code, code);
}

describe('concurrent clients on SQLite', () => {
  let server: TestServer;
  let api: IdsClient;
  before(async () => {
    server = await startServer({ db: await freshDatabaseUrl('sqlite') });
    api = new IdsClient(server.url);
  });
  after(() => server.close());

  for (const strategy of ['lowest', 'random', 'next_after_last']) {
    test(`${strategy}: 150 owners asking twice at once for 100 values`, async () => {
      await api.post('/pools', { name: `race-${strategy}`, kind: 'integer', ranges: ['1000-1099'], strategy });
      const outcomes = await stampede([api], `race-${strategy}`, 150, 2);
      checkNoDoubleHandout(outcomes, 100, 150);
      const held = await api.all(`/pools/race-${strategy}/allocations`);
      assert.equal(held.length, 100);
      assert.equal((await api.get(`/pools/race-${strategy}`)).body.utilization.free, 0);
    });
  }

  test('random: 60 owners at once for the last 5 values of a small pool', () => raceForTheLastValues([api], 'last-few'));
  test('concurrent repeats of one owner+purpose end as one allocation, or as idempotency_mismatch when they differ', () =>
    raceIdempotentRepeats([api, api], 'repeats'));
});

describe('several allot processes on one PostgreSQL', () => {
  let url: string;
  const servers: SpawnedServer[] = [];
  let clients: IdsClient[];
  before(async () => {
    url = await freshDatabaseUrl('postgres');
    // start one first so the others find the schema migrated (they would also cope with racing)
    servers.push(await spawnServer(['--db', url]));
    servers.push(...(await Promise.all([spawnServer(['--db', url]), spawnServer(['--db', url])])));
    clients = servers.map((s) => new IdsClient(s.url));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  // lowest, highest, next_after_last: blocks chosen under the pool's lock by one statement (allot_take_auto); random: draws taken by compare-and-set
  for (const strategy of ['lowest', 'highest', 'next_after_last', 'random']) {
    test(`${strategy}: 3 processes, 250 owners asking twice for 200 values`, async () => {
      await clients[0]!.post('/pools', { name: `pg-race-${strategy}`, kind: 'integer', ranges: ['1-200'], strategy });
      const outcomes = await stampede(clients, `pg-race-${strategy}`, 250, 2);
      checkNoDoubleHandout(outcomes, 200, 250);
      const held = await clients[1]!.all(`/pools/pg-race-${strategy}/allocations`);
      assert.equal(held.length, 200);
      assert.equal(new Set(held.map((a) => a.value)).size, 200);
    });
  }

  // blocks of 4 across two free spans (50 is excluded): what allot_take_auto computes — aligned
  // runs, a span's remainders, the walk from one span to the next — raced by 3 processes
  for (const strategy of ['lowest', 'highest', 'next_after_last']) {
    test(`${strategy}: 3 processes, 70 owners at once for the 49 aligned blocks of 4 of a split pool`, async () => {
      const pool = `pg-blocks-${strategy}`;
      await clients[0]!.post('/pools', { name: pool, kind: 'integer', ranges: ['1-203'], excluded: [50], strategy });
      const answers = await Promise.all(
        Array.from({ length: 70 }, (_, i) => clients[i % 3]!.post(`/pools/${pool}/allocations`, { owner: `b-${i}`, count: 4 })),
      );
      const blocks = answers.filter((a) => a.status === 201).map((a) => [a.body.value as number, a.body.last_value as number] as const);
      for (const a of answers) if (a.status !== 201) assert.equal(a.body.code, 'ids.pool_exhausted', JSON.stringify(a.body));
      assert.equal(blocks.length, 49);
      const taken = new Set<number>();
      for (const [first, last] of blocks) {
        assert.equal(first % 4, 0, `block ${first}-${last} is aligned`);
        assert.equal(last, first + 3);
        assert.ok(first >= 4 && last <= 203 && (last < 50 || first > 50), `block ${first}-${last} lies in the pool, off 50`);
        for (let v = first; v <= last; v++) {
          assert.ok(!taken.has(v), `${v} handed out twice`);
          taken.add(v);
        }
      }
      const pools = await clients[1]!.get(`/pools/${pool}`);
      assert.equal(pools.body.utilization.used, 49 * 4);
    });
  }

  test('random: 3 processes, 60 owners at once for the last 5 values of a small pool', () => raceForTheLastValues(clients, 'pg-last-few'));
  test('concurrent repeats of one owner+purpose from 2 processes end as one allocation, or as idempotency_mismatch when they differ', () =>
    raceIdempotentRepeats(clients, 'pg-repeats'));

  test('atomic multi-pool batches from several processes never split or double-hand', async () => {
    await clients[0]!.post('/pools', { name: 'b-vni', kind: 'integer', ranges: ['1-60'] });
    await clients[0]!.post('/pools', { name: 'b-vlan', kind: 'integer', ranges: ['1-100'] });
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        clients[i % 3]!.post('/allocations', {
          allocations: [
            { pool: 'b-vlan', owner: `wire-${i}`, purpose: 'a' },
            { pool: 'b-vni', owner: `wire-${i}`, purpose: 'vni' },
          ],
        }),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 201).length, 60);
    assert.ok(answers.every((a) => a.status === 201 || a.body.code === 'ids.pool_exhausted'));
    const vlans = await clients[2]!.all('/pools/b-vlan/allocations');
    assert.equal(vlans.length, 60, 'a failed batch left no VLAN behind');
  });

  test('a pool locked by a writer does not hold up another pool', async () => {
    await clients[0]!.post('/pools', { name: 'busy', kind: 'integer', ranges: ['1-10'] });
    await clients[0]!.post('/pools', { name: 'idle', kind: 'integer', ranges: ['1-10'] });
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT id FROM ids_pools WHERE name = 'busy' FOR UPDATE");
      let busyDone = false;
      const busy = clients[1]!.post('/pools/busy/allocations', { owner: 'waits' }).then((r) => {
        busyDone = true;
        return r;
      });
      // While 'busy' is locked, 'idle' answers (from every process).
      for (const c of clients) assert.equal((await c.post('/pools/idle/allocations', { owner: `free-${c.baseUrl}` })).status, 201);
      assert.equal(busyDone, false, 'the busy pool cannot have allocated while its row is locked');
      await blocker.query('COMMIT');
      assert.equal((await busy).status, 201);
    } finally {
      await blocker.end();
    }
  });
});
