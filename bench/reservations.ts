// One reservation across the three engines, end to end (docs/ids.md "Reservations across the
// engines"): clients each POST /ids/v1/service-instances with validate and promote — a bare-metal
// node, bandwidth on a fabric provider (Placement capacity) and two identifiers (a VLAN and an
// address) in one transaction — until `--reservations` were asked; reservations per second =
// those answered 201 / wall time. One `allot serve` process (built from `--root`) per database ×
// backend × concurrency, fresh nodes each round, the lean keep-alive client, the server's
// statement count (bench/lib/count-queries.mjs). `npm run bench` sets it beside the bare-metal
// allocation row (bench/baremetal.ts) of the same run.
//
//   npm run bench:reservations
//   npx tsx bench/reservations.ts --reservations 500 --concurrency 1,16 --dialects sqlite
//   npx tsx bench/reservations.ts --dialects sqlite --concurrency 16 --allot-cpu-prof /tmp/prof
//   npx tsx bench/reservations.ts --uplink per-node --backends placement   # bandwidth on each node's NIC
//
// PostgreSQL: DATABASE_URL (must allow CREATE DATABASE), else a throwaway embedded server.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createTestDatabase, freePort, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { statementsSent } from './lib/count-queries.mjs';
import { jsonCaller, makeNodes, percentile, round1 } from './lib/api-calls.js';
import { cpuMeter } from './lib/procfs.js';
import { ownPostgresPids, startAllot } from './lib/targets.js';

const { values } = parseArgs({
  options: {
    reservations: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '1,16' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
    backends: { type: 'string', default: 'database,placement' },
    /** the allot tree whose dist/ is served (`npm run build` there first) */
    root: { type: 'string', default: fileURLToPath(new URL('..', import.meta.url)) },
    out: { type: 'string' },
    /**
     * shared: one fabric provider every reservation takes its bandwidth from (the worst case: one
     * row all of them write); per-node: a NIC provider under each node, the uplink `in_tree_of`
     * the node (docs/ids.md's worked example; needs the placement backend, whose nodes are providers)
     */
    uplink: { type: 'string', default: 'shared' },
    /** run the servers with node --cpu-prof, profiles written here (npx tsx bench/cpu-profile.ts DIR) */
    'allot-cpu-prof': { type: 'string' },
  },
});
const RESERVATIONS = Number(values.reservations);
const CONCURRENCY = values.concurrency!.split(',').map(Number);
const DIALECTS = values.dialects!.split(',') as Array<'sqlite' | 'postgres'>;
const BACKENDS = values.backends!.split(',') as Array<'database' | 'placement'>;
const BW = 'NET_BW_EGR_KILOBIT_PER_SEC';
const PER_NODE = values.uplink === 'per-node';
if (!PER_NODE && values.uplink !== 'shared') throw new Error('--uplink is shared or per-node');
if (PER_NODE && BACKENDS.includes('database')) throw new Error('--uplink per-node needs --backends placement (its nodes are providers)');

const counter = pathToFileURL(path.join(import.meta.dirname, 'lib/count-queries.mjs')).href;

