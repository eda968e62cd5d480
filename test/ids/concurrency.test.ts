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
      assert.equal((await api.get(`/pools/race-${strategy}`)).body.utilization.free, '0');
    });
  }
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

  for (const strategy of ['lowest', 'random']) {
    test(`${strategy}: 3 processes, 250 owners asking twice for 200 values`, async () => {
      await clients[0]!.post('/pools', { name: `pg-race-${strategy}`, kind: 'integer', ranges: ['1-200'], strategy });
      const outcomes = await stampede(clients, `pg-race-${strategy}`, 250, 2);
      checkNoDoubleHandout(outcomes, 200, 250);
      const held = await clients[1]!.all(`/pools/pg-race-${strategy}/allocations`);
      assert.equal(held.length, 200);
      assert.equal(new Set(held.map((a) => a.value)).size, 200);
    });
  }

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
