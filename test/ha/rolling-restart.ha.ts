// `npm run test:ha` (with failover.ha.ts): three `allot serve` processes on one PostgreSQL behind
// HAProxy running exactly the configuration docs/operations.md prints (test/ha/load-balancer.ts),
// under a steady load of Placement writes and reads through HAProxy. Each process in turn is
// stopped with SIGTERM, started again, and waited for until HAProxy sends it requests again; then
// the next. The test proves that no request fails (every answer a 2xx, no connection error) and
// that every acknowledged write is there afterwards, and that each process exits 0 on SIGTERM.
// Not part of `npm test` (its file name does not end in .test.ts): it spawns HAProxy and three
// servers and runs for about a minute. Needs Debian's haproxy.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type RunningPostgres, createTestDatabase, freePort, startEmbeddedPostgres } from '../helpers/postgres.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { SHUTDOWN_DELAY_ARGS, loadBalancerConfig } from './load-balancer.js';

const PROCESSES = 3;
const CLIENTS = 8;
/** load before the first restart and after the last */
const SETTLE_MS = 2_000;
/** a request that takes longer than this is a failure (a hang) */
const REQUEST_TIMEOUT_MS = 20_000;
/** a restarted process must get requests from HAProxy again within this */
const BACK_IN_ROTATION_MS = 30_000;
const HEADERS = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.20', 'content-type': 'application/json' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  op: 'create' | 'read';
  status: number | null;
  error?: string;
  at: number;
}

describe('rolling restart behind the documented HAProxy configuration', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-rolling-'));
  let postgres: RunningPostgres | null = null;
  let db: string;
  const ports: number[] = [];
  const servers: SpawnedServer[] = [];
  let haproxy: ChildProcess | null = null;
  let lb: string;

  const start = (i: number) => spawnServer(['--db', db, '--port', String(ports[i]), '--conductor-id', `rolling-${i + 1}`, ...SHUTDOWN_DELAY_ARGS]);

  /** Placement requests process i has answered (its own /metrics). */
  async function servedBy(i: number): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${ports[i]}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    let total = 0;
    for (const [, value] of text.matchAll(/^allot_http_requests_total\{[^}]*api="placement"[^}]*\} (\d+)/gm)) total += Number(value);
    return total;
  }

  before(async () => {
    assert.ok(existsSync('/usr/sbin/haproxy'), 'npm run test:ha needs HAProxy: apt-get install -y haproxy');
    const admin = process.env.DATABASE_URL ?? (postgres = await startEmbeddedPostgres()).adminUrl;
    db = await createTestDatabase(admin, 'allot_rolling');
    for (let i = 0; i < PROCESSES; i++) ports.push(await freePort());
    servers.push(...(await Promise.all(ports.map((_, i) => start(i)))));
    const lbPort = await freePort();
    lb = `http://127.0.0.1:${lbPort}`;
    const config = path.join(dir, 'haproxy.cfg');
    writeFileSync(
      config,
      loadBalancerConfig({ bind: `127.0.0.1:${lbPort}`, servers: ports.map((port, i) => ({ name: `allot-${i + 1}`, address: `127.0.0.1:${port}` })) }),
    );
    haproxy = spawn('/usr/sbin/haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let haproxyLog = '';
    haproxy.stdout!.on('data', (c: Buffer) => (haproxyLog += c.toString()));
    haproxy.stderr!.on('data', (c: Buffer) => (haproxyLog += c.toString()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await fetch(`${lb}/placement/`, { headers: HEADERS, signal: AbortSignal.timeout(2_000) }).catch(() => null);
      if (res?.status === 200) break;
      assert.ok(Date.now() < deadline && haproxy.exitCode === null, `HAProxy did not answer:\n${haproxyLog}`);
      await sleep(200);
    }
  });

  after(async () => {
    haproxy?.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.kill()));
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('0 failed requests while each of three processes is stopped (SIGTERM) and started again in turn', async () => {
    const outcomes: Outcome[] = [];
    const acknowledged = new Set<string>();
    let loadOn = true;
    const call = async (op: Outcome['op'], url: string, init: RequestInit): Promise<Response | null> => {
      try {
        const res = await fetch(url, { ...init, headers: HEADERS, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        outcomes.push({ op, status: res.status, at: Date.now(), ...(res.ok ? {} : { error: (await res.text()).slice(0, 300) }) });
        return res.ok ? res : null;
      } catch (err) {
        outcomes.push({ op, status: null, error: (err as Error).message, at: Date.now() });
        return null;
      }
    };
    const client = async () => {
      while (loadOn) {
        const uuid = randomUUID();
        const created = await call('create', `${lb}/placement/resource_providers`, { method: 'POST', body: JSON.stringify({ name: `rolling-${uuid}`, uuid }) });
        if (!created) continue;
        await created.arrayBuffer();
        acknowledged.add(uuid);
        const read = await call('read', `${lb}/placement/resource_providers/${uuid}`, { method: 'GET' });
        await read?.arrayBuffer();
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, client));
    const t0 = Date.now();
    const events: string[] = [];
    const at = () => `+${((Date.now() - t0) / 1000).toFixed(1)}s`;
    try {
      await sleep(SETTLE_MS);
      for (let i = 0; i < PROCESSES; i++) {
        events.push(`${at()} SIGTERM allot-${i + 1}`);
        assert.equal(await servers[i]!.stop(), 0, `allot-${i + 1} exits 0 on SIGTERM:\n${servers[i]!.output().slice(-2000)}`);
        events.push(`${at()} allot-${i + 1} exited`);
        servers[i] = await start(i);
        events.push(`${at()} allot-${i + 1} ready`);
        // an operator restarts the next one once the load balancer sends this one requests again
        const deadline = Date.now() + BACK_IN_ROTATION_MS;
        while ((await servedBy(i)) === 0) {
          assert.ok(Date.now() < deadline, `HAProxy sent allot-${i + 1} no request within ${BACK_IN_ROTATION_MS / 1000}s of its start`);
          await sleep(100);
        }
        events.push(`${at()} allot-${i + 1} answers HAProxy's requests again`);
      }
      await sleep(SETTLE_MS);
    } finally {
      loadOn = false;
      await load;
    }
    const failed = outcomes.filter((o) => o.status === null || o.status >= 300);
    const counts = new Map<string, number>();
    for (const o of outcomes) counts.set(String(o.status ?? 'no answer'), (counts.get(String(o.status ?? 'no answer')) ?? 0) + 1);
    const byStatus = [...counts].map(([status, n]) => `${status}: ${n}`);
    console.log(`# ${outcomes.length} requests in ${at()} (${byStatus.join(', ')}); ${failed.length} failed\n# ${events.join('\n# ')}`);
    assert.deepEqual(
      failed.map((f) => `+${((f.at - t0) / 1000).toFixed(2)}s ${f.op} ${f.status ?? 'no answer'}: ${f.error}`),
      [],
      'no request fails during the rolling restart',
    );
    assert.ok(outcomes.length > 100, `a steady load (${outcomes.length} requests)`);
    // every acknowledged provider is there
    const listed = await fetch(`${lb}/placement/resource_providers`, { headers: HEADERS });
    const names = new Set(((await listed.json()) as { resource_providers: Array<{ uuid: string }> }).resource_providers.map((p) => p.uuid));
    assert.deepEqual(
      [...acknowledged].filter((uuid) => !names.has(uuid)),
      [],
      'every acknowledged provider is listed',
    );
  });
});
