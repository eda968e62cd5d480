// Several allot processes on one database, as real `allot serve` processes:
//   - three processes, K nodes, 2K allocations fired in parallel at all three: exactly K active,
//     no node twice, the rest `error` with a clear last_error (both backends);
//   - SIGKILL a process while its allocations are `allocating` and a node of its is mid-transition:
//     the others take both over and finish them;
//   - a process restarted under the same --conductor-id resumes its own unfinished work.
// On PostgreSQL (the multi-process deployment) and on one SQLite file shared by the processes.
// Then the conductor list over HTTP, as Ironic's (1.49+): limit, marker (a hostname), sort_key,
// sort_dir, fields and detail, `next` links, and Ironic's 400s and 404 — one in-process server,
// the other conductors registered in its database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ensureRegistered } from '../../src/baremetal/services/conductors.js';
import { registerConductor, unregisterConductor } from '../../src/baremetal/store/conductors.js';
import { transaction } from '../../src/db/transaction.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { type SpawnedServer, type TestServer, spawnServer, startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode, eventually, fault } from './helpers.js';

// a survivor must never look dead to the others, even on a loaded machine: beats every 0.25 s, dead after 4 s
const FAST = ['--transition-time', '0.02', '--heartbeat-interval', '0.25', '--heartbeat-timeout', '4', '--takeover-interval', '0.3'];

