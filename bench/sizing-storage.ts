// What each kind of object costs in the database and in the allot process, for `allot sizing`
// (docs/operations.md "Capacity planning"). One `allot serve` process (dist/, `npm run build`
// first) per database; over HTTP it registers providers (POST, inventories of three classes,
// traits: Placement's `setup` step of bench/placement.ts), claims on them (PUT /allocations, one
// consumer each), enrolls bare-metal nodes (manage → provide → power off), and allocates
// identifier values from one pool; after each phase it reads the size of allot's tables
// (PostgreSQL: pg_total_relation_size of every table of the database, indexes and TOAST
// included; SQLite: page_count × page_size) and the server's resident memory. Prints one JSON
// document (and writes it to --out).
//
//   npm run build && npx tsx bench/sizing-storage.ts --count 2000 --out bench/results/2026-11-29-sizing/storage.json
//
// PostgreSQL: DATABASE_URL (must allow CREATE DATABASE), else a throwaway embedded server.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createTestDatabase, freePort, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { jsonCaller, makeNodes, round1 } from './lib/api-calls.js';
import { loadAverage, processTree } from './lib/procfs.js';
import { ownPostgresPids, startAllot } from './lib/targets.js';

const { values } = parseArgs({
  options: {
    /** objects per phase */
    count: { type: 'string', default: '2000' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
    clients: { type: 'string', default: '8' },
    root: { type: 'string', default: fileURLToPath(new URL('..', import.meta.url)) },
    out: { type: 'string' },
  },
});
const COUNT = Number(values.count);
const CLIENTS = Number(values.clients);
const DIALECTS = values.dialects!.split(',') as Array<'sqlite' | 'postgres'>;

const call = jsonCaller({ 'x-openstack-ironic-api-version': '1.82', 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' });

function expect(what: string, res: { status: number; body: unknown }, status: number): any {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `count` operations over CLIENTS clients. */
async function spread(count: number, op: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) await op(next++);
    }),
  );
}

function statusMb(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}
const rssMb = (pid: number) => statusMb(pid, 'VmRSS');

/** Private (anonymous) memory of each PostgreSQL process under this one, MB: what a backend costs beyond shared_buffers. */
function postgresPrivateMb(): { processes: number; median_mb: number; max_mb: number } {
  const mbs = ownPostgresPids()
    .flatMap((pid) => processTree(pid).slice(1))
    .map((p) => statusMb(p.pid, 'RssAnon'))
    .sort((a, b) => a - b);
  return { processes: mbs.length, median_mb: mbs[Math.floor(mbs.length / 2)] ?? 0, max_mb: mbs[mbs.length - 1] ?? 0 };
}

