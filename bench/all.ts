// `npm run bench`: every benchmark in one run, each against its reference where one exists on this
// machine, and one table with the rows docs/performance.md reports. It runs, one after another
// (never two at once: they would measure each other):
//
//   placement   bench/placement.ts --vs-real: allot on SQLite and PostgreSQL and the real Placement
//               (Debian's, started by the bench), plus the raw commit limits of this machine
//               (pgbench -N, a bare SQLite commit loop)
//   candidates  bench/candidates.ts at 100 000 and 1 000 000 providers, both databases
//   baremetal   bench/baremetal.ts --vs-real: allot (both databases, both backends) and the real
//               Ironic; one client among 10 and 10 000 matching nodes
//   ids         bench/ids.ts --served: 48 clients over 3 processes on one pool, bulk fill up to
//               1 M values, listings and allocations while it is full
//   reservations bench/reservations.ts: a node + capacity + two identifiers in one request, 1 and
//               16 clients, both databases, both bare-metal backends
//   hot-pools   bench/hot-pools.ts: 48 clients over 3 processes fill a 100- and a 4 094-value pool
//               with each strategy (SQLite: one process)
//
// Each bench writes its own JSON into --out-dir (default bench/results/<date>-all/); the table
// goes to stdout and to table.txt there, and summary.json holds the table's numbers.
//
// The references are other projects' launchers (scripts/references.ts): --real-placement and
// --real-ironic, or ALLOT_REAL_PLACEMENT and ALLOT_REAL_IRONIC, name them.
//
//   ALLOT_REAL_PLACEMENT=../shared/conformance/placement/real_placement.py \
//   ALLOT_REAL_IRONIC=../shared/reference/ironic/real_ironic.py npm run bench
//   npm run bench -- --only baremetal,ids --quick
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { referenceFile } from '../scripts/references.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BENCHES = ['placement', 'candidates', 'baremetal', 'ids', 'reservations', 'hot-pools'] as const;
type Bench = (typeof BENCHES)[number];

const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: BENCHES.join(',') },
    'out-dir': { type: 'string', default: path.join(root, 'bench/results', `${new Date().toISOString().slice(0, 10)}-all`) },
    /** smaller sizes and shorter steps: minutes instead of an hour, for trying the bench itself */
    quick: { type: 'boolean', default: false },
    /** only print the table from the JSON already in --out-dir */
    'table-only': { type: 'boolean', default: false },
    'real-placement': { type: 'string' },
    'real-ironic': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(`usage: npm run bench -- [--only ${BENCHES.join(',')}] [--out-dir DIR] [--quick] [--table-only] [--real-placement PATH] [--real-ironic PATH]`);
  process.exit(0);
}
const outDir = args['out-dir']!;
const only = args.only!.split(',') as Bench[];
const quick = args.quick!;
mkdirSync(outDir, { recursive: true });
const file = (bench: Bench) => path.join(outDir, `${bench}.json`);
// asked for before anything runs, not an hour into the run
const realPlacement = only.includes('placement') && !args['table-only'] ? referenceFile('real-placement', 'npm run bench', args['real-placement']) : '';
const realIronic = only.includes('baremetal') && !args['table-only'] ? referenceFile('real-ironic', 'npm run bench', args['real-ironic']) : '';

/** Each bench's command; its JSON goes to file(bench). */
const COMMANDS: Record<Bench, { args: string[]; stdoutIsJson?: boolean }> = {
  placement: {
    args: [
      'bench/placement.ts',
      '--vs-real',
      '--real-placement',
      realPlacement,
      '--providers',
      '1000',
      '--concurrency',
      quick ? '1,8' : '1,8,32',
      '--step-seconds',
      quick ? '4' : '8',
      '--out',
      file('placement'),
    ],
  },
  candidates: {
    args: ['bench/candidates.ts', '--sizes', quick ? '10000,100000' : '100000,1000000', '--requests', quick ? '20' : '100', '--unlimited-requests', '3'],
    stdoutIsJson: true,
  },
  baremetal: {
    args: [
      'bench/baremetal.ts',
      '--vs-real',
      '--real-ironic',
      realIronic,
      '--concurrency',
      '1,16',
      '--allocations',
      quick ? '200' : '2000',
      '--pool-sizes',
      quick ? '10,1000' : '10,10000',
      '--out',
      file('baremetal'),
    ],
  },
  ids: {
    args: ['bench/ids.ts', '--served', ...(quick ? ['--fill', '100000'] : []), '--out', file('ids')],
  },
  reservations: {
    args: ['bench/reservations.ts', '--concurrency', '1,16', '--reservations', quick ? '200' : '1000', '--out', file('reservations')],
  },
  'hot-pools': {
    args: ['bench/hot-pools.ts', ...(quick ? ['--strategies', 'lowest,random'] : []), '--out', file('hot-pools')],
  },
};