for (const dialect of DIALECTS) {
  describe(`bare-metal conductors: several processes (${dialect})`, () => {
    let dir: string;
    const servers: SpawnedServer[] = [];
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'allot-bm-'));
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.kill()));
      rmSync(dir, { recursive: true, force: true });
    });

    async function databaseUrl(name: string): Promise<string> {
      return dialect === 'postgres' ? freshDatabaseUrl('postgres') : `sqlite:${path.join(dir, `${name}.db`)}`;
    }

    async function spawn(db: string, args: string[]): Promise<SpawnedServer> {
      const s = await spawnServer(['--db', db, ...args]);
      servers.push(s);
      return s;
    }

    for (const backend of ['database', 'placement'] as const) {
      test(`three processes, K nodes, 2K parallel allocations: exactly K active, no node twice (${backend} backend)`, async () => {
        const db = await databaseUrl(`race-${backend}`);
        const procs = [];
        for (let i = 0; i < 3; i++) procs.push(await spawn(db, [...FAST, '--baremetal-backend', backend, '--conductor-id', `race-${backend}-${i}`]));
        const apis = procs.map((p) => new IronicClient(`${p.url}/baremetal`));
        const K = 12;
        const nodes = await Promise.all(Array.from({ length: K }, (_, i) => availableNode(apis[i % 3]!, { name: `race-${i}`, resource_class: 'race' })));
        const created = await Promise.all(
          Array.from({ length: 2 * K }, async (_, i) => {
            const res = await apis[i % 3]!.post('/v1/allocations', { resource_class: 'race' });
            assert.equal(res.status, 201, res.text);
            return res.body.uuid as string;
          }),
        );
        const done = await Promise.all(created.map((uuid, i) => allocationSettled(apis[(i + 1) % 3]!, uuid)));
        const active = done.filter((a) => a.state === 'active');
        const failed = done.filter((a) => a.state === 'error');
        assert.equal(active.length, K, JSON.stringify(failed.map((a) => a.last_error)));
        assert.equal(failed.length, K);
        assert.equal(new Set(active.map((a) => a.node_uuid)).size, K, 'no node holds two allocations');
        for (const a of failed) {
          assert.equal(a.node_uuid, null);
          assert.equal(a.last_error, `Failed to process allocation ${a.uuid}: no available nodes match the resource class race.`);
        }
        // the nodes agree with the allocations
        const listed = (await apis[0]!.get('/v1/nodes?resource_class=race&fields=uuid,instance_uuid,allocation_uuid,reservation')).body.nodes;
        assert.equal(listed.length, K);
        const byNode = new Map(active.map((a) => [a.node_uuid, a.uuid]));
        for (const n of listed) {
          assert.equal(n.allocation_uuid, byNode.get(n.uuid));
          assert.equal(n.instance_uuid, byNode.get(n.uuid));
          assert.equal(n.reservation, null);
        }
        assert.deepEqual(new Set(listed.map((n: { uuid: string }) => n.uuid)), new Set(nodes.map((n) => n.uuid)));
        await Promise.all(procs.map((p) => p.stop()));
      });
    }

    test('SIGKILL a conductor mid-work: the others take over its allocations and its node transition', async () => {
      const db = await databaseUrl('takeover');
      const a = await spawn(db, [...FAST, '--conductor-id', 'survivor-a']);
      const b = await spawn(db, [...FAST, '--conductor-id', 'survivor-b']);
      // the victim would sit on its work for a long time: its allocations wait 120 s, its
      // transitions take 120 s
      const victim = await spawn(db, [...FAST, '--conductor-id', 'victim', '--allocation-delay', '120', '--transition-time', '120']);
      const api = new IronicClient(`${a.url}/baremetal`);
      const viaVictim = new IronicClient(`${victim.url}/baremetal`);
      const K = 6;
      for (let i = 0; i < K; i++) await availableNode(api, { name: `to-${i}`, resource_class: 'takeover' });
      const pending = await Promise.all(
        Array.from({ length: K }, async () => (await viaVictim.post('/v1/allocations', { resource_class: 'takeover' })).body.uuid as string),
      );
      const spare = (await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'to-spare' })).body.uuid;
      assert.equal((await viaVictim.put(`/v1/nodes/${spare}/states/provision`, { target: 'manage' })).status, 202);
      for (const uuid of pending) assert.equal((await api.get(`/v1/allocations/${uuid}`)).body.state, 'allocating');
      const locked = (await api.get(`/v1/nodes/${spare}`)).body;
      assert.equal(locked.provision_state, 'verifying');
      assert.equal(locked.reservation, 'victim');

      await victim.kill();

      const done = await Promise.all(pending.map((uuid) => allocationSettled(api, uuid)));
      assert.deepEqual(
        done.map((x) => x.state),
        Array(K).fill('active'),
        JSON.stringify(done.map((x) => x.last_error)),
      );
      assert.equal(new Set(done.map((x) => x.node_uuid)).size, K);
      const finished = await eventually(
        async () => (await api.get(`/v1/nodes/${spare}`)).body,
        (n) => n.provision_state === 'manageable' && n.reservation === null,
        'the victim’s node transition finished by a survivor',
      );
      assert.equal(finished.target_provision_state, null);
      const conductors = (await api.get('/v1/conductors')).body.conductors as Array<{ hostname: string; alive: boolean }>;
      assert.deepEqual(conductors.map((c) => [c.hostname, c.alive]).sort(), [
        ['survivor-a', true],
        ['survivor-b', true],
        ['victim', false],
      ]);
      await Promise.all([a.stop(), b.stop()]);
    });

    test('a conductor restarted under the same id resumes its own allocating allocations', async () => {
      const db = await databaseUrl('resume');
      // take-over disabled: only the restarted conductor itself can finish the work
      const args = ['--transition-time', '0.02', '--takeover-interval', '0', '--conductor-id', 'phoenix'];
      const first = await spawn(db, [...args, '--allocation-delay', '120']);
      const api1 = new IronicClient(`${first.url}/baremetal`);
      const node = await availableNode(api1, { name: 'rs-1', resource_class: 'resume' });
      const pending = (await api1.post('/v1/allocations', { resource_class: 'resume' })).body.uuid;
      await first.kill();
      const second = await spawn(db, args);
      const done = await allocationSettled(new IronicClient(`${second.url}/baremetal`), pending);
      assert.equal(done.state, 'active');
      assert.equal(done.node_uuid, node.uuid);
      assert.equal(await second.stop(), 0);
    });

    test('a graceful stop hands work over at once: SIGTERM exits 0 and the conductor is marked offline', async () => {
      const db = await databaseUrl('graceful');
      const a = await spawn(db, [...FAST, '--conductor-id', 'stays']);
      const leaving = await spawn(db, [...FAST, '--conductor-id', 'leaves', '--allocation-delay', '120']);
      const api = new IronicClient(`${a.url}/baremetal`);
      await availableNode(api, { name: 'gs-1', resource_class: 'graceful' });
      const pending = (await new IronicClient(`${leaving.url}/baremetal`).post('/v1/allocations', { resource_class: 'graceful' })).body.uuid;
      assert.equal(await leaving.stop(), 0);
      const conductors = (await api.get('/v1/conductors')).body.conductors as Array<{ hostname: string; alive: boolean }>;
      assert.equal(conductors.find((c) => c.hostname === 'leaves')?.alive, false);
      assert.equal((await allocationSettled(api, pending)).state, 'active');
      await a.stop();
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`bare-metal conductor list: paging, sorting, fields (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    /** every conductor, in registration (id) order: this server first */
    const registered = ['list-self', 'c-delta', 'c-alpha', 'c-echo', 'c-bravo'];
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), conductorId: 'list-self' });
      api = new IronicClient(`${server.url}/baremetal`);
      const ctx = server.running.context.baremetal;
      // this server first (its worker registers it in the background: wait for that), then the
      // others one at a time, so ids follow `registered`
      await ensureRegistered(ctx);
      for (const hostname of registered.slice(1)) await transaction(ctx.database, (tx) => registerConductor(tx, hostname));
      // a conductor that stopped is still listed (alive: false), as Ironic lists offline ones
      await transaction(ctx.database, (tx) => unregisterConductor(tx, 'c-echo'));
    });
    after(() => server.close());

    const hostnames = (res: { body: { conductors: Array<{ hostname: string }> } }) => res.body.conductors.map((c) => c.hostname);

    /** Follow `next` from `first` to the last page; every page but the last is full. */
    async function allPages(first: string, limit: number): Promise<{ names: string[]; nexts: string[] }> {
      const names: string[] = [];
      const nexts: string[] = [];
      let page: string | undefined = first;
      while (page !== undefined) {
        const res: HttpResponse = await api.get(page);
        assert.equal(res.status, 200, res.text);
        names.push(...hostnames(res));
        const next = res.body.next as string | undefined;
        if (next !== undefined) {
          assert.equal(res.body.conductors.length, limit, 'only a full page has a next link');
          assert.ok(next.startsWith(`${api.baseUrl}/v1/conductors?`), next);
          nexts.push(next);
        }
        page = next?.slice(api.baseUrl.length);
        assert.ok(nexts.length <= registered.length, 'the pages end');
      }
      return { names, nexts };
    }

    test('unpaged: every conductor, alive or not, in id order (Ironic sorts by id unless told)', async () => {
      const res = await api.get('/v1/conductors');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(hostnames(res), registered);
      assert.equal(res.body.next, undefined);
      const alive = Object.fromEntries(res.body.conductors.map((c: { hostname: string; alive: boolean }) => [c.hostname, c.alive]));
      assert.deepEqual(alive, { 'list-self': true, 'c-delta': true, 'c-alpha': true, 'c-echo': false, 'c-bravo': true });
    });

    test('limit and marker to the end give the unpaged list, for each sort; `next` carries the sort, limit and last hostname', async () => {
      for (const [query, expected] of [
        ['', registered],
        ['?sort_key=hostname', [...registered].sort()],
        ['?sort_key=hostname&sort_dir=desc', [...registered].sort().reverse()],
        ['?sort_dir=desc', [...registered].reverse()],
        ['?sort_key=created_at', registered],
        ['?sort_key=conductor_group', registered],
        ['?sort_key=online', ['c-echo', ...registered.filter((h) => h !== 'c-echo')]],
      ] as const) {
        assert.deepEqual(hostnames(await api.get(`/v1/conductors${query}`)), expected, query);
        for (const limit of [1, 2, 5]) {
          const sep = query ? '&' : '?';
          const { names, nexts } = await allPages(`/v1/conductors${query}${sep}limit=${limit}`, limit);
          assert.deepEqual(names, expected, `${query} limit=${limit}`);
          // 5 conductors: a full last page still has a next link, whose page is empty
          assert.equal(nexts.length, Math.floor(registered.length / limit), `${query} limit=${limit}`);
        }
      }
      const first = await api.get('/v1/conductors?sort_key=hostname&sort_dir=desc&limit=2');
      assert.deepEqual(hostnames(first), ['list-self', 'c-echo']);
      assert.equal(first.body.next, `${api.baseUrl}/v1/conductors?sort_key=hostname&sort_dir=desc&limit=2&marker=c-echo`);
      assert.deepEqual(hostnames(await api.get('/v1/conductors?limit=2')), ['list-self', 'c-delta']);
      assert.equal((await api.get('/v1/conductors?limit=2')).body.next, `${api.baseUrl}/v1/conductors?sort_key=id&sort_dir=asc&limit=2&marker=c-delta`);
      // a limit above the maximum is cut to it, as Ironic's max_limit
      assert.deepEqual(hostnames(await api.get('/v1/conductors?limit=5000')), registered);
      // the marker is a hostname: the page starts after it in the requested order
      assert.deepEqual(hostnames(await api.get('/v1/conductors?sort_key=hostname&marker=c-bravo')), ['c-delta', 'c-echo', 'list-self']);
      assert.deepEqual(hostnames(await api.get('/v1/conductors?marker=c-alpha&limit=1')), ['c-echo']);
    });

    test('fields and detail', async () => {
      const only = await api.get('/v1/conductors?fields=hostname&limit=2');
      assert.equal(only.status, 200, only.text);
      for (const c of only.body.conductors) assert.deepEqual(Object.keys(c), ['hostname', 'links']);
      // the next page keeps the fields
      assert.equal(only.body.next, `${api.baseUrl}/v1/conductors?sort_key=id&sort_dir=asc&fields=hostname&limit=2&marker=c-delta`);
      for (const c of (await api.get(only.body.next.slice(api.baseUrl.length))).body.conductors) assert.deepEqual(Object.keys(c), ['hostname', 'links']);
      // any field of the detailed view, in Ironic's key order whatever the order asked
      const some = (await api.get('/v1/conductors?fields=alive,drivers,updated_at')).body.conductors[0];
      assert.deepEqual(Object.keys(some), ['updated_at', 'drivers', 'links', 'alive']);
      const detailed = (await api.get('/v1/conductors?detail=true&limit=1')).body;
      assert.deepEqual(Object.keys(detailed.conductors[0]), ['created_at', 'updated_at', 'hostname', 'conductor_group', 'drivers', 'links', 'alive']);
      assert.equal(detailed.next, `${api.baseUrl}/v1/conductors?sort_key=id&sort_dir=asc&detail=true&limit=1&marker=list-self`);
      assert.deepEqual(Object.keys((await api.get('/v1/conductors?detail=false')).body.conductors[0]), ['hostname', 'conductor_group', 'links', 'alive']);
      // detail=false with fields is allowed, as in Ironic
      assert.equal((await api.get('/v1/conductors?fields=hostname&detail=false')).status, 200);
    });

    test("Ironic's 400s and 404", async () => {
      const cases: Array<[string, number, string]> = [
        ['fields=hostname&detail=true', 400, 'Can not specify ?detail=True and fields in the same request.'],
        ['fields=hostname,bogus', 400, 'Field(s) "bogus" are not valid'],
        [
          'detail=maybe',
          400,
          "Invalid detail: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
        ],
        ['marker=nosuch', 404, 'Conductor nosuch could not be found.'],
        ['marker=a%2Fb', 400, 'Expected name for marker: a/b'],
        ['sort_key=alive', 400, 'The sort_key value alive is an invalid field for sorting'],
        ['sort_key=drivers', 400, 'The sort_key value drivers is an invalid field for sorting'],
        ['sort_key=bogus', 400, 'The sort_key value "bogus" is an invalid field for sorting'],
        ['sort_dir=up', 400, "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'"],
        ['limit=0', 400, 'Limit must be positive'],
        ['limit=-1', 400, 'Limit must be positive'],
        ['limit=abc', 400, 'Expected an integer for limit: abc'],
        ['bogus=1', 400, 'Unexpected arguments: bogus'],
      ];
      for (const [query, status, message] of cases) {
        const res = await api.get(`/v1/conductors?${query}`);
        assert.equal(res.status, status, `${query}: ${res.text}`);
        assert.equal(fault(res).faultstring, message, query);
      }
    });
  });
}