const call = jsonCaller({ 'x-openstack-ironic-api-version': '1.82', 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' });

async function measure(dialect: 'sqlite' | 'postgres', backend: 'database' | 'placement', db: string, workDir: string, concurrency: number) {
  const name = `allot-${dialect}-${backend}-${concurrency}`;
  const countFile = path.join(workDir, `${name}.statements.json`);
  const port = await freePort();
  const served = await startAllot({
    name,
    root: path.resolve(values.root!),
    db,
    logDir: workDir,
    mainPort: port,
    nodeArgs: ['--import', counter, ...(values['allot-cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['allot-cpu-prof'])}`] : [])],
    env: { ALLOT_BENCH_QUERY_COUNT_FILE: countFile },
    extraArgs: ['--baremetal-backend', backend, '--transition-time', '0', '--pool-size', String(Math.max(10, concurrency + 8))],
  });
  const main = `http://127.0.0.1:${port}`;
  try {
    const rc = `bench-${concurrency}`;
    await makeNodes(call, `${main}/baremetal`, rc, RESERVATIONS);
    if (PER_NODE) await makeNics(`${main}/placement`, `${main}/baremetal`, rc);
    else await makeUplink(`${main}/placement`, `fabric-${concurrency}`, null, RESERVATIONS * 1000);
    const ids = `${main}/ids/v1`;
    await call(ids, 'POST', '/pools', { name: `vlan-${concurrency}`, kind: 'integer', ranges: [`1-${RESERVATIONS}`] });
    await call(ids, 'POST', '/pools', { name: `addr-${concurrency}`, kind: 'address', ranges: ['10.0.0.0/16'] });
    const spec = `server-${concurrency}`;
    const made = await call(ids, 'POST', '/allocation-specs', {
      name: spec,
      attributes: {
        server: { from: 'node', resource_class: rc },
        uplink: { from: 'capacity', resources: { [BW]: 1000 }, ...(PER_NODE && { in_tree_of: 'server' }) },
        vlan: { from: 'pool', pool: `vlan-${concurrency}` },
        addr: { from: 'pool', pool: `addr-${concurrency}` },
      },
    });
    if (made.status !== 201) throw new Error(`spec: ${JSON.stringify(made.body)}`);

    const latencies: number[] = [];
    let started = 0;
    let failed = 0;
    const sent0 = await statementsSent(countFile);
    const meter = cpuMeter(() => [served.pid, ...(dialect === 'postgres' ? ownPostgresPids() : [])]);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (started < RESERVATIONS) {
          started++;
          const res = await call(ids, 'POST', '/service-instances', { allocation_spec: spec, attributes: {}, validate: true, promote: true });
          if (res.status !== 201) failed++;
          latencies.push(res.ms);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = meter.per(RESERVATIONS);
    const sent1 = await statementsSent(countFile);
    latencies.sort((a, b) => a - b);
    return {
      db: dialect,
      backend,
      concurrency,
      reservations: RESERVATIONS,
      failed,
      seconds: round1(seconds),
      reservationsPerSecond: round1((RESERVATIONS - failed) / seconds),
      statementsPerReservation: sent0 === null || sent1 === null ? null : round1((sent1 - sent0) / RESERVATIONS),
      /** CPU per reservation of the server, its PostgreSQL (null on SQLite) and this client */
      cpu,
      latencyMs: { p50: round1(percentile(latencies, 50)), p95: round1(percentile(latencies, 95)), max: round1(latencies[latencies.length - 1]!) },
    };
  } finally {
    await served.stop();
  }
}

/** A provider of `total` bandwidth (under `parent`, or a root). */
async function makeUplink(placement: string, name: string, parent: string | null, total: number) {
  const rp = (await call(placement, 'POST', '/resource_providers', { name, ...(parent && { parent_provider_uuid: parent }) })).body;
  const res = await call(placement, 'PUT', `/resource_providers/${rp.uuid}/inventories`, {
    resource_provider_generation: rp.generation,
    inventories: { [BW]: { total } },
  });
  if (res.status !== 200) throw new Error(`uplink setup failed: ${JSON.stringify(res.body)}`);
}

/** A NIC of 1 000 bandwidth under each node of `rc` (the placement backend mirrors nodes as providers). */
async function makeNics(placement: string, baremetal: string, rc: string) {
  const nodes: Array<{ uuid: string }> = (await call(baremetal, 'GET', `/v1/nodes?resource_class=${rc}&limit=1000`)).body.nodes;
  if (nodes.length < RESERVATIONS) throw new Error(`expected ${RESERVATIONS} nodes, found ${nodes.length}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < nodes.length) {
        const node = nodes[next++]!;
        await makeUplink(placement, `nic-${node.uuid}`, node.uuid, 1000);
      }
    }),
  );
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-bench-reservations-'));
const postgres = DIALECTS.includes('postgres') && !process.env.DATABASE_URL ? await startEmbeddedPostgres() : null;
const pgAdmin = process.env.DATABASE_URL ?? postgres?.adminUrl;
const results = [];
try {
  for (const dialect of DIALECTS) {
    for (const backend of BACKENDS) {
      for (const concurrency of CONCURRENCY) {
        const db = dialect === 'sqlite' ? `sqlite:${path.join(dir, `${backend}-${concurrency}.db`)}` : await createTestDatabase(pgAdmin!, 'allot_bench');
        const result = await measure(dialect, backend, db, dir, concurrency);
        results.push(result);
        process.stderr.write(`${JSON.stringify(result)}\n`);
      }
    }
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const document = {
  benchmark: 'reservations',
  what: 'each client: POST /ids/v1/service-instances {validate, promote} reserving a bare-metal node, 1 Mbit/s (on one fabric provider, or with --uplink per-node on each node’s NIC) and two identifiers (a VLAN, an address) in one transaction; one allot serve process of its own per database × backend × concurrency, fresh nodes, the lean keep-alive client',
  uplink: values.uplink,
  loadAverage: os.loadavg().map(round1),
  machine: { cpus: os.cpus().length, node: process.version },
  results,
};
if (values.out) writeFileSync(values.out, `${JSON.stringify(document, null, 2)}\n`);
console.log(JSON.stringify(document, null, 2));