async function measure(dialect: 'sqlite' | 'postgres', db: string, workDir: string) {
  const port = await freePort();
  const served = await startAllot({
    name: `sizing-${dialect}`,
    root: path.resolve(values.root!),
    db,
    logDir: workDir,
    mainPort: port,
    extraArgs: ['--transition-time', '0'],
  });
  const placement = served.url;
  const baremetal = `http://127.0.0.1:${port}/baremetal`;
  const ids = `http://127.0.0.1:${port}/ids/v1`;
  let bytes: () => Promise<number>;
  let close = async () => {};
  if (dialect === 'postgres') {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    bytes = async () => {
      const r = await client.query(
        `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as b from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.relkind in ('r', 'm') and n.nspname = 'public'`,
      );
      return Number(r.rows[0].b);
    };
    close = () => client.end();
  } else {
    const file = db.slice('sqlite:'.length);
    bytes = async () => {
      const reader = new Database(file, { readonly: true });
      try {
        return Number(reader.pragma('page_count', { simple: true })) * Number(reader.pragma('page_size', { simple: true }));
      } finally {
        reader.close();
      }
    };
  }
  const phases: Record<string, unknown> = {};
  const phase = async (name: string, unit: string, count: number, run: () => Promise<void>) => {
    const b0 = await bytes();
    const r0 = rssMb(served.pid);
    const t0 = performance.now();
    await run();
    const seconds = (performance.now() - t0) / 1000;
    // a GET of candidates makes the provider index take in what changed
    await call(placement, 'GET', '/allocation_candidates?resources=VCPU:1&limit=1');
    const b1 = await bytes();
    const r1 = rssMb(served.pid);
    phases[name] = {
      unit,
      count,
      seconds: round1(seconds),
      database_bytes_per_unit: Math.round((b1 - b0) / count),
      server_rss_mb_before: r0,
      server_rss_mb_after: r1,
    };
    process.stderr.write(`${dialect} ${name}: ${JSON.stringify(phases[name])}\n`);
  };
  try {
    const providers: string[] = [];
    await phase('providers', 'provider with 3 inventories and 1–3 traits', COUNT, () =>
      spread(COUNT, async (i) => {
        const rp = expect('provider', await call(placement, 'POST', '/resource_providers', { name: `size-${i}` }), 200);
        const inv = expect(
          'inventories',
          await call(placement, 'PUT', `/resource_providers/${rp.uuid}/inventories`, {
            resource_provider_generation: rp.generation,
            inventories: { VCPU: { total: 64, allocation_ratio: 16 }, MEMORY_MB: { total: 262144, allocation_ratio: 1.5 }, DISK_GB: { total: 10000 } },
          }),
          200,
        );
        const traits = ['HW_CPU_X86_SSE42', ...(i % 2 ? ['HW_CPU_X86_AVX2'] : []), ...(i % 4 === 0 ? ['STORAGE_DISK_SSD'] : [])];
        expect(
          'traits',
          await call(placement, 'PUT', `/resource_providers/${rp.uuid}/traits`, { resource_provider_generation: inv.resource_provider_generation, traits }),
          200,
        );
        providers.push(rp.uuid);
      }),
    );
    await phase('claims', 'consumer with one allocation of 3 classes (PUT /allocations)', COUNT, () =>
      spread(COUNT, async (i) => {
        const rp = providers[i % providers.length]!;
        expect(
          'claim',
          await call(placement, 'PUT', `/allocations/${crypto.randomUUID()}`, {
            allocations: { [rp]: { resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 10 } } },
            project_id: crypto.randomUUID(),
            user_id: crypto.randomUUID(),
            consumer_generation: null,
            consumer_type: 'INSTANCE',
          }),
          204,
        );
      }),
    );
    await phase('nodes', 'bare-metal node, available (database backend)', COUNT, () => makeNodes(call, baremetal, 'sizing', COUNT, CLIENTS));
    expect('pool', await call(ids, 'POST', '/pools', { name: 'sizing', kind: 'integer', ranges: ['1-16000000'] }), 201);
    await phase('identifier_values', 'identifier value allocated from an integer pool (its default strategy)', COUNT, () =>
      spread(COUNT, async (i) => {
        expect('allocation', await call(ids, 'POST', '/pools/sizing/allocations', { owner: `o-${i}` }), 201);
      }),
    );
    // the server's connections are still open here: its backends, and the cluster's own processes
    if (dialect === 'postgres') phases.postgres_private_memory = postgresPrivateMb();
  } finally {
    await close();
    await served.stop();
  }
  return { dialect, phases };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-sizing-'));
const postgres = DIALECTS.includes('postgres') && !process.env.DATABASE_URL ? await startEmbeddedPostgres() : null;
const pgAdmin = process.env.DATABASE_URL ?? postgres?.adminUrl;
const load = [loadAverage()];
const results = [];
try {
  for (const dialect of DIALECTS) {
    const db = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'sizing.db')}` : await createTestDatabase(pgAdmin!, 'allot_sizing');
    results.push(await measure(dialect, db, dir));
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
load.push(loadAverage());

const document = {
  benchmark: 'sizing-storage',
  what: `per phase, ${COUNT} objects over ${CLIENTS} clients; database bytes = growth of all of allot's tables with their indexes (PostgreSQL pg_total_relation_size, SQLite page_count × page_size) ÷ objects; server RSS before and after each phase`,
  loadAverage: load,
  machine: { cpus: os.cpus().length, node: process.version },
  results,
};
if (values.out) writeFileSync(values.out, `${JSON.stringify(document, null, 2)}\n`);
console.log(JSON.stringify(document, null, 2));
