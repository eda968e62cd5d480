// External inventories that misbehave: an HTTP inventory (a small server in this test) that fails,
// loses answers after allocating and hangs past the time limit, and a PostgreSQL table inventory
// in a second real database. Nothing is lost, nothing is allocated twice, and every deallocation
// lands eventually, also across a restart of allot (the outbox is in the database).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

/** An inventory speaking allot's HTTP inventory protocol, with failures on purpose. */
function flakyInventory() {
  const held = new Map<string, { value: number; version: number }>();
  const everGiven = new Map<number, string>();
  let next = 3000;
  let requests = 0;
  let mode: 'flaky' | 'down' = 'flaky';
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests++;
      const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(payload === undefined ? '' : JSON.stringify(payload));
      };
      if (mode === 'down') return send(503, { error: 'down for maintenance' });
      if (requests % 7 === 0) return; // hang: allot's time limit must cut this off
      if (requests % 5 === 0) return send(500, { error: 'transient' });
      const url = new URL(req.url!, 'http://x');
      if (req.method === 'POST' && url.pathname === '/allocations') {
        const { owner } = JSON.parse(body) as { owner: string };
        assert.equal(req.headers['idempotency-key'], owner);
        let entry = held.get(owner);
        if (!entry) {
          entry = { value: next++, version: 1 };
          held.set(owner, entry);
          assert.ok(!everGiven.has(entry.value));
          everGiven.set(entry.value, owner);
        }
        // Sometimes the allocation happens and the answer is lost: allot must ask again and get the same value.
        if (requests % 4 === 0) return send(502, { error: 'answer lost' });
        return send(201, { value: entry.value, version: entry.version });
      }
      const m = /^\/allocations\/(.+)$/.exec(url.pathname);
      if (m) {
        const owner = decodeURIComponent(m[1]!);
        const entry = held.get(owner);
        if (!entry) return send(404, { error: 'none' });
        const etag = `"v${entry.version}"`;
        if (req.method === 'GET') return send(200, { value: entry.value, version: entry.version }, { etag });
        if (req.method === 'DELETE') {
          if (req.headers['if-match'] !== etag) return send(412, { error: 'stale' });
          held.delete(owner);
          return send(204);
        }
      }
      send(404, { error: 'no such endpoint' });
    });
  });
  return {
    held,
    setMode: (m: 'flaky' | 'down') => (mode = m),
    async listen() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

for (const dialect of DIALECTS) {
  describe(`misbehaving external inventories (${dialect})`, () => {
    const inventory = flakyInventory();
    let table: pg.Client;
    let args: string[];
    let server: SpawnedServer;

    before(async () => {
      const inventoryUrl = await inventory.listen();
      const tableUrl = await freshDatabaseUrl('postgres');
      table = new pg.Client({ connectionString: tableUrl });
      await table.connect();
      await table.query(
        'CREATE TABLE allocation (attribute text NOT NULL, owner text NOT NULL, allocated_value integer NOT NULL, UNIQUE (attribute, owner), UNIQUE (attribute, allocated_value))',
      );
      const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-ids-ext-'));
      const config = path.join(dir, 'ids.json');
      writeFileSync(
        config,
        JSON.stringify({
          inventories: {
            flaky: { type: 'http', url: inventoryUrl, timeout_ms: 300 },
            table: { type: 'postgres-table', url: tableUrl, first: 1 },
          },
        }),
      );
      const db = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'allot.db')}` : await freshDatabaseUrl('postgres');
      args = ['--db', db, '--ids-config', config, '--ids-worker-interval-ms', '100', '--ids-retry-base-ms', '50', '--ids-retry-max-ms', '500'];
      server = await spawnServer(args);
    });
    after(async () => {
      await server.stop();
      await inventory.close();
      await table.end();
    });

    test('validate through failures and timeouts; deallocations survive a restart and all land', async () => {
      let api = new IdsClient(server.url);
      assert.equal(
        (
          await api.post('/allocation-specs', {
            name: 'wire',
            attributes: { vlan: { from: 'inventory', inventory: 'flaky' }, tunnel: { from: 'inventory', inventory: 'table' } },
          })
        ).status,
        201,
      );
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push((await api.post('/service-instances', { allocation_spec: 'wire', lifecycle: 'simple_with_deallocation', attributes: { n: i } })).body.id);

      const failures = new Map<number, number>();
      const values = new Map<string, { vlan: number; tunnel: number }>();
      for (const id of ids) {
        const v = await until(`validation of ${id}`, async () => {
          const res = await api.post(`/service-instances/${id}/validate`);
          if (res.status === 200) return res.body.candidate_attributes as { vlan: number; tunnel: number };
          assert.ok([502, 504].includes(res.status), res.text);
          failures.set(res.status, (failures.get(res.status) ?? 0) + 1);
          return null;
        });
        values.set(id, v);
        assert.equal((await api.post(`/service-instances/${id}/promote`)).status, 200);
      }
      assert.ok(failures.get(502), 'the inventory failed on purpose');
      assert.ok(failures.get(504), 'the inventory hung on purpose');
      // nothing allocated twice: one value per instance, the inventory agrees with allot
      assert.equal(new Set([...values.values()].map((v) => v.vlan)).size, ids.length);
      assert.equal(new Set([...values.values()].map((v) => v.tunnel)).size, ids.length);
      assert.equal(inventory.held.size, ids.length);
      for (const [id, v] of values) assert.equal(inventory.held.get(id)?.value, v.vlan);
      const rows = (await table.query('SELECT owner, allocated_value FROM allocation')).rows;
      assert.deepEqual(new Map(rows.map((r) => [r.owner, r.allocated_value])), new Map([...values].map(([id, v]) => [id, v.tunnel])));

      // The HTTP inventory goes down; terminations wait in the outbox, visibly retried.
      inventory.setMode('down');
      for (const id of ids) assert.equal((await api.delete(`/service-instances/${id}`)).body.state, 'deallocating');
      await until('table deallocations', async () => (await table.query('SELECT count(*)::int AS n FROM allocation')).rows[0].n === 0);
      const retried = await until('retries with errors', async () => {
        const pending = await api.all('/outbox?state=pending');
        return pending.length === ids.length && pending.every((e) => e.attempts >= 2 && /503/.test(e.last_error)) ? pending : null;
      });
      assert.ok(retried.every((e) => e.inventory === 'flaky'));
      // Each wait is at most the bound of its attempt: 50 ms doubling, never beyond 500 ms.
      for (const e of retried)
        assert.ok(Date.parse(e.next_attempt_at) - Date.parse(e.updated_at) <= Math.min(500, 50 * 2 ** (e.attempts - 1)), JSON.stringify(e));
      assert.equal((await api.get(`/service-instances/${ids[0]}`)).body.pending_deallocations, 1);

      // Restart allot while deallocations are owed; the inventory comes back (still flaky).
      assert.equal(await server.stop(), 0);
      inventory.setMode('flaky');
      server = await spawnServer(args);
      api = new IdsClient(server.url);
      await until('every deallocation delivered', async () => (await api.all('/outbox?state=pending')).length === 0);
      assert.equal(inventory.held.size, 0);
      for (const id of ids) assert.equal((await api.get(`/service-instances/${id}`)).body.state, 'terminated');
      const done = await api.all('/outbox?state=done');
      assert.equal(done.length, ids.length * 2);
    });
  });
}
