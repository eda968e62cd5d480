// The database fails under a running allot: its backends are terminated mid-load, it restarts, it
// freezes (every process SIGSTOPped, as a hung host), and allot starts while it is down. In each
// case: no allot process exits, requests that meet the fault answer 503 (with Retry-After, in the
// API's own format) within a bounded time and never 500, every acknowledged claim is there
// afterwards, and the service works again once the database does.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PlacementClient, request } from '../helpers/http.js';
import { type ControlledPostgres, startControlledPostgres } from '../helpers/pg-server.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode } from '../baremetal/helpers.js';
import { IdsClient } from '../ids/helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Short bounds, so that each fault resolves within seconds.
const TIMEOUTS = ['--db-connect-timeout', '1', '--db-statement-timeout', '1', '--health-timeout', '0.5'];
// An allocation waits half a second before its worker looks for a node, so that an outage begun
// right after the POST meets the worker.
const FAST_BAREMETAL = ['--transition-time', '0.05', '--allocation-delay', '0.5', '--heartbeat-interval', '0.5', '--heartbeat-timeout', '5'];
/** A fault answer may take the statement timeout, the client's grace after it, and the retries. */
const FAULT_ANSWER_BOUND_MS = 2 * (1_000 + 2_000 + 1_000);

interface Outcome {
  status: number;
  /** when the request was sent (Date.now()) */
  startedAt: number;
  ms: number;
  text: string;
  retryAfter: string | null;
}

/** Claims one VCPU for new consumers in a loop until `stop()`, recording every answer. */
function claimLoop(api: PlacementClient, rp: string, clients: number) {
  const acknowledged: string[] = [];
  const outcomes: Outcome[] = [];
  let stopped = false;
  const one = async () => {
    while (!stopped) {
      const consumer = randomUUID();
      const started = Date.now();
      const res = await api
        .put(`/allocations/${consumer}`, {
          allocations: { [rp]: { resources: { VCPU: 1 } } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        })
        .catch((err: Error) => ({ status: 0, text: err.message, headers: new Headers() }));
      outcomes.push({ status: res.status, startedAt: started, ms: Date.now() - started, text: res.text, retryAfter: res.headers.get('retry-after') });
      if (res.status === 204) acknowledged.push(consumer);
      if (res.status !== 204) await sleep(20);
    }
  };
  const running = Array.from({ length: clients }, one);
  return {
    acknowledged,
    outcomes,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

async function makeProvider(api: PlacementClient): Promise<string> {
  const rp = randomUUID();
  assert.equal((await api.post('/resource_providers', { name: `faults-${rp}`, uuid: rp })).status, 200);
  const inv = await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 1_000_000 } } });
  assert.equal(inv.status, 200, inv.text);
  return rp;
}

