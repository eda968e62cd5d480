// A service instance's change is committed first and its answer read after (services/
// service-instances.ts, detailsAfterCommit). A database fault in those reads comes after the
// commit: the client must hear `commit_unknown` (read it back), never a fault that means "nothing
// was done". Found by the chaos run (npm run test:chaos -- --seed 33 --minutes 4): a validate
// answered `503 timeout` when its request deadline passed in the reads after the commit, and the
// instance's value was allocated. Here the reads are held up for real: another session holds an
// ACCESS EXCLUSIVE lock on ids_outbox, which the answer's reads need and a pool-only validate's
// transaction does not, until the request's deadline passes. On the old code the answer was
// `503 timeout`. (PostgreSQL only: SQLite's readers do not wait on a lock.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import http from 'node:http';
import pg from 'pg';
import { freshDatabaseUrl } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from '../ids/helpers.js';

const DEADLINE_MS = 2_000;

describe('a fault in the reads of the answer after a committed change (postgres)', () => {
  let url: string;
  let server: TestServer;
  let api: IdsClient;
  before(async () => {
    url = await freshDatabaseUrl('postgres');
    server = await startServer({ db: url, requestDeadline: DEADLINE_MS });
    api = new IdsClient(server.url);
    assert.equal((await api.post('/pools', { name: 'vni', kind: 'integer', ranges: ['1-10'] })).status, 201);
    assert.equal((await api.post('/allocation-specs', { name: 'wire', attributes: { vni: { from: 'pool', pool: 'vni' } } })).status, 201);
  });
  after(() => server?.close());

  test('a validate whose answer cannot be read is answered commit_unknown, and it was applied', async () => {
    const created = await api.post('/service-instances', { allocation_spec: 'wire', attributes: {} });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    assert.equal(created.body.candidate_validated, false);

    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    let answer: HttpResponse;
    try {
      await locker.query('begin');
      await locker.query('lock table ids_outbox in access exclusive mode');
      answer = await api.post(`/service-instances/${id}/validate`);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    assert.equal(answer.status, 503, answer.text);
    assert.equal(answer.body.code, 'ids.database_unavailable');
    assert.equal(answer.body.fault, 'commit_unknown', answer.text);

    // read back: the validate was applied, its value allocated
    const read = await api.get(`/service-instances/${id}`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.candidate_validated, true, read.text);
    const vni = read.body.candidate_attributes.vni;
    assert.ok(Number.isInteger(vni) && vni >= 1 && vni <= 10, read.text);
  });

  // The same fault when the client has gone away meanwhile (its socket closed: a timeout, a
  // partition). Nobody reads the answer, but the log and the request metrics must still say the
  // write may have happened — not a 408 "the request did not arrive in full", which a bodyless
  // request whose client left used to get. (Found reading the chaos run's logs.)
  test('is still commit_unknown (a 5xx) when the client went away before the answer', async () => {
    const created = await api.post('/service-instances', { allocation_spec: 'wire', attributes: {} });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const before = await answeredByClass();

    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table ids_outbox in access exclusive mode');
      await leaveAfterSending(`/ids/v1/service-instances/${id}/validate`, 300);
      // the server answers (to nobody) once its deadline passes
      await new Promise((r) => setTimeout(r, DEADLINE_MS + 1_000));
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    const after = await answeredByClass();
    assert.equal(after['5xx'] - before['5xx'], 1, `answers by class before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
    assert.equal(after['4xx'] - before['4xx'], 0, `answers by class before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
    const read = await api.get(`/service-instances/${id}`);
    assert.equal(read.body.candidate_validated, true, read.text);
  });

  /** The identifier API's answers so far by status class, from GET /metrics. */
  async function answeredByClass(): Promise<Record<'4xx' | '5xx', number>> {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const out = { '4xx': 0, '5xx': 0 };
    for (const line of text.split('\n')) {
      const m = /^allot_http_requests_total\{(.*)\} (\d+)$/.exec(line);
      if (!m || !m[1]!.includes('api="ids"')) continue;
      const cls = /status_class="(\dxx)"/.exec(m[1]!)?.[1];
      if (cls === '4xx' || cls === '5xx') out[cls] += Number(m[2]);
    }
    return out;
  }

  /** POST `path` with no body and close the connection `ms` later, before any answer. */
  function leaveAfterSending(path: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const req = http.request(`${server.url}${path}`, { method: 'POST', headers: { 'content-length': '0' } });
      req.on('error', () => {}); // destroyed on purpose
      req.end();
      setTimeout(() => {
        req.destroy();
        resolve();
      }, ms);
    });
  }
});
