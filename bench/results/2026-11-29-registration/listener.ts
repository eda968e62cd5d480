// The candidates index's reaction to registration in ANOTHER process: two allot processes on one
// PostgreSQL, the set-up step (8 clients, 1 000 providers) sent to the first; the second only
// listens (NOTIFY) and then answers one candidates request, which re-reads the providers it was
// told of. Prints JSON: the writer's requests/s, the listener's CPU while the writer registered,
// and the listener's first and second candidates request after it.
// Run from a tree with dist/ built: npx tsx bench/results/2026-11-29-registration/listener.ts [TREE]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, startEmbeddedPostgres } from '../../../test/helpers/postgres.js';
import { loadAverage, usageOf } from '../../lib/procfs.js';
import { makeLogDir, startAllot } from '../../lib/targets.js';

const IDLE_S = 15;
const here = path.dirname(fileURLToPath(import.meta.url));
const tree = path.resolve(process.argv[2] ?? path.join(here, '../../..'));
const pgServer = await startEmbeddedPostgres();
const logDir = makeLogDir();
try {
  const db = await createTestDatabase(pgServer.socketUrl, 'allot_listener');
  const writer = await startAllot({ name: 'writer', root: tree, db, logDir });
  const listener = await startAllot({ name: 'listener', root: tree, db, logDir });
  const headers = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
  const candidates = async () => {
    const started = performance.now();
    const res = await fetch(`${listener.url}/allocation_candidates?resources=VCPU:1&limit=50`, { headers });
    const body = (await res.json()) as { allocation_requests: unknown[] };
    return { ms: Math.round((performance.now() - started) * 10) / 10, candidates: body.allocation_requests.length };
  };
  const empty = await candidates(); // the listener's index is loaded
  // what the listener spends with nothing to hear (its background workers), for as long
  const idleStart = usageOf([listener.pid]).server_cpu_s;
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
  const idle = usageOf([listener.pid]).server_cpu_s - idleStart;
  const before = usageOf([listener.pid]).server_cpu_s;
  const registering = performance.now();
  const load_before = loadAverage();
  const bench = spawnSync(
    'npx',
    ['tsx', path.join(here, '../../placement.ts'), '--url', writer.url, '--steps', 'setup', '--providers', '1000', '--concurrency', '8', '--no-baselines'],
    { cwd: here, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const during = usageOf([listener.pid]).server_cpu_s - before;
  const registeringS = (performance.now() - registering) / 1000;
  const setup = JSON.parse(bench.stdout).targets[writer.url].sizes[0].setup;
  const first = await candidates();
  const second = await candidates();
  console.log(
    JSON.stringify(
      {
        tree,
        load_before,
        load_after: loadAverage(),
        writer_requests_per_s: setup.requests_per_s,
        requests: 3 * setup.providers_added,
        listener_cpu_ms_while_registering: Math.round(during * 1000),
        registering_s: Math.round(registeringS * 10) / 10,
        listener_cpu_ms_idle: { seconds: IDLE_S, ms: Math.round(idle * 1000) },
        listener_cpu_ms_per_request_less_idle: Math.round(((during - (idle * registeringS) / IDLE_S) * 1e6) / (3 * setup.providers_added)) / 1000,
        candidates_before: empty,
        listener_first_candidates_after: first,
        listener_second_candidates_after: second,
      },
      null,
      2,
    ),
  );
  await writer.stop();
  await listener.stop();
} finally {
  await pgServer.stop();
}
