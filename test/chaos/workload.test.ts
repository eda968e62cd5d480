// The chaos workload's clients free what they hold, however long allot stays unreachable (issue
// 33). A 45-minute run refused every reservation after its second minute: two reservation
// instances whose terminate met a refused connection (an allot process killed) were never asked
// again, and two bare-metal allocations whose ten deletes all fell in a 12-second failover were
// given up; together they held the four nodes for the rest of the run. allot did what it was told
// (the instances and allocations held their nodes until a client freed them, and freed them when
// asked); a real client asks again until its DELETE is answered.
//
// Here one client of each kind runs against a real allot; from the first cleanup (a terminate, a
// delete) of something it holds, every request it sends meets a refused connection for longer than
// its tries of one turn, and then allot answers again: what it held must be freed. The old clients
// left it held.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { makeFixtures } from './fixtures.js';
import type { Op } from './history.js';
import { Rng } from './schedule.js';
import { type Fixtures, Workload } from './workload.js';

const IRONIC = { 'x-openstack-ironic-api-version': '1.82' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Longer than a client's tries of one turn (ten deletes with pauses of at most a second). */
const OUTAGE_MS = 12_000;
/** How long the freeing may take once allot answers again (a turn's pauses; a bound for a stuck test, not a speed claim). */
const FREED_WITHIN_MS = 60_000;

/** A URL nothing listens on: every request to it meets a refused connection. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: { accept: 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * Runs one client of `kind`. The first cleanup (`cleanup`: its kind, a terminate or a delete) it
 * sends of an object an op showed it holding (`holding`) and every request after it for OUTAGE_MS
 * meet a refused connection. Resolves once `freed` says that object was freed (or FREED_WITHIN_MS
 * after the outage), with the cleanups of it that met the outage.
 */
async function outageAtCleanup(
  server: TestServer,
  fixtures: Fixtures,
  kind: 'reservation' | 'baremetal',
  holding: (op: Op) => boolean,
  cleanup: string,
  freed: (key: string) => Promise<boolean>,
): Promise<{ key: string; refused: Op[]; freed: boolean }> {
  const dead = await refusingUrl();
  const held = new Set<string>();
  let key: string | null = null;
  let downUntil = 0;
  let scanned = 0;
  const workload: Workload = new Workload(
    (request) => {
      for (; scanned < workload.ops.length; scanned++) if (holding(workload.ops[scanned]!)) held.add(workload.ops[scanned]!.key);
      if (key === null && request.kind === cleanup && held.has(request.key)) {
        key = request.key;
        downUntil = Date.now() + OUTAGE_MS;
      }
      return [Date.now() < downUntil ? dead : server.url];
    },
    fixtures,
    () => performance.now(),
  );
  workload.start(new Rng(33), { [kind]: 1 });
  try {
    while (key === null || Date.now() < downUntil) await sleep(50);
    const cut: string = key;
    let done = false;
    for (const until = Date.now() + FREED_WITHIN_MS; !done && Date.now() < until; ) {
      done = await freed(cut);
      if (!done) await sleep(250);
    }
    const refused = workload.ops.filter((op) => op.key === cut && op.kind === cleanup && op.status === 0);
    return { key: cut, refused, freed: done };
  } finally {
    await workload.stop();
  }
}

for (const dialect of DIALECTS) {
  describe(`the chaos workload on ${dialect}: a client frees what it holds once allot answers again`, () => {
    let server: TestServer;
    let fixtures: Fixtures;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      fixtures = await makeFixtures(server.url);
    });
    after(() => server?.close());

    test('a reservation instance whose terminate meets refused connections is terminated later, its node freed', async () => {
      const r = await outageAtCleanup(
        server,
        fixtures,
        'reservation',
        (op) => op.outcome === 'ok' && !!op.reservation?.holds,
        'terminate',
        async (id) => {
          const instance = await getJson(`${server.url}/ids/v1/service-instances/${id}`);
          // its node's allocation (named for the instance and its attribute) is gone with it
          const allocation = await getJson(`${server.url}/baremetal/v1/allocations/service-instance.${id}.${fixtures.reservation.node}`, IRONIC);
          return (instance.status === 404 || (instance.status === 200 && instance.body.state === 'terminated')) && allocation.status === 404;
        },
      );
      assert.ok(r.refused.length >= 1, `the outage met the terminate of ${r.key}`);
      assert.ok(r.freed, `instance ${r.key} was never terminated (and its node freed) after the outage`);
    });

    test('a bare-metal allocation whose deletes meet refused connections past its tries is deleted later, its node freed', async () => {
      const r = await outageAtCleanup(
        server,
        fixtures,
        'baremetal',
        (op) => op.outcome === 'ok' && op.seen?.value.state === 'active',
        'delete',
        async (name) => (await getJson(`${server.url}/baremetal/v1/allocations/${name}`, IRONIC)).status === 404,
      );
      // the outage outlasted a turn's tries (ten, after which the old client moved on for good)
      assert.ok(r.refused.length >= 10, `the outage met ${r.refused.length} deletes of ${r.key}`);
      assert.ok(r.freed, `allocation ${r.key} was never deleted after the outage`);
    });
  });
}