async function run(bench: Bench): Promise<void> {
  const { args: benchArgs, stdoutIsJson } = COMMANDS[bench];
  const started = Date.now();
  process.stderr.write(`# ${bench}: tsx ${benchArgs.join(' ')}\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', ...benchArgs], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${bench} bench exited with ${code}`);
  if (stdoutIsJson) writeFileSync(file(bench), stdout);
  process.stderr.write(`# ${bench}: done in ${Math.round((Date.now() - started) / 1000)} s\n`);
}

if (!args['table-only']) {
  // the JSON bench builds its own; the others run from the sources
  await build();
  for (const bench of BENCHES) if (only.includes(bench)) await run(bench);
}

async function build(): Promise<void> {
  const child = spawn('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error('npm run build failed');
}

// ---- the table ------------------------------------------------------------------------------

/** each bench's own JSON document, read loosely */
type Json = any;
const read = (bench: Bench): Json => (existsSync(file(bench)) ? JSON.parse(readFileSync(file(bench), 'utf8')) : null);
const n = (v: unknown, digits = 0) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–');
const ratio = (a: unknown, b: unknown) => (typeof a === 'number' && typeof b === 'number' && b > 0 ? `${(a / b).toFixed(2)}×` : '–');
const maxOf = (rows: Json[] | undefined, key: string) => (rows?.length ? Math.max(...rows.map((r) => r[key] ?? 0)) : undefined);

const rows: Array<[string, string, string, string]> = [];
const summary: Record<string, unknown> = {};
const row = (what: string, allot: string, reference: string, note = '') => rows.push([what, allot, reference, note]);

const placement = read('placement');
const claimRate = (target: string) => maxOf(placement?.targets?.[target]?.claim_write_path, 'ops_per_s');
{
  const pgbench = placement?.baselines_before?.postgres?.results as Json[] | undefined;
  const sqliteFull = (placement?.baselines_before?.sqlite?.results as Json[] | undefined)?.find((r) => r.synchronous === 'FULL');
  const pgLimit = maxOf(pgbench, 'commits_per_s');
  summary.commitLimits = { pgbench: pgLimit, sqliteFull: sqliteFull?.commits_per_s };
  row('raw commit limit (pgbench -N, best level / SQLite WAL FULL loop)', `${n(pgLimit)} / ${n(sqliteFull?.commits_per_s)} commits/s`, '', 'same run');
  for (const [label, step, unit] of [
    ['Placement claims as Nova makes them (GET candidates + PUT)', 'scheduler_loop', 'claims/s'],
    ['Placement claims (PUT only)', 'claim_write_path', 'claims/s'],
    ['Placement moves (swap consumers)', 'migration_swap', 'swaps/s'],
    ['Placement deletes', 'deletes', 'deletes/s'],
  ] as const) {
    const rate = (target: string) => maxOf(placement?.targets?.[target]?.[step], 'ops_per_s');
    const real = rate('real-placement');
    for (const db of ['sqlite', 'postgres'] as const) {
      const mine = rate(`allot-${db}`);
      summary[`placement ${step} ${db}`] = { allot: mine, real };
      // the issue asks PostgreSQL within 2× of SQLite, and claims within 3× of the raw commit limit
      const vsSqlite = db === 'postgres' ? `; ${ratio(mine, rate('allot-sqlite'))} of SQLite` : '';
      const limit = db === 'postgres' && step === 'claim_write_path' ? `; ${ratio(mine, pgLimit)} of pgbench` : '';
      row(`${label}, ${db} (best concurrency)`, `${n(mine)} ${unit}`, `real Placement ${n(real, 1)}`, `${ratio(mine, real)} real${vsSqlite}${limit}`);
    }
  }
}

const baremetal = read('baremetal');
{
  const result = (target: string, db: string, backend: string, concurrency: number) =>
    (baremetal?.results as Json[] | undefined)?.find((r) => r.target === target && r.db === db && r.backend === backend && r.concurrency === concurrency);
  const real16 = result('real-ironic', 'sqlite', 'ironic', 16);
  const real1 = result('real-ironic', 'sqlite', 'ironic', 1);
  for (const db of ['sqlite', 'postgres'] as const) {
    for (const backend of ['database', 'placement'] as const) {
      const at16 = result('allot', db, backend, 16);
      const at1 = result('allot', db, backend, 1);
      summary[`baremetal ${db} ${backend}`] = { at16: at16?.allocationsPerSecond, p50At1: at1?.latencyMs?.p50 };
      row(
        `Ironic allocation POST → active, 16 clients, ${db}, ${backend} backend`,
        `${n(at16?.allocationsPerSecond)}/s; p50 at 1 client ${n(at1?.latencyMs?.p50, 1)} ms`,
        db === 'sqlite' && backend === 'database' ? `real Ironic ${n(real16?.allocationsPerSecond, 1)}/s; p50 ${n(real1?.latencyMs?.p50)} ms` : '',
        `${ratio(at16?.allocationsPerSecond, claimRate(`allot-${db}`))} of allot's claim rate`,
      );
    }
  }
  for (const db of ['sqlite', 'postgres'] as const) {
    const pools = (baremetal?.pools as Json[] | undefined)?.filter((p) => p.db === db && p.backend === 'database') ?? [];
    row(
      `one allocation, 1 client, among N matching nodes (${db})`,
      pools.map((p) => `N=${p.poolSize}: ${n(p.latencyMs?.p50, 1)} ms`).join(', ') || '–',
      '',
      'p50',
    );
  }
}

const reservations = read('reservations');
{
  const result = (db: string, backend: string, concurrency: number) =>
    (reservations?.results as Json[] | undefined)?.find((r) => r.db === db && r.backend === backend && r.concurrency === concurrency);
  const bareMetal = (db: string, backend: string) =>
    (baremetal?.results as Json[] | undefined)?.find((r) => r.target === 'allot' && r.db === db && r.backend === backend && r.concurrency === 16);
  for (const db of ['sqlite', 'postgres'] as const) {
    for (const backend of ['database', 'placement'] as const) {
      const at16 = result(db, backend, 16);
      const at1 = result(db, backend, 1);
      summary[`reservations ${db} ${backend}`] = { at16: at16?.reservationsPerSecond, p50At1: at1?.latencyMs?.p50 };
      // the issue's target: at least half the bare-metal allocation rate of the same run
      row(
        `reservation (node + capacity + 2 identifiers), 16 clients, ${db}, ${backend} backend`,
        `${n(at16?.reservationsPerSecond)}/s; p50 at 1 client ${n(at1?.latencyMs?.p50, 1)} ms`,
        '',
        `${ratio(at16?.reservationsPerSecond, bareMetal(db, backend)?.allocationsPerSecond)} of the bare-metal allocation rate`,
      );
    }
  }
}

const candidates = read('candidates');
for (const r of (candidates?.results as Json[] | undefined) ?? []) {
  summary[`candidates ${r.dialect} ${r.providers}`] = {
    p50: r.queries?.limit50?.ms?.p50,
    rssMb: r.serverRssMb,
    startMs: r.startMs,
    firstRequestMs: r.firstRequestMs,
  };
  row(
    `allocation candidates limit=50, ${r.providers} providers, ${r.dialect}`,
    `p50 ${n(r.queries?.limit50?.ms?.p50, 1)} ms`,
    '',
    `RSS ${n(r.serverRssMb)} MB; start ${n(r.startMs / 1000, 1)} s + first request (index load) ${n(r.firstRequestMs / 1000, 1)} s`,
  );
}

const ids = read('ids');
// bench/ids.ts --served prints its own table rows (`table`): carried over as they are
for (const r of (ids?.table as Json[] | undefined) ?? []) row(String(r.what), String(r.allot), String(r.reference ?? ''), String(r.note ?? ''));
if (ids) summary.ids = ids.table ?? null;

const hotPools = read('hot-pools');
for (const r of (hotPools?.results as Json[] | undefined) ?? []) {
  summary[`hot pool ${r.db} ${r.size} ${r.strategy}`] = { perSecond: r.allocationsPerSecond, p50: r.latencyMs?.p50, p99: r.latencyMs?.p99, exact: r.exact };
  row(
    `hot pool of ${r.size}, ${r.strategy}, ${r.clients} clients over ${r.processes} process(es), ${r.db}`,
    `${n(r.allocationsPerSecond)}/s; p50 ${n(r.latencyMs?.p50, 1)} ms, p99 ${n(r.latencyMs?.p99, 1)} ms`,
    '',
    r.exact ? 'exhaustion exact' : 'NOT EXACT: duplicates or early exhaustion',
  );
}

const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), 4));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
const text = [line(['path', 'allot', 'reference, same run', 'compared']), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(r))].join('\n');
writeFileSync(path.join(outDir, 'table.txt'), `${text}\n`);
writeFileSync(path.join(outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
console.log(text);
