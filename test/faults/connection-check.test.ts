// A statement allot gave up on is cancelled by the server, not run later (issue 33). When a request's
// deadline passes, allot resets the connection its statement was sent on (dropConnection); a backend
// waiting for a row lock does not read the socket, so without a check it learns nothing and runs
// the statement once the lock frees — a one-statement write (its own transaction) then commits,
// after its client was told `commit_unknown`. With `client_connection_check_interval`
// (--db-connection-check-interval, 1 s by default) the server polls the connection while the
// statement runs and cancels it. Here an automatic identifier allocation (PostgreSQL: one statement
// that locks the pool's row) waits for the pool's row, which another session holds, past the
// request's deadline; the lock is let go only once the backend is gone, and no allocation was made.
// With the check off, the same statement still waits for the lock seconds later, and may apply when
// the lock is let go (whether it does depends on whether its backend writes to the dead connection
// before its commit: in a loaded run it applied three times in four) — what the check prevents.
// PostgreSQL only: SQLite has no connection to give up (one process, one in-process connection).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabaseUrl } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from '../ids/helpers.js';

const DEADLINE_MS = 1_500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The allot sessions of the database waiting for a lock. */
async function waitingForALock(watcher: pg.Client): Promise<number> {
  const { rows } = await watcher.query(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'allot' and wait_event_type = 'Lock'`,
  );
  return rows[0].n;
}

/** The allot sessions of the database still running a statement. */
async function running(watcher: pg.Client): Promise<number> {
  const { rows } = await watcher.query(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'allot' and state = 'active'`,
  );
  return rows[0].n;
}

/** Poll `until` every 50 ms for at most `ms`; whether it came true. */
async function within(ms: number, until: () => Promise<boolean>): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (await until()) return true;
  return until();
}

describe('a statement allot gave up on, waiting for a row lock (postgres)', () => {
  const setups = [
    ['with the connection check (the default)', {}],
    ['with the connection check off', { dbConnectionCheckInterval: 0 }],
  ] as const;
  const servers: Record<string, { server: TestServer; api: IdsClient; watcher: pg.Client; url: string }> = {};
  before(async () => {
    for (const [name, overrides] of setups) {
      const url = await freshDatabaseUrl('postgres');
      const server = await startServer({ db: url, requestDeadline: DEADLINE_MS, ...overrides });
      const watcher = new pg.Client({ connectionString: url });
      await watcher.connect();
      servers[name] = { server, api: new IdsClient(server.url), watcher, url };
    }
  });
  after(async () => {
    for (const s of Object.values(servers)) {
      await s.watcher.end();
      await s.server.close();
    }
  });

  /**
   * An allocation asked while another session holds the pool's row, answered when its deadline
   * passes; `beforeRelease` runs before the lock is let go. Resolves to the answer and how many
   * allocations the owner holds once the lock is gone and nothing waits for it any more.
   */
  async function givenUp(name: string, beforeRelease: () => Promise<void>): Promise<{ answer: HttpResponse; held: number }> {
    const { api, watcher, url } = servers[name]!;
    assert.equal((await api.post('/pools', { name: 'vni', kind: 'integer', ranges: ['1-10'] })).status, 201);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    let answer: HttpResponse;
    try {
      await locker.query('begin');
      await locker.query(`select id from ids_pools where name = 'vni' for update`);
      const asked = api.post('/pools/vni/allocations', { owner: 'given-up' });
      assert.ok(await within(10_000, async () => (await waitingForALock(watcher)) > 0), 'the allocation never waited for the pool');
      answer = await asked;
      await beforeRelease();
    } finally {
      await locker.query('rollback').catch(() => {});
      await locker.end();
    }
    // done, not only past the lock: the count below must see what it did
    assert.ok(await within(10_000, async () => (await running(watcher)) === 0), 'a statement still runs after the lock was let go');
    const { rows } = await watcher.query(`select count(*)::int as n from ids_allocations where owner = 'given-up'`);
    return { answer, held: rows[0].n };
  }

  test('with the connection check, the server cancels it: nothing applies once the lock frees', async () => {
    const { answer, held } = await givenUp(setups[0][0], async () => {
      // the reset reached the server; within an interval or two its backend gives the statement up
      assert.ok(await within(10_000, async () => (await waitingForALock(servers[setups[0][0]]!.watcher)) === 0), 'the statement still waits for the lock');
    });
    assert.equal(answer.status, 503, answer.text);
    assert.equal(answer.body.code, 'ids.database_unavailable');
    assert.equal(answer.body.fault, 'commit_unknown', answer.text);
    assert.equal(held, 0, 'the allocation given up on was made');
    assert.deepEqual(await servers[setups[0][0]]!.api.all('/pools/vni/allocations'), []);
  });

  test('with the check off, the same statement still waits for the lock long after allot gave up on it', async () => {
    const { answer } = await givenUp(setups[1][0], async () => {
      await sleep(3_000); // three intervals of the default check
      assert.equal(await waitingForALock(servers[setups[1][0]]!.watcher), 1, 'the statement no longer waits for the lock');
    });
    assert.equal(answer.status, 503, answer.text);
    assert.equal(answer.body.fault, 'commit_unknown', answer.text);
  });
});
