// Identifier leases and conductor heartbeats are timed on the database's clock (db/database-clock.ts),
// not on the clock of whichever process wrote them (issue 33): on PostgreSQL two `allot serve`
// processes, the second with its wall clock (libfaketime) SKEW_S behind, ten times a lease's TTL.
// A lease written through the skewed process answers an expiry on the true clock, is not released
// by the other before then nor its value handed out again, and is released once it is due; the
// skewed process releases another's lease when it is due too, and the other sees its heartbeat
// alive. On SQLite (one host: its process clock is the database's) the same lease story runs on one
// process. Each check fails on code that times leases on the writing process's clock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FAKETIME_LIB } from '../chaos/processes.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { IronicClient } from '../baremetal/helpers.js';
import { IdsClient } from './helpers.js';

const TTL_S = 3;
const SKEW_S = 30;
/** how far an expiry may be from the test's clock (the same host's as the database's): the offset's measurement and a loaded machine */
const CLOCK_TOLERANCE_MS = 500;
/** longest wait for a due lease to be released; shorter than the skew, so a release on the skewed clock misses it */
const RELEASE_WAIT_MS = 15_000;
const SKEWED_CLOCK = { LD_PRELOAD: FAKETIME_LIB, FAKETIME: `-${SKEW_S}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
const ARGS = ['--ids-worker-interval-ms', '100', '--heartbeat-interval', '1', '--heartbeat-timeout', '10'];

/** Allocate `owner` from `pool` through `api`: the answer, and when it was received (the test's clock). */
async function allocate(api: IdsClient, pool: string, owner: string) {
  const res = await api.post(`/pools/${pool}/allocations`, { owner });
  return { ...res, at: Date.now() };
}

/**
 * Ask `api` for the one value of `pool`, held by `lease`, until it is handed out: never before
 * `heldUntil` (an answer received earlier is a refusal, and the lease still reads as held), and
 * within RELEASE_WAIT_MS after the lease's expiry.
 */
async function releasedWhenDue(api: IdsClient, pool: string, lease: { id: string; expires_at: string }, heldUntil: number): Promise<void> {
  const expires = Date.parse(lease.expires_at);
  for (let attempt = 0; ; attempt++) {
    const received = await allocate(api, pool, `next-${attempt}`);
    if (received.status === 201) {
      assert.ok(
        received.at >= heldUntil - CLOCK_TOLERANCE_MS,
        `value ${received.body.value}, held until ${new Date(heldUntil).toISOString()}, was handed out again ${heldUntil - received.at} ms early`,
      );
      assert.equal(received.body.value, 1);
      return;
    }
    assert.equal(received.status, 409, received.text);
    assert.equal(received.body.code, 'ids.pool_exhausted');
    if (received.at < heldUntil - CLOCK_TOLERANCE_MS) assert.equal((await api.get(`/allocations/${lease.id}`)).status, 200, 'a running lease reads as gone');
    assert.ok(received.at < expires + RELEASE_WAIT_MS, `the lease ending at ${lease.expires_at} was still held ${received.at - expires} ms after`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

for (const dialect of DIALECTS) {
  describe(`identifier leases and heartbeats on the database's clock (${dialect})`, () => {
    const servers: SpawnedServer[] = [];
    /** `writer` writes leases (on PostgreSQL: the process whose clock is behind), `judge` has the true clock */
    let writer: IdsClient;
    let judge: IdsClient;

    before(async () => {
      const db = await freshDatabaseUrl(dialect);
      servers.push(await spawnServer(['--db', db, '--conductor-id', 'judge', ...ARGS]));
      if (dialect === 'postgres') servers.push(await spawnServer(['--db', db, '--conductor-id', 'skewed', ...ARGS], SKEWED_CLOCK));
      judge = new IdsClient(servers[0]!.url);
      writer = new IdsClient(servers.at(-1)!.url);
    });
    after(() => Promise.all(servers.map((s) => s.stop())));

    test('a lease written through the skewed process ends on the true clock, not before', async () => {
      assert.equal((await judge.post('/pools', { name: 'leased', kind: 'integer', ranges: ['1-1'] })).status, 201);
      const sent = Date.now();
      const lease = await writer.post('/pools/leased/allocations', { owner: 'holder', ttl_seconds: TTL_S });
      const received = Date.now();
      assert.equal(lease.status, 201, lease.text);
      // the client holds it at least TTL_S from when it asked: the other process keeps it that long
      await releasedWhenDue(judge, 'leased', lease.body, sent + TTL_S * 1000);
      assert.equal((await writer.get(`/allocations/${lease.body.id}`)).status, 404);
      // and the answer said so, on the true clock
      const expires = Date.parse(lease.body.expires_at);
      assert.ok(
        expires >= sent + TTL_S * 1000 - CLOCK_TOLERANCE_MS && expires <= received + TTL_S * 1000 + CLOCK_TOLERANCE_MS,
        `expires_at ${lease.body.expires_at} is not ${TTL_S} s after the request (sent ${new Date(sent).toISOString()})`,
      );
    });

    test("the other process's heartbeat is alive to each", async () => {
      const res = await new IronicClient(`${servers[0]!.url}/baremetal`).get('/v1/conductors');
      assert.equal(res.status, 200, res.text);
      const alive = Object.fromEntries((res.body.conductors as Array<{ hostname: string; alive: boolean }>).map((c) => [c.hostname, c.alive]));
      assert.deepEqual(alive, dialect === 'postgres' ? { judge: true, skewed: true } : { judge: true });
    });

    test('a lease written on the true clock is released by the skewed process when it is due', async () => {
      assert.equal((await judge.post('/pools', { name: 'leased-2', kind: 'integer', ranges: ['1-1'] })).status, 201);
      const sent = Date.now();
      const lease = await judge.post('/pools/leased-2/allocations', { owner: 'holder', ttl_seconds: TTL_S });
      assert.equal(lease.status, 201, lease.text);
      // only the skewed process is left to release it
      if (servers.length > 1) await servers[0]!.stop();
      await releasedWhenDue(writer, 'leased-2', lease.body, sent + TTL_S * 1000);
    });
  });
}
