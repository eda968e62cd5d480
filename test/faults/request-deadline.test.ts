// One deadline per request (--request-deadline): a request's waits on PostgreSQL — for a pooled
// connection, for its statements, for its retries — end together when its deadline passes, however
// long each of them may wait on its own. The server is frozen (SIGSTOP, as a hung host): requests
// holding the pool's connections wait in a statement, the others wait for a connection; every one
// is answered 503 in its API's format once its deadline passes, long before the statement timeout,
// and what was answered as not done was not done. A freeze shorter than the deadline is waited out.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type HttpResponse, PlacementClient, request } from '../helpers/http.js';
import { type ControlledPostgres, startControlledPostgres } from '../helpers/pg-server.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DEADLINE_S = 2;
const POOL_SIZE = 2;
// Each wait alone would be allowed far longer than the deadline: a statement 20 s (+2 s before the
// client gives the connection up), a pooled connection 20 s, a new connection 10 s.
const SETTINGS = ['--request-deadline', String(DEADLINE_S), '--db-statement-timeout', '20', '--db-connect-timeout', '10', '--pool-size', String(POOL_SIZE)];
/** An answer past the deadline, plus room for a loaded machine; the waits on their own would take 20 s and more. */
const ANSWER_BOUND_MS = DEADLINE_S * 1_000 + 4_000;

interface Timed {
  res: HttpResponse;
  ms: number;
}

describe('a request carries one deadline over all its waits on the database', () => {
  let pg: ControlledPostgres;
  let server: SpawnedServer;
  let api: PlacementClient;
  let rp: string;
  before(async () => {
    pg = await startControlledPostgres();
    const db = await pg.createDatabase('allot_deadline');
    server = await spawnServer(['--db', db, '--health-timeout', '0.5', ...SETTINGS]);
    api = new PlacementClient(server.placementUrl);
    rp = randomUUID();
    assert.equal((await api.post('/resource_providers', { name: `deadline-${rp}`, uuid: rp })).status, 200);
    const inv = await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 1000 } } });
    assert.equal(inv.status, 200, inv.text);
  });
  after(async () => {
    pg?.freeze(false);
    await server?.stop();
    await pg?.destroy();
  });

  const claim = (consumer: string) =>
    api.put(`/allocations/${consumer}`, {
      allocations: { [rp]: { resources: { VCPU: 1 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
  const timed = async (send: () => Promise<HttpResponse>): Promise<Timed> => {
    const started = Date.now();
    const res = await send();
    return { res, ms: Date.now() - started };
  };
  const readyAgain = async () => {
    const deadline = Date.now() + 20_000;
    while ((await request('GET', `${server.url}/readyz`)).status !== 200) {
      assert.ok(Date.now() < deadline, 'ready again after the freeze');
      await sleep(100);
    }
  };

  test('frozen past the deadline: requests in a statement and requests waiting for a connection all answer 503 at the deadline', async () => {
    // the pool's connections are open, so the first requests below send statements at once
    for (const r of await Promise.all(Array.from({ length: POOL_SIZE }, () => claim(randomUUID())))) assert.equal(r.status, 204, r.text);

    const consumers = Array.from({ length: 3 * POOL_SIZE }, () => randomUUID());
    const generation = (await api.get(`/resource_providers/${rp}`)).body.generation;
    pg.freeze(true);
    let answers: Timed[];
    try {
      answers = await Promise.all([
        ...consumers.map((c) => timed(() => claim(c))),
        timed(() => api.get(`/resource_providers/${rp}/usages`)),
        timed(() => api.put(`/resource_providers/${rp}/traits`, { resource_provider_generation: generation, traits: ['CUSTOM_DEADLINE'] })),
      ]);
    } finally {
      pg.freeze(false);
    }
    for (const { res, ms } of answers) {
      assert.equal(res.status, 503, res.text);
      assert.ok(res.headers.get('retry-after'), 'a 503 says when to retry');
      assert.equal(res.body.errors[0].status, 503, 'in Placement’s error format');
      assert.ok(ms < ANSWER_BOUND_MS, `answered after ${ms} ms, past the deadline of ${DEADLINE_S} s`);
    }
    // Most of them never got a connection: they were waiting for the pool, not in a statement.
    const outOfTime = answers.filter(({ res }) => /ran out of time/.test(res.body.errors[0].detail));
    assert.ok(outOfTime.length >= answers.length - POOL_SIZE, `${outOfTime.length} of ${answers.length} answered as out of time`);

    // What was answered as not done was not done; an unknown outcome is whatever reading back shows.
    await readyAgain();
    for (const [i, consumer] of consumers.entries()) {
      const held = await api.get(`/allocations/${consumer}`);
      assert.equal(held.status, 200, held.text);
      const unknown = /may or may not have been applied/.test(answers[i]!.res.body.errors[0].detail);
      if (!unknown) assert.deepEqual(held.body.allocations, {}, `claim ${i}, answered ${answers[i]!.res.body.errors[0].detail}, was not applied`);
    }
    const traits = await api.get(`/resource_providers/${rp}/traits`);
    assert.deepEqual(traits.body.traits, [], 'the traits write answered 503 left nothing behind');
  });

  test('frozen for less than the deadline: the requests wait it out and succeed within the deadline', async () => {
    for (const r of await Promise.all(Array.from({ length: POOL_SIZE }, () => claim(randomUUID())))) assert.equal(r.status, 204, r.text);
    pg.freeze(true);
    const pending = Array.from({ length: 3 * POOL_SIZE }, () => timed(() => claim(randomUUID())));
    await sleep(DEADLINE_S * 250);
    pg.freeze(false);
    for (const { res, ms } of await Promise.all(pending)) {
      assert.equal(res.status, 204, res.text);
      assert.ok(ms < ANSWER_BOUND_MS, `answered after ${ms} ms`);
    }
    assert.equal(server.process.exitCode, null);
  });
});
