// The identifier paths of issue 15 against real `allot serve` processes built from a tree
// (`--root`, default this one; `npm run build` first), so one bench measures two builds alike:
//
// - allocation: one pool, `clients` clients spread over `processes` processes on one database;
// - bulk fill: HTTP imports in batches of `small-batch` (the rate a client doing small batches
//   sees), then fill the pool to `held` values in batches of `fill-batch`;
// - the pool full: listing pages (free ranges, `?state=reserved`, the pool's allocations), and
//   allocations while listings run (a listing must not hold an allocation up).
//
// Per phase: requests/s, p50/p99, SQL statements per operation (the count-queries preload: one
// round trip each on PostgreSQL), server and PostgreSQL CPU ms per operation, and on PostgreSQL
// the mean number of backends waiting for a lock (pg_locks sampled every 20 ms) and the
// statements that took the most time (pg_stat_statements).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createTestDatabase, freePort, startEmbeddedPostgres } from '../../test/helpers/postgres.js';
import { statementsSent } from './count-queries.mjs';
import { KeepAliveClient } from './http.js';
import { sampleLockWaiters } from './lock-waiters.js';
import { usageOf } from './procfs.js';
import { type Target, ownPostgresPids, startAllot } from './targets.js';

export interface ServedOptions {
  root: string;
  db: 'sqlite' | 'postgres';
  processes: number;
  clients: number;
  allocations: number;
  /** allocations in a pool of their own before anything is measured (V8's JIT, PostgreSQL's per-connection plan caches) */
  warmup: number;
  smallBatch: number;
  smallValues: number;
  held: number;
  fillBatch: number;
  /** stop filling after this long (a slow build must not make the bench unbounded) */
  fillTimeoutS: number;
  pages: number;
  /** run the servers with node --cpu-prof, profiles written here (bench/cpu-profile.ts reads them) */
  cpuProfDir?: string;
  progress: (message: string) => void;
}

const VNI_MAX = 16_777_215;
const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;

