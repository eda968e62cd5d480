// `npm run test:ha`: three `allot serve` processes over a PostgreSQL made highly available by
// Patroni (etcd, two PostgreSQL 15 members with synchronous replication, HAProxy on Patroni's
// /primary check: see layout.ts and docs/operations.md). Under concurrent load of all three
// APIs the primary's postmaster is SIGKILLed, and later the primary is switched over on purpose
// (`patronictl switchover --force`). The test proves:
// - no allot process exits;
// - every request answers within the configured bounds, and during a fault only 503 with
//   Retry-After in the API's own format (never another 5xx, never a hang);
// - a 503 that does not say the commit outcome is unknown changed nothing;
// - everything acknowledged (2xx) is there afterwards: Placement consumers, bare-metal
//   allocations, identifiers; Placement usages are the sum of the allocations and no provider is
//   over capacity; no identifier is held twice; no bare-metal allocation stays `allocating`, and
//   no node has two allocations;
// - the service answers again within the database's own failover time plus a few seconds; the
//   unavailability window of each fault is measured and printed; /readyz is 503 during it.
// Not part of `npm test` (its file name does not end in .test.ts): it needs the Debian packages
// patroni, python3-etcd, etcd-server, haproxy and postgresql-15, which it checks for but never installs.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { availableNode, IronicClient } from '../baremetal/helpers.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { type PatroniCluster, asSuperuser, missingPackages, startCluster } from './cluster.js';
import { ALLOT_HA_ARGS, ALLOT_USER } from './layout.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rand = (n: number) => Math.floor(Math.random() * n);

// allot tuned for fast detection (layout.ts; docs/operations.md prints the same flags), plus
// fast fake hardware and identifier workers for the load.
const setting = (flag: string) => Number(ALLOT_HA_ARGS[ALLOT_HA_ARGS.indexOf(flag) + 1]);
const CONNECT_TIMEOUT_S = setting('--db-connect-timeout');
const STATEMENT_TIMEOUT_S = setting('--db-statement-timeout');
const HEALTH_TIMEOUT_S = setting('--health-timeout');
const ALLOT_ARGS = [...ALLOT_HA_ARGS, '--transition-time', '0.05', '--ids-worker-interval-ms', '500'];
/**
 * The longest a request may take while the database fails: a transaction retries a lost
 * connection for the connect timeout, an attempt may wait the statement timeout for a pooled
 * connection or for a statement (plus the client's 2 s grace) — bounded by twice their sum.
 */
const ANSWER_BOUND_MS = 2 * (STATEMENT_TIMEOUT_S * 1_000 + 2_000 + CONNECT_TIMEOUT_S * 1_000);
/** the test's own client gives up here; an abort is a hang, and fails the test */
const CLIENT_ABORT_MS = ANSWER_BOUND_MS + 5_000;
/** "within the failover time plus a few seconds" */
const RECOVERY_SLACK_MS = 5_000;
const PROCESSES = 3;
const PLACEMENT_CLIENTS = 4; // per process
const BAREMETAL_CLIENTS = 2;
const IDS_CLIENTS = 3;
const PROVIDERS = 4;
const PROVIDER_VCPU = 64;
/** consumers a Placement client holds before it releases its oldest */
const HOLD = 8;
const NODES = 30;

type Api = 'placement' | 'baremetal' | 'ids';
const APIS: Api[] = ['placement', 'baremetal', 'ids'];

interface Answer {
  api: Api;
  op: string;
  proc: number;
  sent: number;
  answered: number;
  status: number;
  retryAfter: string | null;
  contentType: string;
  /** the body of anything but a 2xx (for the format checks and failure messages) */
  text: string;
  body: any;
}

const PLACEMENT_HEADERS = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
const IRONIC_HEADERS = { 'x-openstack-ironic-api-version': '1.82' };

/** Every request of the load, answered or not: the record the assertions read. */
const answers: Answer[] = [];

async function call(api: Api, op: string, proc: number, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const sent = Date.now();
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  let answer: Answer;
  try {
    const res = await fetch(url, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CLIENT_ABORT_MS),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    let parsed: unknown;
    if (text && contentType.includes('json')) parsed = JSON.parse(text);
    answer = {
      api,
      op,
      proc,
      sent,
      answered: Date.now(),
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType,
      text: res.ok ? '' : text,
      body: parsed,
    };
  } catch (err) {
    answer = {
      api,
      op,
      proc,
      sent,
      answered: Date.now(),
      status: 0,
      retryAfter: null,
      contentType: '',
      text: `${(err as Error).name}: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`,
      body: undefined,
    };
  }
  answers.push(answer);
  return answer;
}

