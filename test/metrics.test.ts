// GET /metrics, on both databases: scrape, run a known workload over HTTP (claims, conflicts,
// capacity refusals, a candidate search, one bare-metal allocation to active, identifier
// allocations), scrape again, and every counter moved by exactly what the workload did. Also: two
// servers in one process count apart, and who may scrape (noauth: loopback Host only, unless
// --metrics-public).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { IronicClient, allocationSettled, availableNode } from './baremetal/helpers.js';
import { DIALECTS, freshDatabaseUrl } from './helpers/databases.js';
import { PlacementClient, request } from './helpers/http.js';
import { type TestServer, startServer } from './helpers/server.js';
import { IdsClient } from './ids/helpers.js';

/** One scrape: `name{labels}` → value, labels in the order the server wrote them. */
type Samples = Map<string, number>;

async function scrape(server: TestServer): Promise<Samples> {
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const samples: Samples = new Map();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** A sample's value (0 when absent: a counter never touched). Labels as `{a="x",b="y"}` in any order. */
function value(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const [key, v] of samples) {
    const brace = key.indexOf('{');
    const keyName = brace < 0 ? key : key.slice(0, brace);
    if (keyName !== name) continue;
    const have = brace < 0 ? [] : key.slice(brace + 1, -1).split(/,(?=[a-z_]+=")/);
    if (have.length === wanted.length && wanted.every((w) => have.includes(w))) return v;
  }
  return 0;
}

const moved = (before: Samples, after: Samples, name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);

for (const dialect of DIALECTS) {
  describe(`GET /metrics (${dialect})`, () => {
    let server: TestServer;
    let placement: PlacementClient;
    let ironic: IronicClient;
    let ids: IdsClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20, takeoverInterval: 0 });
      placement = new PlacementClient(server.placementUrl);
      ironic = new IronicClient(`${server.url}/baremetal`);
      ids = new IdsClient(server.url);
    });
    after(() => server.close());

    test('after a known workload every counter moved by exactly what it did', async () => {
      // Set-up (before the first scrape): a provider with 10 VCPU, a node to allocate, a pool.
      const rp = randomUUID();
      assert.equal((await placement.post('/resource_providers', { name: 'metrics-rp', uuid: rp })).status, 200);
      assert.equal(
        (await placement.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 10 } } })).status,
        200,
      );
      await availableNode(ironic, { name: 'metrics-node', resource_class: 'metrics-gold' });
      assert.equal((await ids.post('/pools', { name: 'metrics-vlan', kind: 'integer', ranges: ['1-100'] })).status, 201);
      // a prefix pool counts its /30s (64 in the /24): a /29 holds two, a /31 and a /32 share one
      assert.equal((await ids.post('/pools', { name: 'metrics-p2p', kind: 'prefix', ranges: ['10.0.0.0/24'], prefix_length: 30 })).status, 201);
      for (const [value, length] of [
        ['10.0.0.8/29', 29],
        ['10.0.0.20/31', 31],
        ['10.0.0.23/32', 32],
      ] as const)
        assert.equal((await ids.post('/pools/metrics-p2p/allocations', { owner: `p${length}`, value, prefix_length: length })).status, 201);

      const before = await scrape(server);

      // 3 claims, 2 consumer-generation conflicts, 2 capacity refusals
      const CLAIMS = 3;
      const CONFLICTS = 2;
      const REFUSALS = 2;
      const consumers: string[] = [];
      for (let i = 0; i < CLAIMS; i++) {
        const consumer = randomUUID();
        consumers.push(consumer);
        const res = await placement.put(`/allocations/${consumer}`, {
          allocations: { [rp]: { resources: { VCPU: 1 } } },
          consumer_type: 'INSTANCE',
          project_id: randomUUID(),
          user_id: randomUUID(),
          consumer_generation: null,
        });
        assert.equal(res.status, 204, res.text);
      }
      for (let i = 0; i < CONFLICTS; i++) {
        const res = await placement.put(`/allocations/${consumers[0]}`, {
          allocations: { [rp]: { resources: { VCPU: 2 } } },
          consumer_type: 'INSTANCE',
          project_id: randomUUID(),
          user_id: randomUUID(),
          consumer_generation: 99,
        });
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.errors[0].code, 'placement.concurrent_update');
      }
      for (let i = 0; i < REFUSALS; i++) {
        const res = await placement.put(`/allocations/${randomUUID()}`, {
          allocations: { [rp]: { resources: { VCPU: 100 } } },
          consumer_type: 'INSTANCE',
          project_id: randomUUID(),
          user_id: randomUUID(),
          consumer_generation: null,
        });
        assert.equal(res.status, 409, res.text);
        assert.match(res.body.errors[0].detail, /would exceed the capacity/);
      }
      // one candidate search
      const found = await placement.get('/allocation_candidates?resources=VCPU:1');
      assert.equal(found.status, 200, found.text);
      // one bare-metal allocation, to active
      const posted = await ironic.post('/v1/allocations', { resource_class: 'metrics-gold' });
      assert.equal(posted.status, 201, posted.text);
      assert.equal((await allocationSettled(ironic, posted.body.uuid)).state, 'active');
      // 5 identifier allocations
      const ID_ALLOCATIONS = 5;
      for (let i = 0; i < ID_ALLOCATIONS; i++) assert.equal((await ids.post('/pools/metrics-vlan/allocations', { owner: `o${i}` })).status, 201);

      const after = await scrape(server);

      const claims = (outcome: string) => moved(before, after, 'allot_placement_claims_total', { outcome });
      assert.equal(claims('claimed'), CLAIMS);
      assert.equal(claims('conflict'), CONFLICTS);
      assert.equal(claims('capacity_refused'), REFUSALS);
      assert.equal(claims('refused'), 0);
      assert.equal(claims('failed'), 0);
      // sequential clients lose no races
      assert.equal(moved(before, after, 'allot_placement_claim_retries_total'), 0);
      assert.equal(moved(before, after, 'allot_transaction_retries_total', { reason: 'conflict' }), 0);
      assert.equal(moved(before, after, 'allot_transaction_retries_total', { reason: 'fault' }), 0);

      const requests = (route: string, method: string, status_class: string) =>
        moved(before, after, 'allot_http_requests_total', { api: 'placement', route, method, status_class });
      assert.equal(requests('/allocations/:consumer_uuid', 'PUT', '2xx'), CLAIMS);
      assert.equal(requests('/allocations/:consumer_uuid', 'PUT', '4xx'), CONFLICTS + REFUSALS);
      assert.equal(requests('/allocation_candidates', 'GET', '2xx'), 1);
      assert.equal(
        moved(before, after, 'allot_http_request_duration_seconds_count', { api: 'placement', route: '/allocations/:consumer_uuid', method: 'PUT' }),
        CLAIMS + CONFLICTS + REFUSALS,
      );
      assert.equal(
        moved(before, after, 'allot_http_requests_total', { api: 'ids', route: '/v1/pools/:pool/allocations', method: 'POST', status_class: '2xx' }),
        ID_ALLOCATIONS,
      );
      assert.equal(moved(before, after, 'allot_http_requests_total', { api: 'baremetal', route: '/v1/allocations', method: 'POST', status_class: '2xx' }), 1);

      assert.equal(moved(before, after, 'allot_placement_candidate_searches_total'), 1);
      assert.equal(moved(before, after, 'allot_placement_candidates_returned_total'), found.body.allocation_requests.length);
      assert.ok(moved(before, after, 'allot_placement_candidate_options_tried_total') >= 1);

      assert.equal(moved(before, after, 'allot_baremetal_allocations_finished_total', { state: 'active' }), 1);
      assert.equal(moved(before, after, 'allot_baremetal_allocations_finished_total', { state: 'error' }), 0);
      assert.equal(moved(before, after, 'allot_baremetal_allocation_seconds_count'), 1);
      assert.equal(moved(before, after, 'allot_baremetal_allocations', { state: 'active' }), 1);
      assert.equal(moved(before, after, 'allot_baremetal_takeovers_total', { kind: 'allocation' }), 0);

      assert.equal(value(before, 'allot_ids_pool_values', { pool: 'metrics-vlan' }), 100);
      assert.deepEqual(
        ['allot_ids_pool_values', 'allot_ids_pool_used_values', 'allot_ids_pool_utilization_ratio'].map((m) => value(after, m, { pool: 'metrics-p2p' })),
        [64, 3, 3 / 64],
      );
      assert.equal(moved(before, after, 'allot_ids_pool_used_values', { pool: 'metrics-vlan' }), ID_ALLOCATIONS);
      assert.equal(
        value(after, 'allot_ids_pool_utilization_ratio', { pool: 'metrics-vlan' }),
        value(after, 'allot_ids_pool_used_values', { pool: 'metrics-vlan' }) / 100,
      );

      if (dialect === 'sqlite') {
        // Every write of the workload was committed in some batch; the conductor's own writes (heartbeats) may add more.
        const writes = CLAIMS + CONFLICTS + REFUSALS + ID_ALLOCATIONS + 1; // + the bare-metal POST, which takes its node in the same transaction
        assert.ok(moved(before, after, 'allot_sqlite_commit_batch_size_sum') >= writes, 'batch sizes sum up the committed writes');
        assert.equal(value(after, 'allot_db_pool_waiting'), 0, 'no PostgreSQL pool on SQLite');
        assert.ok(!after.has('allot_db_pool_waiting'));
      } else {
        assert.ok(value(after, 'allot_db_pool_connections', { state: 'total' }) >= 1);
        assert.ok(after.has('allot_db_pool_waiting'));
        assert.ok(!after.has('allot_sqlite_commit_batch_size_count') || value(after, 'allot_sqlite_commit_batch_size_count') === 0);
      }
    });

    test("the process's own series: CPU, memory, event-loop lag, heap (prom-client's default metrics)", async () => {
      const samples = await scrape(server);
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'process_start_time_seconds',
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
      ]) {
        assert.ok(samples.has(name), `GET /metrics has ${name}`);
      }
      assert.ok(value(samples, 'process_resident_memory_bytes') > 0);
      assert.ok(value(samples, 'process_cpu_user_seconds_total') > 0);
    });

    test('a second server in the same process keeps its own counts', async () => {
      const other = await startServer({ db: await freshDatabaseUrl(dialect) });
      try {
        const mine = await scrape(server);
        const theirs = await scrape(other);
        assert.ok(value(mine, 'allot_placement_claims_total', { outcome: 'claimed' }) >= 3);
        assert.equal(value(theirs, 'allot_placement_claims_total', { outcome: 'claimed' }), 0);
        assert.equal((await new PlacementClient(other.placementUrl).get('/resource_providers')).status, 200);
        const again = await scrape(server);
        assert.equal(
          moved(mine, again, 'allot_http_requests_total', { api: 'placement', route: '/resource_providers', method: 'GET', status_class: '2xx' }),
          0,
        );
        assert.equal(
          value(await scrape(other), 'allot_http_requests_total', { api: 'placement', route: '/resource_providers', method: 'GET', status_class: '2xx' }),
          1,
        );
      } finally {
        await other.close();
      }
    });
  });
}