/** Every acknowledged consumer holds its claim; usage equals the allocations that exist. */
async function checkNothingLost(api: PlacementClient, rp: string, acknowledged: string[]) {
  const { body } = await api.get(`/resource_providers/${rp}/allocations`);
  const present = new Set(Object.keys(body.allocations));
  const lost = acknowledged.filter((c) => !present.has(c));
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged claims were lost`);
  const usages = await api.get(`/resource_providers/${rp}/usages`);
  assert.equal(usages.body.usages.VCPU, present.size, 'usage counts exactly the allocations that exist');
}

/** Only 204, or 503 in Placement's format with Retry-After, within the bound; never 500. */
function checkOutcomes(outcomes: Outcome[]) {
  for (const o of outcomes) {
    if (o.status === 204) continue;
    assert.equal(o.status, 503, `a claim during the fault answered ${o.status}: ${o.text}`);
    assert.ok(o.retryAfter, 'a 503 says when to retry');
    assert.equal(JSON.parse(o.text).errors[0].status, 503);
    assert.ok(o.ms < FAULT_ANSWER_BOUND_MS, `a claim during the fault took ${o.ms} ms`);
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  assert.fail(`${what} did not happen within ${timeoutMs} ms`);
}

const status = async (url: string) => (await request('GET', url)).status;

describe('PostgreSQL faults under a running allot', () => {
  let pg: ControlledPostgres;
  let server: SpawnedServer;
  let api: PlacementClient;
  before(async () => {
    pg = await startControlledPostgres();
    const db = await pg.createDatabase('allot_faults');
    server = await spawnServer(['--db', db, ...TIMEOUTS, ...FAST_BAREMETAL]);
    api = new PlacementClient(server.placementUrl);
  });
  after(async () => {
    await server?.stop();
    await pg?.destroy();
  });

  const alive = () => assert.equal(server.process.exitCode, null, `allot exited:\n${server.output().slice(-3000)}`);

  test('backends terminated under load: only the requests that used them fail, nothing acknowledged is lost', async () => {
    const rp = await makeProvider(api);
    const load = claimLoop(api, rp, 16);
    for (let fault = 1; fault <= 5; fault++) {
      await sleep(400);
      await pg.terminateBackends('allot_faults');
      const at = Date.now();
      // allot recovers by itself: a claim sent after this fault is acknowledged (how many is load, not correctness)
      await waitFor(`a claim sent after fault ${fault} acknowledged`, async () => load.outcomes.some((o) => o.status === 204 && o.startedAt >= at));
    }
    await load.stop();
    alive();
    checkOutcomes(load.outcomes);
    await checkNothingLost(api, rp, load.acknowledged);
  });

  test('a restart: 503 in each API format while it is down, /readyz says so, everything works after', async () => {
    const rp = await makeProvider(api);
    const load = claimLoop(api, rp, 8);
    await sleep(300);
    await pg.stop();
    // While it is down: each API answers 503 in its own format, quickly.
    const started = Date.now();
    const placement = await api.get('/resource_providers');
    assert.equal(placement.status, 503, placement.text);
    assert.equal(placement.body.errors[0].status, 503);
    const baremetal = await request('GET', `${server.url}/baremetal/v1/nodes`, undefined, { headers: { 'x-openstack-ironic-api-version': '1.82' } });
    assert.equal(baremetal.status, 503, baremetal.text);
    assert.equal(JSON.parse(baremetal.body.error_message).faultcode, 'Server');
    const ids = await request('GET', `${server.url}/ids/v1/pools`);
    assert.equal(ids.status, 503, ids.text);
    assert.equal(ids.headers.get('content-type'), 'application/problem+json');
    assert.equal(ids.body.code, 'ids.database_unavailable');
    assert.ok(Date.now() - started < 3 * FAULT_ANSWER_BOUND_MS);
    assert.equal(await status(`${server.url}/readyz`), 503);
    assert.equal(await status(`${server.url}/healthz`), 503);
    await sleep(1_000);
    await pg.start();
    await waitFor('ready again', async () => (await status(`${server.url}/readyz`)) === 200);
    await sleep(300);
    await load.stop();
    alive();
    checkOutcomes(load.outcomes);
    assert.ok(
      load.outcomes.some((o) => o.status === 503),
      'the outage was seen',
    );
    assert.equal((await api.get('/resource_providers')).status, 200);
    await checkNothingLost(api, rp, load.acknowledged);
  });

  test('a frozen database: requests and health checks answer 503 within their timeouts, then recover', async () => {
    const rp = await makeProvider(api);
    pg.freeze(true);
    try {
      let started = Date.now();
      const health = await request('GET', `${server.url}/healthz`);
      assert.equal(health.status, 503);
      assert.ok(Date.now() - started < 2 * 500 + 200, `/healthz took ${Date.now() - started} ms`);
      started = Date.now();
      const ready = await request('GET', `${server.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.ok(Date.now() - started < 2 * 500 + 200, `/readyz took ${Date.now() - started} ms`);
      started = Date.now();
      const claims = await Promise.all(
        Array.from({ length: 4 }, () =>
          api.put(`/allocations/${randomUUID()}`, {
            allocations: { [rp]: { resources: { VCPU: 1 } } },
            project_id: 'p',
            user_id: 'u',
            consumer_generation: null,
            consumer_type: 'INSTANCE',
          }),
        ),
      );
      for (const c of claims) assert.equal(c.status, 503, c.text);
      assert.ok(Date.now() - started < FAULT_ANSWER_BOUND_MS, `claims against a frozen database took ${Date.now() - started} ms`);
    } finally {
      pg.freeze(false);
    }
    await waitFor('ready again', async () => (await status(`${server.url}/readyz`)) === 200);
    const consumer = randomUUID();
    const claim = await api.put(`/allocations/${consumer}`, {
      allocations: { [rp]: { resources: { VCPU: 1 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
    assert.equal(claim.status, 204, claim.text);
    alive();
  });

  test('a bare-metal allocation whose worker meets an outage finishes once the database is back', async () => {
    const ironic = new IronicClient(`${server.url}/baremetal`);
    const rc = `faults-${randomUUID().slice(0, 8)}`;
    const node = await availableNode(ironic, { resource_class: rc });
    const created = await ironic.post('/v1/allocations', { resource_class: rc });
    assert.equal(created.status, 201, created.text);
    await pg.stop();
    await sleep(1_500);
    await pg.start();
    const allocation = await allocationSettled(ironic, created.body.uuid);
    assert.equal(allocation.state, 'active', allocation.last_error);
    assert.equal(allocation.node_uuid, node.uuid);
    assert.match(server.output(), /allocation waits for the database/, 'the worker did meet the outage');
    alive();
  });

  test('identifiers: every acknowledged allocation is held once, across a restart', async () => {
    const ids = new IdsClient(server.url);
    const pool = `faults-${randomUUID().slice(0, 8)}`;
    assert.equal((await ids.post('/pools', { name: pool, kind: 'integer', ranges: ['1-100000'] })).status, 201);
    const acknowledged = new Map<string, string>();
    let stopped = false;
    const client = async (n: number) => {
      for (let i = 0; !stopped; i++) {
        const owner = `o-${n}-${i}`;
        const res = await ids.post(`/pools/${pool}/allocations`, { owner }).catch(() => null);
        if (res && (res.status === 200 || res.status === 201)) acknowledged.set(owner, String(res.body.value));
        else if (res) assert.equal(res.status, 503, res.text);
        if (!res || res.status === 503) await sleep(20);
      }
    };
    const clients = Array.from({ length: 8 }, (_, n) => client(n));
    await sleep(300);
    await pg.stop();
    await sleep(1_000);
    await pg.start();
    await waitFor('ready again', async () => (await status(`${server.url}/readyz`)) === 200);
    await sleep(300);
    stopped = true;
    await Promise.all(clients);
    const held = await ids.all(`/pools/${pool}/allocations?limit=1000`);
    const byValue = new Map<string, string>();
    for (const a of held) {
      assert.ok(!byValue.has(String(a.value)), `value ${a.value} is held twice`);
      byValue.set(String(a.value), a.owner);
    }
    for (const [owner, value] of acknowledged) assert.equal(byValue.get(value), owner, `acknowledged ${value} for ${owner} is held by it`);
    alive();
  });

  test('allot starts while the database is down, answers 503 until it is back, then serves', async () => {
    const db = await pg.createDatabase('allot_late');
    await pg.stop();
    const late = await spawnServer(['--db', db, ...TIMEOUTS], {}, { waitFor: 'listening' });
    try {
      const ready = await request('GET', `${late.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(ready.body.reason, /starting/);
      const placement = await new PlacementClient(late.placementUrl).get('/resource_providers');
      assert.equal(placement.status, 503, placement.text);
      assert.ok(placement.headers.get('retry-after'));
      await sleep(1_500);
      assert.equal(late.process.exitCode, null, 'allot keeps waiting for its database');
      await pg.start();
      await waitFor('ready', async () => (await status(`${late.url}/readyz`)) === 200);
      assert.equal((await new PlacementClient(late.placementUrl).get('/resource_providers')).status, 200);
    } finally {
      await late.stop();
    }
  });

  test('a request that arrives while allot is still starting waits for it rather than failing', async () => {
    const db = await pg.createDatabase('allot_early');
    const early = await spawnServer(['--db', db], {}, { waitFor: 'listening' });
    try {
      // Sent the moment the port is open, before the schema is migrated: answered once it is.
      const [placement, ids] = await Promise.all([
        new PlacementClient(early.placementUrl).get('/resource_providers'),
        request('GET', `${early.url}/ids/v1/pools`),
      ]);
      assert.equal(placement.status, 200, placement.text);
      assert.equal(ids.status, 200, ids.text);
    } finally {
      await early.stop();
    }
  });

  test('`allot migrate` waits for the database, and gives up with a clear message after --wait', async () => {
    const db = await pg.createDatabase('allot_migrate');
    await pg.stop();
    try {
      const started = Date.now();
      const run = spawnSync(process.execPath, [path.join(root, 'dist/cli/main.js'), 'migrate', '--db', db, '--wait', '2', '--db-connect-timeout', '0.5'], {
        encoding: 'utf8',
      });
      assert.notEqual(run.status, 0);
      assert.match(run.stderr, /did not become reachable within 2s/);
      assert.ok(Date.now() - started >= 2_000);
    } finally {
      await pg.start();
    }
    const run = spawnSync(process.execPath, [path.join(root, 'dist/cli/main.js'), 'migrate', '--db', db], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /applied: 001-placement/);
  });
});
