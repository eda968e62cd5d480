// A write whose statement reached PostgreSQL but whose answer never came back may be applied when
// the server carries on. The client must hear "outcome unknown" (503 commit_unknown), never a 503
// that says nothing was done. Here the server is frozen (SIGSTOP, as a hung host) while a claim for
// a new consumer is in flight — the one-statement claim, sent as a single implicit transaction —
// and resumed after allot gave the request up: the claim is then in place.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PlacementClient, request } from '../helpers/http.js';
import { type ControlledPostgres, startControlledPostgres } from '../helpers/pg-server.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a claim in flight when the database freezes', () => {
  let pg: ControlledPostgres;
  let server: SpawnedServer;
  let api: PlacementClient;
  before(async () => {
    pg = await startControlledPostgres();
    const db = await pg.createDatabase('allot_claim_outcome');
    server = await spawnServer(['--db', db, '--db-connect-timeout', '1', '--db-statement-timeout', '1', '--health-timeout', '0.5']);
    api = new PlacementClient(server.placementUrl);
  });
  after(async () => {
    pg?.freeze(false);
    await server?.stop();
    await pg?.destroy();
  });

  test('is answered 503 commit_unknown, and reading it back tells the outcome', async () => {
    const rp = randomUUID();
    assert.equal((await api.post('/resource_providers', { name: `outcome-${rp}`, uuid: rp })).status, 200);
    assert.equal(
      (await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 100 } } })).status,
      200,
    );
    const claim = (consumer: string) =>
      api.put(`/allocations/${consumer}`, {
        allocations: { [rp]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
    assert.equal((await claim(randomUUID())).status, 204); // the names it uses are known now
    // Several open connections in the pool, so the claim below is sent on one that is already
    // open even if a background check holds another when the server freezes (a new connection
    // would time out before anything is sent: a different case, tested in test/faults).
    for (const answer of await Promise.all(Array.from({ length: 4 }, () => claim(randomUUID())))) assert.equal(answer.status, 204);

    const consumer = randomUUID();
    pg.freeze(true);
    let answer: Awaited<ReturnType<typeof claim>> | undefined;
    try {
      answer = await claim(consumer);
    } finally {
      pg.freeze(false);
    }
    assert.equal(answer.status, 503, answer.text);
    assert.ok(answer.headers.get('retry-after'));
    assert.match(answer.body.errors[0].detail, /may or may not have been applied/, 'the outcome is reported unknown, not as nothing done');

    // The resumed server runs what it had received: the client learns that by reading back.
    const deadline = Date.now() + 20_000;
    while ((await request('GET', `${server.url}/readyz`)).status !== 200) {
      assert.ok(Date.now() < deadline, 'ready again');
      await sleep(100);
    }
    const held = await api.get(`/allocations/${consumer}`);
    assert.equal(held.status, 200);
    assert.deepEqual(held.body.allocations[rp]?.resources, { VCPU: 1 }, 'the claim the server had received is in place');
    assert.equal(server.process.exitCode, null);
  });
});