const ok = (a: Answer) => a.status >= 200 && a.status < 300;

/** Does this 503 say the write may have been applied (the connection was lost during COMMIT)? */
function commitUnknown(a: Answer): boolean {
  if (a.status !== 503) return false;
  if (a.api === 'ids') return a.body?.fault === 'commit_unknown';
  return /may or may not have been applied/.test(a.text);
}

/** A 503 in the API's own error format, with Retry-After. */
function wellFormed503(a: Answer): string | null {
  if (!a.retryAfter || !(Number(a.retryAfter) > 0)) return 'no Retry-After';
  try {
    const body = JSON.parse(a.text);
    if (a.api === 'placement') return body.errors?.[0]?.status === 503 ? null : 'not a Placement error document';
    if (a.api === 'baremetal') return JSON.parse(body.error_message).faultcode === 'Server' ? null : 'not an Ironic error document';
    return a.contentType.startsWith('application/problem+json') && body.status === 503 && body.code === 'ids.database_unavailable'
      ? null
      : 'not a problem+json document';
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
}

interface Fault {
  name: string;
  injectedAt: number;
  detail: string;
  /** filled by measure() */
  windows?: Record<string, Window>;
}
interface Window {
  firstFailure: number | null;
  firstSuccessAfter: number | null;
  lastFailure: number | null;
}

/**
 * Over answers sent from `from` until `to`: the first failure (a 503 or no answer), the first
 * success of a request sent after that failure was answered, and the last failure.
 */
function windowOf(list: Array<{ sent: number; answered: number; ok: boolean }>, from: number, to: number): Window {
  const inRange = list.filter((a) => a.answered >= from && a.sent < to).sort((a, b) => a.answered - b.answered);
  const first = inRange.find((a) => !a.ok);
  if (!first) return { firstFailure: null, firstSuccessAfter: null, lastFailure: null };
  const success = inRange.find((a) => a.ok && a.sent >= first.answered);
  const failures = inRange.filter((a) => !a.ok);
  return { firstFailure: first.answered, firstSuccessAfter: success?.answered ?? null, lastFailure: failures[failures.length - 1]!.answered };
}

const fmt = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

describe('allot over a Patroni cluster: SIGKILL failover and switchover under load', { timeout: 300_000 }, () => {
  let cluster: PatroniCluster | undefined;
  const servers: SpawnedServer[] = [];
  const exits: string[] = [];
  let stopped = false;
  const running: Array<Promise<void>> = [];
  const readyz: Array<{ proc: number; sent: number; answered: number; status: number; retryAfter: string | null; text: string }> = [];
  const probes: Array<{ sent: number; answered: number; ok: boolean; error?: string }> = [];
  const faults: Fault[] = [];
  const providers: string[] = [];
  const RC = `ha-${randomUUID().slice(0, 8)}`;
  const POOL = `ha-${randomUUID().slice(0, 8)}`;

  // What the load learned: acknowledged (2xx), refused (a 503 that is not commit_unknown: must
  // not have been applied), released, and releases whose outcome is unknown (not checked).
  const claims = {
    acked: new Map<string, { rp: string; vcpu: number }>(),
    refused: new Set<string>(),
    released: new Set<string>(),
    releaseUnknown: new Set<string>(),
  };
  const bm = {
    acked: new Map<string, string>(),
    refused: new Set<string>(),
    released: new Set<string>(),
    releaseUnknown: new Set<string>(),
    unsettled: new Set<string>(),
  };
  const ids = { acked: new Map<string, string>(), repeated: 0 };

  const url = (p: number) => servers[p]!.url;

  const placementClient = async (p: number) => {
    const mine: string[] = [];
    while (!stopped) {
      const consumer = randomUUID();
      const rp = providers[rand(providers.length)]!;
      const vcpu = 1 + rand(4);
      const res = await call(
        'placement',
        'claim',
        p,
        'PUT',
        `${url(p)}/placement/allocations/${consumer}`,
        { allocations: { [rp]: { resources: { VCPU: vcpu } } }, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' },
        PLACEMENT_HEADERS,
      );
      if (res.status === 204) {
        claims.acked.set(consumer, { rp, vcpu });
        mine.push(consumer);
      } else if (res.status === 503 && !commitUnknown(res)) {
        claims.refused.add(consumer);
      }
      if (mine.length > HOLD) {
        const victim = mine.shift()!;
        const del = await call('placement', 'release', p, 'DELETE', `${url(p)}/placement/allocations/${victim}`, undefined, PLACEMENT_HEADERS);
        // a release refused with a plain 503 leaves the claim held, as checked at the end
        if (del.status === 204) claims.released.add(victim);
        else if (commitUnknown(del)) claims.releaseUnknown.add(victim);
      }
      if (!ok(res)) await sleep(50);
    }
  };

  /**
   * Poll an allocation until it leaves `allocating` (bounded); null when it did not, 'stopped'
   * when the load ends first (the final check waits for every allocation anyway).
   */
  const settle = async (p: number, uuid: string, timeoutMs = 60_000): Promise<any> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (stopped) return 'stopped';
      const res = await call('baremetal', 'poll', p, 'GET', `${url(p)}/baremetal/v1/allocations/${uuid}`, undefined, IRONIC_HEADERS);
      if (res.status === 200 && res.body.state !== 'allocating') return res.body;
      await sleep(100);
    }
    return null;
  };

  const baremetalClient = async (p: number, c: number) => {
    for (let i = 0; !stopped; i++) {
      const name = `ha-${p}-${c}-${i}`;
      const res = await call('baremetal', 'create', p, 'POST', `${url(p)}/baremetal/v1/allocations`, { resource_class: RC, name }, IRONIC_HEADERS);
      if (res.status !== 201) {
        if (res.status === 503 && !commitUnknown(res)) bm.refused.add(name);
        await sleep(50);
        continue;
      }
      bm.acked.set(name, res.body.uuid);
      const settled = await settle(p, res.body.uuid);
      if (settled === 'stopped') break;
      if (!settled) {
        bm.unsettled.add(name);
        continue;
      }
      if (settled.state !== 'active') continue; // checked at the end
      await sleep(100 + rand(400));
      const del = await call('baremetal', 'release', p, 'DELETE', `${url(p)}/baremetal/v1/allocations/${res.body.uuid}`, undefined, IRONIC_HEADERS);
      if (del.status === 204) bm.released.add(name);
      else if (commitUnknown(del)) bm.releaseUnknown.add(name);
    }
  };

  const idsClient = async (p: number, c: number) => {
    for (let i = 0; !stopped; i++) {
      const owner = `ha-${p}-${c}-${i}`;
      // allocate-for-owner is idempotent: after a 503 the client repeats the same request
      for (let attempt = 1; ; attempt++) {
        const res = await call('ids', 'allocate', p, 'POST', `${url(p)}/ids/v1/pools/${POOL}/allocations`, { owner });
        if (res.status === 200 || res.status === 201) {
          ids.acked.set(owner, String(res.body.value));
          if (attempt > 1) ids.repeated++;
          break;
        }
        if (res.status !== 503 || stopped) break; // an unexpected status fails the test at the end
        await sleep(100);
      }
    }
  };

  const readyzPoller = async (p: number) => {
    while (!stopped) {
      const sent = Date.now();
      try {
        const res = await fetch(`${url(p)}/readyz`, { signal: AbortSignal.timeout(CLIENT_ABORT_MS) });
        readyz.push({ proc: p, sent, answered: Date.now(), status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() });
      } catch (err) {
        readyz.push({ proc: p, sent, answered: Date.now(), status: 0, retryAfter: null, text: String(err) });
      }
      await sleep(200);
    }
  };

  /** The database's own availability, independent of allot: a fresh connection and an INSERT through HAProxy. */
  const dbProbe = async () => {
    while (!stopped) {
      const sent = Date.now();
      const client = new pg.Client({ connectionString: cluster!.url(ALLOT_USER, 'probe'), connectionTimeoutMillis: 1_000, query_timeout: 2_000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('insert into probe default values');
        probes.push({ sent, answered: Date.now(), ok: true });
      } catch (err) {
        probes.push({ sent, answered: Date.now(), ok: false, error: (err as Error).message });
      } finally {
        await client.end().catch(() => {});
      }
      await sleep(100);
    }
  };

  const startLoad = () => {
    for (let p = 0; p < PROCESSES; p++) {
      for (let c = 0; c < PLACEMENT_CLIENTS; c++) running.push(placementClient(p));
      for (let c = 0; c < BAREMETAL_CLIENTS; c++) running.push(baremetalClient(p, c));
      for (let c = 0; c < IDS_CLIENTS; c++) running.push(idsClient(p, c));
      running.push(readyzPoller(p));
    }
    running.push(dbProbe());
  };
  const stopLoad = async () => {
    stopped = true;
    await Promise.all(running.splice(0));
  };

  let failed = false;
  /** a test of this file; after a failure every log is kept (see after()) */
  const step = (name: string, fn: () => Promise<void>) =>
    test(name, async () => {
      try {
        await fn();
      } catch (err) {
        failed = true;
        throw err;
      }
    });

  const noExits = () => assert.deepEqual(exits, [], `allot exited:\n${exits.join('\n')}`);

  /** Wait (bounded) until the cluster is whole again and every allot is ready. */
  const recovered = async (fault: Fault, leader: string) => {
    await cluster!.waitHealthy(90_000, leader);
    fault.detail += `; the cluster was whole again (${leader} primary, the other its streaming synchronous standby) after ${fmt(Date.now() - fault.injectedAt)}`;
    const deadline = Date.now() + 30_000;
    for (let p = 0; p < PROCESSES; p++) {
      for (;;) {
        const res = await fetch(`${url(p)}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
        await res?.text();
        if (res?.status === 200) break;
        assert.ok(Date.now() < deadline, `allot ${p} is not ready 30 s after the cluster recovered`);
        await sleep(200);
      }
    }
  };

  /** Measure, print and check the unavailability windows of a fault. */
  const measure = (fault: Fault, until: number) => {
    const t0 = fault.injectedAt;
    const windows: Record<string, Window> = {};
    windows.database = windowOf(probes, t0, until);
    for (const api of APIS)
      windows[api] = windowOf(
        answers.filter((a) => a.api === api).map((a) => ({ ...a, ok: a.status !== 503 && a.status !== 0 })),
        t0,
        until,
      );
    windows.all = windowOf(
      answers.map((a) => ({ ...a, ok: a.status !== 503 && a.status !== 0 })),
      t0,
      until,
    );
    for (let p = 0; p < PROCESSES; p++)
      windows[`readyz#${p}`] = windowOf(
        readyz.filter((r) => r.proc === p).map((r) => ({ ...r, ok: r.status === 200 })),
        t0,
        until,
      );
    fault.windows = windows;
    const rel = (t: number | null) => (t === null ? '-' : `+${fmt(t - t0)}`);
    console.log(`\n# ${fault.name} at ${new Date(t0).toISOString()}: ${fault.detail}`);
    console.log('#   what          first failure  first success after  last failure  window (first failure -> first success after)');
    for (const [what, w] of Object.entries(windows)) {
      const span = w.firstFailure !== null && w.firstSuccessAfter !== null ? fmt(w.firstSuccessAfter - w.firstFailure) : '-';
      console.log(`#   ${what.padEnd(13)} ${rel(w.firstFailure).padEnd(14)} ${rel(w.firstSuccessAfter).padEnd(20)} ${rel(w.lastFailure).padEnd(13)} ${span}`);
    }
    const probeErrors = new Map<string, number>();
    for (const e of probes.filter((x) => !x.ok && x.answered >= t0 && x.sent < until)) probeErrors.set(e.error!, (probeErrors.get(e.error!) ?? 0) + 1);
    console.log(`#   the database probe failed with: ${[...probeErrors].map(([e, n]) => `${n}× ${e}`).join('; ') || 'nothing'}`);
    // When the database took writes again: the first probe success after the last probe failure
    // before the APIs answered again (a probe that merely connected slowly before the outage, or
    // after it, does not move this much; it can only make the bound below looser).
    const apisBack = Math.max(t0, ...APIS.map((api) => windows[api]!.firstSuccessAfter ?? t0));
    const lastProbeFailure = probes.filter((x) => !x.ok && x.answered >= t0 && x.answered <= apisBack).at(-1);
    const dbBack = lastProbeFailure ? (probes.find((x) => x.ok && x.sent >= lastProbeFailure.answered)?.answered ?? until) : t0;
    console.log(`#   the database took writes again at ${rel(dbBack)}; the APIs all answered again at ${rel(apisBack)}`);
    for (const api of APIS) {
      const w = windows[api]!;
      if (w.firstFailure === null) continue;
      assert.ok(w.firstSuccessAfter !== null, `${api} never answered again after ${fault.name}`);
      assert.ok(
        w.firstSuccessAfter - t0 <= dbBack - t0 + RECOVERY_SLACK_MS,
        `${api} answered again ${fmt(w.firstSuccessAfter - t0)} after ${fault.name}, the database ${fmt(dbBack - t0)} after: more than ${RECOVERY_SLACK_MS} ms later`,
      );
    }
    // /readyz said 503 while writes failed, on every process.
    const windowEnd = Math.max(windows.all!.firstSuccessAfter ?? t0, dbBack) + 2_000;
    for (let p = 0; p < PROCESSES; p++) {
      const during = readyz.filter((r) => r.proc === p && r.answered >= t0 && r.sent <= windowEnd);
      assert.ok(
        during.some((r) => r.status === 503),
        `/readyz of allot ${p} was never 503 during ${fault.name}: ${JSON.stringify(during.map((r) => r.status))}`,
      );
    }
  };

  before(async () => {
    try {
      await setUp();
    } catch (err) {
      failed = true;
      throw err;
    }
  });

  const setUp = async () => {
    const missing = missingPackages();
    assert.deepEqual(
      missing,
      [],
      `npm run test:ha needs these Debian packages (it installs nothing):\n  ${missing.join('\n  ')}\n  apt-get install -y patroni python3-etcd etcd-server haproxy postgresql-15`,
    );
    let t = Date.now();
    cluster = await startCluster();
    console.log(
      `# cluster up in ${fmt(Date.now() - t)}: etcd, Patroni ${cluster.members.map((m) => `${m.name} (pg ${m.pgPort}, rest ${m.restPort})`).join(', ')}, HAProxy on ${cluster.haproxyPort}`,
    );
    await asSuperuser(cluster, 'postgres', [
      `create role ${ALLOT_USER.username} login password '${ALLOT_USER.password}'`,
      `create database allot owner ${ALLOT_USER.username}`,
      `create database probe owner ${ALLOT_USER.username}`,
    ]);
    await asSuperuser(cluster, 'probe', [
      `create table probe (id bigserial primary key, at timestamptz not null default now())`,
      `alter table probe owner to ${ALLOT_USER.username}`,
    ]);

    t = Date.now();
    const db = cluster.url(ALLOT_USER, 'allot');
    servers.push(...(await Promise.all(Array.from({ length: PROCESSES }, (_, p) => spawnServer(['--db', db, '--conductor-id', `ha-${p}`, ...ALLOT_ARGS])))));
    for (const [p, s] of servers.entries()) s.process.on('exit', (code, sig) => exits.push(`allot ${p} exited (${code ?? sig}):\n${s.output().slice(-3000)}`));
    // an interrupted run (cluster.ts exits on SIGINT/SIGTERM) takes the allot processes with it
    process.once('exit', () => {
      for (const s of servers) if (s.process.exitCode === null) s.process.kill('SIGKILL');
    });
    console.log(`# ${PROCESSES} allot processes ready in ${fmt(Date.now() - t)}: ${servers.map((s) => s.url).join(' ')}`);

    // Placement: providers small enough that capacity runs out and 409s happen.
    const placement = (path: string, body: unknown, method = 'POST') =>
      fetch(`${url(0)}/placement${path}`, {
        method,
        headers: { ...PLACEMENT_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    for (let i = 0; i < PROVIDERS; i++) {
      const rp = randomUUID();
      assert.equal((await placement('/resource_providers', { name: `ha-${rp}`, uuid: rp })).status, 200);
      assert.equal(
        (await placement(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: PROVIDER_VCPU } } }, 'PUT'))
          .status,
        200,
      );
      providers.push(rp);
    }
    // Bare metal: available nodes of one resource class, made through all three processes.
    t = Date.now();
    await Promise.all(
      Array.from({ length: NODES }, (_, i) => availableNode(new IronicClient(`${url(i % PROCESSES)}/baremetal`), { resource_class: RC, name: `${RC}-${i}` })),
    );
    console.log(`# ${NODES} available nodes in ${fmt(Date.now() - t)}`);
    // Identifiers: one big integer pool.
    const pool = await fetch(`${url(0)}/ids/v1/pools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: POOL, kind: 'integer', ranges: ['1-1000000'], strategy: 'random' }),
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(pool.status, 201, await pool.text());
  };

  after(async () => {
    await stopLoad();
    if (failed || process.env.ALLOT_HA_KEEP_LOGS) {
      // Keep the evidence: every log of the cluster and of allot, outside the directory removed below.
      const keep = path.join(os.tmpdir(), `allot-ha-${failed ? 'failure' : 'logs'}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      cluster?.saveLogs(keep);
      mkdirSync(keep, { recursive: true });
      for (const [p, s] of servers.entries()) writeFileSync(path.join(keep, `allot-${p}.log`), s.output());
      console.log(`# logs kept in ${keep}`);
    }
    // SIGTERM, and SIGKILL whatever has not exited 10 s later
    await Promise.all(servers.map((s) => Promise.race([s.stop().catch(() => {}), sleep(10_000)])));
    await Promise.all(servers.map((s) => s.kill().catch(() => {})));
    await cluster?.destroy();
  });

  step('SIGKILL of the primary postmaster mid-load: failover to the synchronous standby', async () => {
    startLoad();
    await sleep(5_000);
    const before = answers.filter(ok).length;
    assert.ok(before > 100, `the load runs (${before} successful requests before the fault)`);
    const injectedAt = Date.now();
    const { member, pid } = await cluster!.killPrimaryPostmaster();
    const fault: Fault = { name: 'SIGKILL failover', injectedAt, detail: `kill -KILL ${pid} (postmaster of ${member.name}, the primary)` };
    faults.push(fault);
    await recovered(fault, cluster!.members.find((m) => m !== member)!.name);
    await sleep(3_000);
    noExits();
    measure(fault, Date.now());
  });

  step('planned switchover under load (patronictl switchover --force)', async () => {
    const injectedAt = Date.now();
    const { from, to, output } = await cluster!.switchover();
    const fault: Fault = {
      name: 'switchover',
      injectedAt,
      detail: `patronictl switchover --leader ${from} --candidate ${to} --force: ${output
        .trim()
        .split('\n')
        .filter((l) => /switched over/.test(l))
        .join(' ')}`,
    };
    faults.push(fault);
    await recovered(fault, to);
    await sleep(3_000);
    noExits();
    measure(fault, Date.now());
  });

  step('after both faults: every answer well-formed and bounded, nothing acknowledged lost, no double allocation', async () => {
    await stopLoad();
    noExits();

    // Status counts per API; only 503 among the 5xx; every 503 in the API's format with Retry-After.
    const counts: Record<string, Record<number, number>> = {};
    for (const a of answers) {
      const c = (counts[a.api] ??= {});
      c[a.status] = (c[a.status] ?? 0) + 1;
    }
    console.log('\n# statuses per API (all requests of the load, both faults):');
    for (const api of APIS)
      console.log(
        `#   ${api.padEnd(10)} ${Object.entries(counts[api] ?? {})
          .map(([s, n]) => `${s}: ${n}`)
          .join(', ')}`,
      );
    const unknownCounts = APIS.map((api) => `${api} ${answers.filter((a) => a.api === api && commitUnknown(a)).length}`).join(', ');
    console.log(`#   503 commit_unknown: ${unknownCounts}; identifier allocations acknowledged after repeating a 503: ${ids.repeated}`);
    for (const api of APIS) {
      const example = answers.find((a) => a.api === api && a.status === 503);
      if (example) console.log(`#   a 503 of ${api}: Retry-After: ${example.retryAfter}; ${example.contentType}; ${example.text}`);
    }
    const slowest = Math.max(...answers.map((a) => a.answered - a.sent));
    console.log(`#   slowest answer: ${fmt(slowest)} (bound ${fmt(ANSWER_BOUND_MS)})`);

    const hung = answers.filter((a) => a.status === 0);
    assert.deepEqual(
      hung.slice(0, 5).map((a) => `${a.api} ${a.op}: ${a.text}`),
      [],
      `${hung.length} requests got no answer`,
    );
    const other5xx = answers.filter((a) => a.status >= 500 && a.status !== 503);
    assert.deepEqual(
      other5xx.slice(0, 5).map((a) => `${a.api} ${a.op} ${a.status}: ${a.text}`),
      [],
      `${other5xx.length} answers were 5xx other than 503`,
    );
    const badly = answers.filter((a) => a.status === 503 && wellFormed503(a)).map((a) => `${a.api} ${a.op}: ${wellFormed503(a)}: ${a.text}`);
    assert.deepEqual(badly.slice(0, 5), [], `${badly.length} 503 answers not in the API's format`);
    const slow = answers.filter((a) => a.answered - a.sent > ANSWER_BOUND_MS);
    assert.deepEqual(
      slow.slice(0, 5).map((a) => `${a.api} ${a.op} ${a.status} after ${a.answered - a.sent} ms`),
      [],
      'answers beyond the configured bounds',
    );
    // What else a client may see here: Placement refuses claims beyond capacity (409); nothing else.
    const expected: Record<Api, number[]> = { placement: [200, 204, 409, 503], baremetal: [200, 201, 204, 503], ids: [200, 201, 503] };
    const unexpected = answers.filter((a) => !expected[a.api].includes(a.status));
    assert.deepEqual(
      unexpected.slice(0, 5).map((a) => `${a.api} ${a.op} ${a.status}: ${a.text}`),
      [],
      `${unexpected.length} unexpected answers`,
    );
    const readyzBad = readyz.filter(
      (r) => (r.status !== 200 && r.status !== 503) || (r.status === 503 && !r.retryAfter) || r.answered - r.sent > HEALTH_TIMEOUT_S * 1_000 + 1_000,
    );
    assert.deepEqual(readyzBad.slice(0, 5), [], '/readyz answers 200 or 503 (with Retry-After) within --health-timeout');
    for (const f of faults) assert.ok(f.windows?.all?.firstFailure !== undefined, `${f.name} was measured`);

    const api = (p: number) => ({
      placement: (path: string) => call('placement', 'check', p, 'GET', `${url(p)}/placement${path}`, undefined, PLACEMENT_HEADERS),
      ironic: (path: string) => call('baremetal', 'check', p, 'GET', `${url(p)}/baremetal${path}`, undefined, IRONIC_HEADERS),
      ids: (path: string) => call('ids', 'check', p, 'GET', `${url(p)}/ids/v1${path}`),
    });

    // Placement: every acknowledged claim is there (unless released), refused ones never were.
    const lost: string[] = [];
    const applied503: string[] = [];
    const checkConsumer = async (consumer: string) => {
      const res = await api(rand(PROCESSES)).placement(`/allocations/${consumer}`);
      assert.equal(res.status, 200, res.text);
      return res.body.allocations as Record<string, { resources: Record<string, number> }>;
    };
    for (const [consumer, { rp, vcpu }] of claims.acked) {
      const held = await checkConsumer(consumer);
      if (claims.released.has(consumer)) {
        if (Object.keys(held).length) lost.push(`released ${consumer} still holds ${JSON.stringify(held)}`);
      } else if (!claims.releaseUnknown.has(consumer) && held[rp]?.resources.VCPU !== vcpu) {
        lost.push(`claim ${consumer} (${vcpu} VCPU on ${rp}) reads back as ${JSON.stringify(held)}`);
      }
    }
    for (const consumer of claims.refused) if (Object.keys(await checkConsumer(consumer)).length) applied503.push(`placement claim ${consumer}`);
    assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${claims.acked.size} acknowledged Placement claims/releases not as acknowledged`);

    // Placement: usage is the sum of the allocations; nobody over capacity.
    for (const rp of providers) {
      const [allocs, usages, inv] = await Promise.all([
        api(0).placement(`/resource_providers/${rp}/allocations`),
        api(1).placement(`/resource_providers/${rp}/usages`),
        api(2).placement(`/resource_providers/${rp}/inventories`),
      ]);
      const sum = Object.values(allocs.body.allocations as Record<string, { resources: Record<string, number> }>).reduce(
        (s, a) => s + (a.resources.VCPU ?? 0),
        0,
      );
      assert.equal(usages.body.usages.VCPU ?? 0, sum, `provider ${rp}: usage is the sum of its allocations`);
      const v = inv.body.inventories.VCPU;
      assert.ok(sum <= (v.total - v.reserved) * v.allocation_ratio, `provider ${rp} is over capacity: ${sum} of ${v.total}`);
    }

    // Bare metal: nothing stays allocating (bounded wait), every acknowledged allocation exists.
    const everyAllocation = async () => {
      const res = await api(0).ironic(`/v1/allocations?resource_class=${RC}&limit=1000`);
      assert.equal(res.status, 200, res.text);
      assert.ok(!res.body.next, 'one page holds them all');
      return res.body.allocations as Array<{ uuid: string; name: string; state: string; node_uuid: string | null; last_error: string | null }>;
    };
    const settleBy = Date.now() + 60_000;
    let all = await everyAllocation();
    while (all.some((a) => a.state === 'allocating') && Date.now() < settleBy) {
      await sleep(250);
      all = await everyAllocation();
    }
    assert.deepEqual(
      all.filter((a) => a.state === 'allocating').map((a) => a.name),
      [],
      'allocations still allocating 60 s after the load',
    );
    assert.deepEqual([...bm.unsettled], [], 'allocations that stayed allocating for 60 s during the load');
    assert.deepEqual(
      all.filter((a) => a.state === 'error').map((a) => `${a.name}: ${a.last_error}`),
      [],
      'allocations that failed (there are nodes enough)',
    );
    const byName = new Map(all.map((a) => [a.name, a]));
    for (const [name, uuid] of bm.acked) {
      const a = byName.get(name);
      if (bm.released.has(name)) assert.equal(a, undefined, `released allocation ${name} still exists`);
      else if (!bm.releaseUnknown.has(name)) assert.equal(a?.uuid, uuid, `acknowledged allocation ${name} is gone`);
    }
    for (const name of bm.refused) if (byName.has(name)) applied503.push(`bare-metal allocation ${name}`);
    // No node has two allocations, and nodes and allocations agree.
    const nodes = await api(1).ironic(`/v1/nodes?resource_class=${RC}&fields=uuid,allocation_uuid,instance_uuid&limit=1000`);
    assert.equal(nodes.status, 200, nodes.text);
    const active = all.filter((a) => a.state === 'active');
    const perNode = new Map<string, string[]>();
    for (const a of active) perNode.set(a.node_uuid!, [...(perNode.get(a.node_uuid!) ?? []), a.name]);
    assert.deepEqual(
      [...perNode].filter(([, list]) => list.length > 1),
      [],
      'nodes with two allocations',
    );
    for (const n of nodes.body.nodes as Array<{ uuid: string; allocation_uuid: string | null; instance_uuid: string | null }>) {
      const holder = active.find((a) => a.node_uuid === n.uuid);
      assert.equal(n.allocation_uuid, holder?.uuid ?? null, `node ${n.uuid} and its allocation agree`);
      if (holder) assert.equal(n.instance_uuid, holder.uuid);
    }

    // Identifiers: no value held twice, no owner holding two, every acknowledged one held.
    const held: Array<{ owner: string; value: unknown }> = [];
    for (let cursor: string | null = null; ; ) {
      const res: Answer = await api(2).ids(`/allocations?pool=${POOL}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      held.push(...res.body.items);
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    const byValue = new Map<string, string>();
    const byOwner = new Map<string, string>();
    for (const h of held) {
      assert.ok(!byValue.has(String(h.value)), `identifier ${h.value} is held twice (${byValue.get(String(h.value))}, ${h.owner})`);
      assert.ok(!byOwner.has(h.owner), `owner ${h.owner} holds two identifiers`);
      byValue.set(String(h.value), h.owner);
      byOwner.set(h.owner, String(h.value));
    }
    const idsLost = [...ids.acked].filter(([owner, value]) => byOwner.get(owner) !== value);
    assert.deepEqual(idsLost.slice(0, 5), [], `${idsLost.length} of ${ids.acked.size} acknowledged identifiers not held as acknowledged`);

    console.log(
      `# read back: ${claims.acked.size} Placement claims (${claims.released.size} released), ${bm.acked.size} bare-metal allocations (${bm.released.size} released), ${ids.acked.size} identifiers; ` +
        `503 without commit_unknown: ${claims.refused.size} claims, ${bm.refused.size} bare-metal allocations`,
    );
    // A 503 that does not say the outcome is unknown means the write was not applied.
    assert.deepEqual(applied503, [], 'writes answered 503 (not commit_unknown) that were applied nevertheless');
    noExits();
  });
});