function quantiles(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const q = (p: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
  return { p50_ms: q(0.5), p99_ms: q(0.99) };
}

/** One keep-alive client per server (bench/lib/http.ts: cheaper per request than fetch). */
const clients = new Map<string, KeepAliveClient>();

async function call(url: string, method: string, body?: unknown): Promise<{ status: number; json: any; ms: number }> {
  const { origin, pathname, search } = new URL(url);
  let client = clients.get(origin);
  if (!client) clients.set(origin, (client = new KeepAliveClient({ baseUrl: origin, headers: {}, maxSockets: 64, timeoutMs: 300_000 })));
  const t = performance.now();
  for (let attempt = 1; ; attempt++) {
    const r = await client.request(method, pathname + search, body);
    // a kept-alive connection the server closed between two requests: again on a new one
    if (r.error !== undefined && attempt < 3) continue;
    if (r.error !== undefined) throw new Error(`${method} ${url}: ${r.error}`);
    return { status: r.status, json: r.body ? JSON.parse(r.body) : null, ms: performance.now() - t };
  }
}

/** `count` distinct values in [1, VNI_MAX] not in `taken` (which they join). */
function freshValues(count: number, taken: Set<number>): number[] {
  const out: number[] = [];
  while (out.length < count) {
    const v = 1 + Math.floor(Math.random() * VNI_MAX);
    if (!taken.has(v)) {
      taken.add(v);
      out.push(v);
    }
  }
  return out;
}

export async function runServed(o: ServedOptions): Promise<Record<string, unknown>> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-ids-served-'));
  const cleanups: Array<() => Promise<void>> = [];
  try {
    let dbUrl: string;
    let admin: pg.Client | null = null;
    if (o.db === 'postgres') {
      // DATABASE_URL: a server of your own (with pg_stat_statements preloaded), e.g. to watch it with auto_explain
      let adminUrl = process.env.DATABASE_URL;
      if (!adminUrl) {
        const server = await startEmbeddedPostgres(['-c', 'shared_preload_libraries=pg_stat_statements']);
        cleanups.push(server.stop);
        adminUrl = server.adminUrl;
      }
      dbUrl = await createTestDatabase(adminUrl, 'allot_bench');
      admin = new pg.Client({ connectionString: dbUrl });
      await admin.connect();
      cleanups.push(() => admin!.end());
      await admin.query('create extension if not exists pg_stat_statements');
    } else dbUrl = `sqlite:${path.join(work, 'ids.db')}`;

    const counter = pathToFileURL(path.join(import.meta.dirname, 'count-queries.mjs')).href;
    const servers: Array<{ target: Target; base: string; countFile: string }> = [];
    const startOne = async (i: number) => {
      const port = await freePort();
      const countFile = path.join(work, `statements-${i}.json`);
      const target = await startAllot({
        name: `allot-${o.db}-${i}`,
        root: o.root,
        db: dbUrl,
        logDir: work,
        mainPort: port,
        nodeArgs: ['--import', counter, ...(o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : [])],
        env: { ALLOT_BENCH_QUERY_COUNT_FILE: countFile },
        extraArgs: ['--body-limit', String(64 << 20)],
      });
      cleanups.push(target.stop);
      servers.push({ target, base: `http://127.0.0.1:${port}/ids/v1`, countFile });
    };
    await startOne(0); // migrates the database alone
    await Promise.all(Array.from({ length: o.processes - 1 }, (_, i) => startOne(i + 1)));

    const statements = async () => (await Promise.all(servers.map((s) => statementsSent(s.countFile)))).reduce((a, b) => a + b, 0);
    // the servers, and the embedded PostgreSQL (a child of this process) when there is one
    const roots = () => [...servers.map((s) => s.target.pid), ...ownPostgresPids()];

    /** Run `op` `count` times over `concurrency` clients, spread over the processes; its costs. */
    const phase = async (name: string, count: number, concurrency: number, op: (base: string, i: number) => Promise<{ ms: number; values?: number }>) => {
      o.progress(`${o.db}: ${name}`);
      if (admin) await admin.query('select pg_stat_statements_reset()');
      const s0 = await statements();
      const u0 = usageOf(roots());
      const client0 = process.cpuUsage();
      const lockWaiters = admin ? sampleLockWaiters(dbUrl) : null;
      const latencies: number[] = [];
      let values = 0;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async (_, c) => {
          const base = servers[c % servers.length]!.base;
          for (;;) {
            const i = next++;
            if (i >= count) return;
            const r = await op(base, i);
            latencies.push(r.ms);
            values += r.values ?? 1;
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const meanLockWaiters = await lockWaiters?.stop();
      const s1 = await statements();
      const u1 = usageOf(roots());
      const client = process.cpuUsage(client0);
      const result: Record<string, unknown> = {
        operations: count,
        concurrency,
        seconds: round(seconds),
        per_second: round(count / seconds, 1),
        values_per_second: Math.round(values / seconds),
        ...quantiles(latencies),
        sql_statements_per_op: round((s1 - s0) / count),
        server_cpu_ms_per_op: round(((u1.server_cpu_s - u0.server_cpu_s) * 1000) / count),
        /** this process: the clients (and, with a PostgreSQL, the lock sampler) */
        client_cpu_ms_per_op: round((client.user + client.system) / 1000 / count),
      };
      if (admin) {
        result.db_cpu_ms_per_op = round(((u1.db_cpu_s - u0.db_cpu_s) * 1000) / count);
        result.mean_lock_waiters = round(meanLockWaiters ?? 0);
        const top = await admin.query(
          `select calls, round(total_exec_time::numeric, 1) as total_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
           from pg_stat_statements where query not like '%pg_stat_statements%' and query not like '%pg_locks%'
           order by total_exec_time desc limit 5`,
        );
        result.top_statements = top.rows;
      }
      return result;
    };

    const expect = (what: string, r: { status: number; json: any }, ...ok: number[]) => {
      if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json)}`);
    };
    const base0 = servers[0]!.base;
    const out: Record<string, unknown> = { db: o.db, processes: o.processes, root: o.root };

    // Fresh processes run their first requests in unoptimized code, on connections that have not
    // yet prepared their statements, and a 2 000-allocation phase measured that too: server CPU
    // 1.08–1.48 ms per allocation cold, 1.05–1.20 after this warm-up, p99 155–164 ms vs 89–169 ms
    // (bench/results/2026-11-27-ids-warmup). A service runs warm.
    if (o.warmup > 0) {
      expect('create pool', await call(`${base0}/pools`, 'POST', { name: 'warmup', kind: 'integer', ranges: [`1-${VNI_MAX}`] }), 201);
      await phase(`warm-up, ${o.warmup} allocations (not measured)`, o.warmup, o.clients, async (base, i) => {
        const r = await call(`${base}/pools/warmup/allocations`, 'POST', { owner: `w-${i}` });
        expect('allocate', r, 201);
        return r;
      });
    }
    out.warmup_allocations = o.warmup;
    expect('create pool', await call(`${base0}/pools`, 'POST', { name: 'race', kind: 'integer', ranges: [`1-${VNI_MAX}`] }), 201);
    out.allocation = await phase('allocation, one pool', o.allocations, o.clients, async (base, i) => {
      const r = await call(`${base}/pools/race/allocations`, 'POST', { owner: `a-${i}` });
      expect('allocate', r, 201);
      return r;
    });

    expect('create pool', await call(`${base0}/pools`, 'POST', { name: 'filled', kind: 'integer', ranges: [`1-${VNI_MAX}`] }), 201);
    const taken = new Set<number>();
    const importBatch = async (base: string, size: number, tag: string) => {
      const items = freshValues(size, taken).map((value, j) => ({ value, owner: `${tag}-${j}` }));
      const r = await call(`${base}/pools/filled/imports`, 'POST', { items });
      expect('import', r, 200);
      if (r.json.imported !== size) throw new Error(`import: ${JSON.stringify(r.json).slice(0, 300)}`);
      return { ms: r.ms, values: size };
    };
    const smallBatches = Math.ceil(o.smallValues / o.smallBatch);
    out.bulk_fill_small = {
      batch: o.smallBatch,
      ...(await phase(`bulk fill, batches of ${o.smallBatch}`, smallBatches, o.processes, (base, i) => importBatch(base, o.smallBatch, `s${i}`))),
    };

    // Fill to `held`, bounded in time.
    o.progress(`${o.db}: filling to ${o.held} values in batches of ${o.fillBatch}`);
    const fillStart = performance.now();
    let batches = 0;
    while (taken.size + o.fillBatch <= o.held && performance.now() - fillStart < o.fillTimeoutS * 1000) {
      await importBatch(base0, o.fillBatch, `f${batches++}`);
    }
    const fillSeconds = (performance.now() - fillStart) / 1000;
    out.bulk_fill_large = {
      batch: o.fillBatch,
      values: batches * o.fillBatch,
      seconds: round(fillSeconds),
      values_per_second: Math.round((batches * o.fillBatch) / fillSeconds),
      stopped_by_timeout: taken.size + o.fillBatch <= o.held,
    };
    out.held = taken.size;

    // Some reservations among the held values, for `?state=reserved`.
    for (let i = 0; i < 50; i++) expect('reserve', await call(`${base0}/pools/filled/allocations`, 'POST', { owner: `r-${i}`, ttl_seconds: 3600 }), 201);

    /** One page of 100 (the first): what a listing costs with the pool full. */
    const firstPage = (path0: string) => async (base: string) => {
      const r = await call(`${base}${path0}${path0.includes('?') ? '&' : '?'}limit=100`, 'GET');
      expect('list', r, 200);
      return r;
    };
    const listings: Record<string, unknown> = {};
    for (const [name, p] of [
      ['free_ranges', '/pools/filled/free-ranges'],
      ['free_ranges_auto', '/pools/filled/free-ranges?band=auto'],
      ['pool_allocations', '/pools/filled/allocations'],
      ['pool_reserved', '/pools/filled/allocations?state=reserved'],
      ['all_reserved', '/allocations?state=reserved'],
    ] as const) {
      listings[name] = await phase(`listing ${name} (first page)`, o.pages, 1, firstPage(p));
    }
    // Deep pages: follow next_cursor through the free ranges.
    {
      let cursor: string | null = null;
      const latencies: number[] = [];
      for (let i = 0; i < o.pages; i++) {
        const r: { status: number; json: any; ms: number } = await call(
          `${base0}/pools/filled/free-ranges?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          'GET',
        );
        expect('list', r, 200);
        latencies.push(r.ms);
        cursor = r.json.next_cursor;
        if (!cursor) break;
      }
      listings.free_ranges_following_cursor = { pages: latencies.length, ...quantiles(latencies) };
    }
    out.listings_while_full = listings;

    out.allocation_while_full = await phase('allocation, pool full', o.allocations, o.clients, async (base, i) => {
      const r = await call(`${base}/pools/filled/allocations`, 'POST', { owner: `full-${i}` });
      expect('allocate', r, 201);
      return r;
    });

    // Allocations while a client lists the full pool page after page.
    let listing = true;
    let listed = 0;
    const lister = (async () => {
      while (listing) {
        for (const p of [
          '/pools/filled/free-ranges?limit=1000',
          '/pools/filled/allocations?state=reserved&limit=1000',
          '/pools/filled/allocations?limit=1000',
        ]) {
          expect('list', await call(`${base0}${p}`, 'GET'), 200);
          listed++;
        }
      }
    })();
    out.allocation_while_listing = await phase('allocation while listing', o.allocations, o.clients, async (base, i) => {
      const r = await call(`${base}/pools/filled/allocations`, 'POST', { owner: `busy-${i}` });
      expect('allocate', r, 201);
      return r;
    });
    listing = false;
    await lister;
    (out.allocation_while_listing as Record<string, unknown>).listings_meanwhile = listed;
    return out;
  } finally {
    for (const client of clients.values()) client.close();
    clients.clear();
    for (const c of cleanups.reverse()) await c().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

/** The rows `npm run bench` (bench/all.ts) prints for issue 15's identifier paths. */
interface Phase {
  per_second: number;
  values_per_second: number;
  p50_ms: number;
  p99_ms: number;
  sql_statements_per_op: number;
  batch: number;
  stopped_by_timeout?: boolean;
}

interface ServedRun {
  held: number;
  allocation: Phase;
  bulk_fill_small: Phase;
  bulk_fill_large: Phase;
  listings_while_full: Record<'free_ranges' | 'pool_reserved', Phase>;
  allocation_while_listing: Phase;
}

export function servedTable(runs: Record<string, unknown>): Array<{ what: string; allot: string; note?: string }> {
  const rows: Array<{ what: string; allot: string; note?: string }> = [];
  for (const [db, run] of Object.entries(runs)) {
    const r = run as ServedRun;
    const a = r.allocation;
    rows.push({
      what: `ids: allocation, one pool, 48 clients over 3 processes (${db})`,
      allot: `${a.per_second}/s, p50 ${a.p50_ms} ms`,
      note: `${a.sql_statements_per_op} statements per allocation`,
    });
    rows.push({ what: `ids: bulk fill, imports of ${r.bulk_fill_small.batch} (${db})`, allot: `${r.bulk_fill_small.values_per_second} values/s` });
    rows.push({
      what: `ids: bulk fill, imports of ${r.bulk_fill_large.batch} (${db})`,
      allot: `${r.bulk_fill_large.values_per_second} values/s`,
      note: `${r.held} values held${r.bulk_fill_large.stopped_by_timeout ? ' (fill stopped by --fill-timeout)' : ''}`,
    });
    const l = r.listings_while_full;
    rows.push({
      what: `ids: listing pages with the pool full (${db})`,
      allot: `free ranges p50 ${l.free_ranges.p50_ms} ms, ?state=reserved p50 ${l.pool_reserved.p50_ms} ms`,
      note: `${r.held} values held`,
    });
    const w = r.allocation_while_listing;
    rows.push({ what: `ids: allocation while listing the full pool (${db})`, allot: `${w.per_second}/s, p99 ${w.p99_ms} ms` });
  }
  return rows;
}
