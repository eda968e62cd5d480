// Heartbeats and take-over decided by the clock, in one process: two servers on one database, the
// survivor on a ManualClock. A conductor is alive until exactly `heartbeatTimeout` after its last
// heartbeat as the survivor's clock reads it, and then — without waiting a real second — its
// allocations and its node's transition are taken over by one compare-and-set each and finished.
// (test/baremetal/conductors.test.ts kills real processes and keeps real time.)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { takeOver } from '../../src/baremetal/workers/conductor.js';
import { beat } from '../../src/baremetal/services/conductors.js';
import { ManualClock } from '../../src/core/clock.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode, eventually } from './helpers.js';

const TIMEOUT_MS = 60_000;
const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`bare-metal take-over by the clock (${dialect})`, () => {
    let dir: string;
    const servers: TestServer[] = [];
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'allot-takeover-'));
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.close()));
      rmSync(dir, { recursive: true, force: true });
    });

    test('a conductor is alive until its heartbeat is heartbeatTimeout old; then its work is taken over at once', async () => {
      const db = dialect === 'postgres' ? await freshDatabaseUrl('postgres') : `sqlite:${path.join(dir, 'takeover.db')}`;
      // Nothing periodic runs during the test: heartbeats and take-over passes happen when the test says.
      const quiet = { heartbeatInterval: HOUR, heartbeatTimeout: TIMEOUT_MS, takeoverInterval: 0 };
      const clock = new ManualClock();
      const survivor = await startServer({ db, ...quiet, conductorId: 'survivor', transitionTime: 20 }, { clock });
      servers.push(survivor);
      // the victim sits on its work: its allocations wait an hour, its transitions take an hour
      const victim = await startServer({ db, ...quiet, conductorId: 'victim', allocationDelay: HOUR, transitionTime: HOUR });
      servers.push(victim);
      const api = new IronicClient(`${survivor.url}/baremetal`);
      const viaVictim = new IronicClient(`${victim.url}/baremetal`);

      const K = 3;
      for (let i = 0; i < K; i++) await availableNode(api, { name: `clock-${i}`, resource_class: 'clock' });
      const pending = await Promise.all(
        Array.from({ length: K }, async () => (await viaVictim.post('/v1/allocations', { resource_class: 'clock' })).body.uuid as string),
      );
      const spare = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'clock-spare' })).body.uuid;
      assert.equal((await viaVictim.put(`/v1/nodes/${spare}/states/provision`, { target: 'manage' })).status, 202);
      assert.equal((await api.get(`/v1/nodes/${spare}`)).body.reservation, 'victim');

      const survivorContext = survivor.running.context.baremetal;
      const victimContext = victim.running.context.baremetal;
      // the victim's last heartbeat, by the victim's own clock (the system clock)
      await beat(victimContext);
      const lastBeat = Date.parse((await api.get('/v1/conductors/victim')).body.updated_at);

      // 5 s before the timeout (by the survivor's clock) the victim is alive: nothing is taken
      clock.advance(lastBeat + TIMEOUT_MS - 5_000 - clock.nowMs());
      assert.equal((await api.get('/v1/conductors/victim')).body.alive, true);
      assert.deepEqual(await takeOver(survivorContext), { allocations: 0, nodes: 0 });
      for (const uuid of pending) assert.equal((await api.get(`/v1/allocations/${uuid}`)).body.state, 'allocating');

      // 1 ms after it the victim is dead: one pass takes over every allocation and the node's lock
      clock.advance(lastBeat + TIMEOUT_MS + 1 - clock.nowMs());
      assert.equal((await api.get('/v1/conductors/victim')).body.alive, false);
      assert.deepEqual(await takeOver(survivorContext), { allocations: K, nodes: 1 });
      // a second pass finds nothing left: each item was taken over once
      assert.deepEqual(await takeOver(survivorContext), { allocations: 0, nodes: 0 });

      const done = await Promise.all(pending.map((uuid) => allocationSettled(api, uuid)));
      assert.deepEqual(
        done.map((a) => a.state),
        Array(K).fill('active'),
      );
      assert.equal(new Set(done.map((a) => a.node_uuid)).size, K);
      const finished = await eventually(
        async () => (await api.get(`/v1/nodes/${spare}`)).body,
        (n) => n.reservation === null,
        "the victim's node transition finished by the survivor",
      );
      assert.equal(finished.provision_state, 'manageable');

      // the victim stopping (its queue still holds the allocations it lost) leaves the survivor's work alone
      assert.equal(victimContext.allocations.idle, false);
      await victim.close();
      servers.splice(servers.indexOf(victim), 1);
      for (const uuid of pending) assert.equal((await api.get(`/v1/allocations/${uuid}`)).body.state, 'active');
    });

    test('a heartbeat is written with the conductor’s clock', async () => {
      const clock = new ManualClock();
      const server = await startServer(
        { db: await freshDatabaseUrl(dialect), heartbeatInterval: HOUR, heartbeatTimeout: TIMEOUT_MS, takeoverInterval: 0, conductorId: 'beating' },
        { clock },
      );
      servers.push(server);
      const api = new IronicClient(`${server.url}/baremetal`);
      clock.advance(10 * HOUR);
      await beat(server.running.context.baremetal);
      const shown = (await api.get('/v1/conductors/beating')).body;
      const beatAt = Date.parse(shown.updated_at);
      assert.ok(beatAt <= clock.nowMs() && beatAt > Date.now() + 9 * HOUR, `heartbeat ${shown.updated_at} is at the moved clock, not the system's`);
      assert.equal(shown.alive, true);
    });
  });
}