/** GET /metrics with a chosen Host header (fetch cannot set one). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

describe('who may scrape /metrics (noauth)', () => {
  test('loopback names only, as every API in noauth; unknown routes are labelled, not recorded by path', async () => {
    const server = await startServer({ db: 'sqlite::memory:' });
    try {
      const port = new URL(server.url).port;
      const refused = await getWithHost(`${server.url}/metrics`, `evil.example:${port}`);
      assert.equal(refused.status, 403);
      assert.match(JSON.parse(refused.body).error, /Host "evil\.example:\d+" is not allowed/);
      assert.equal((await getWithHost(`${server.url}/metrics`, `localhost:${port}`)).status, 200);
      // raw paths never become labels
      assert.equal((await request('GET', `${server.url}/placement/no/such/${randomUUID()}`, undefined, { headers: { 'x-auth-token': 'admin' } })).status, 404);
      const text = (await getWithHost(`${server.url}/metrics`, `localhost:${port}`)).body;
      assert.match(text, /allot_http_requests_total\{api="placement",route="unmatched",method="GET",status_class="4xx"\} 1/);
      assert.doesNotMatch(text, /no\/such/);
    } finally {
      await server.close();
    }
  });

  test('--metrics-public serves any Host', async () => {
    const server = await startServer({ db: 'sqlite::memory:', metricsPublic: true });
    try {
      const port = new URL(server.url).port;
      const res = await getWithHost(`${server.url}/metrics`, `prometheus.example:${port}`);
      assert.equal(res.status, 200);
      assert.match(res.body, /# TYPE allot_http_requests_total counter/);
    } finally {
      await server.close();
    }
  });
});
