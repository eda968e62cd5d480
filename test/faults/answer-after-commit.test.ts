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
});
