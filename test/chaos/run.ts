// `npm run test:chaos`: allot under partitions, pauses, crashes and clock skew, judged on its history.
//
//   npm run test:chaos -- [--seed N] [--minutes M] [--replay RUN.json] [--allot-dist DIR] [--keep] [--patroni]
//   npm run test:chaos -- --check HISTORY.json      (check a saved history again; runs nothing)
//
// Three `allot serve` processes (from dist/) and one PostgreSQL (with --patroni: a Patroni pair with
// etcd and an HAProxy beside each client, patroni.ts; failovers join the faults), each in a network namespace of its
// own joined by a bridge in another (network.ts), take the workload of workload.ts from a fifth
// namespace — the clients, and this process with them — for M minutes while a seeded schedule of
// faults (schedule.ts) hits them; then every fault is healed, bare-metal allocations are left to
// finish, the final state is read, and the checker (checker.ts) judges the history. Exit 0 when it
// found nothing, 1 when it did, 3 when it found nothing but a fault could not be injected (a run
// without its faults proves nothing: a missing kernel module, a tool that refused); the run, the fault schedule and the verdict are saved, with the
// history and every log when anything was found (or with --keep): `--replay` that run.json runs the
// same schedule again.
//
// Needs root (namespaces, iptables, tc, running PostgreSQL as `postgres`), iproute2, iptables,
// libfaketime, and a built dist/. Everything it makes — namespaces, links, addresses, rules, queues,
// processes — lives inside its own namespaces and is removed at the end, on failure and on Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { installAllocationChanges, readAllocationChanges, readNodeLockChanges } from './allocation-changes.js';
import { type Verdict, check } from './checker.js';
import type { History, Snapshot } from './history.js';
import { ChaosNetwork, destroyNamespaces } from './network.js';
import { ChaosPatroni, missingPatroniPackages } from './patroni.js';
import { ChaosAllot, ChaosPostgres, FAKETIME_LIB } from './processes.js';
import { type Fault, type FaultKind, PATRONI_FAULT_KINDS, Rng, makeSchedule } from './schedule.js';
import { readReservations, takeSnapshot } from './snapshots.js';
import { LOCK_CLASS, POOL_SIZE, PROVIDERS, PROVIDER_VCPU, makeFixtures } from './fixtures.js';
import { Workload } from './workload.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const PROCESSES = 3;
const ALLOTS = Array.from({ length: PROCESSES }, (_, i) => `a${i}`);
/** the database's machines: one PostgreSQL, or (--patroni) two Patroni members and etcd */
const databaseMachines = (patroni: boolean) => (patroni ? ['pg1', 'pg2', 'etcd'] : ['pg']);
const machines = (patroni: boolean) => [...databaseMachines(patroni), ...ALLOTS, 'client'];
/** allot's settings: short bounds, so that each fault plays out in seconds */
const TIMING = {
  connectTimeoutS: 2,
  statementTimeoutS: 3,
  requestDeadlineS: 8,
  heartbeatIntervalS: 1,
  heartbeatTimeoutS: 6,
  takeoverIntervalS: 2,
};
/** the client gives up this long after a statement's own bound (statement timeout + allot's 2 s grace) */
const STATEMENT_BOUND_S = TIMING.statementTimeoutS + 2;
/** --allocation-delay of each process: one finishes allocations in their request, the others a moment later in their worker */
const ALLOCATION_DELAYS_S = [0, 0.5, 1];
/**
 * --transition-time of each process: one settles power changes at once, the others hold the node's
 * lock for seconds (pause-node-lock pauses them holding one, so that another conductor takes it over)
 */
const TRANSITION_TIMES_S = [0.05, 2, 3];
const SNAPSHOT_EVERY_MS = 1_500;
/** once the faults are healed, how long bare-metal allocations get to finish */
const SETTLE_MS = 180_000;
/** pause-allocating: how long it waits for its target to hold an allocation before pausing it anyway */
const HOLD_WAIT_MS = 5_000;

interface Options {
  seed: number;
  minutes: number;
  replay: string | null;
  check: string | null;
  allotDist: string;
  keep: boolean;
  inside: string | null;
  out: string;
  patroni: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    seed: Math.floor(Math.random() * 2 ** 31),
    minutes: 5,
    replay: null,
    check: null,
    allotDist: path.join(root, 'dist'),
    keep: false,
    inside: null,
    out: path.join(os.tmpdir(), 'allot-chaos-results'),
    patroni: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--seed') o.seed = Number(value());
    else if (a === '--minutes') o.minutes = Number(value());
    else if (a === '--replay') o.replay = path.resolve(value());
    else if (a === '--check') o.check = path.resolve(value());
    else if (a === '--allot-dist') o.allotDist = path.resolve(value());
    else if (a === '--out') o.out = path.resolve(value());
    else if (a === '--keep') o.keep = true;
    else if (a === '--patroni') o.patroni = true;
    else if (a === '--inside') o.inside = value();
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.seed) || o.seed < 0) throw new Error('--seed must be a non-negative integer');
  if (!(o.minutes > 0 && o.minutes <= 24 * 60)) throw new Error('--minutes must be above 0');
  return o;
}

/** What a run is, saved with its verdict: enough to run it again (--replay). */
interface RunRecord {
  seed: number;
  seconds: number;
  schedule: Fault[];
  timing: typeof TIMING;
  /** the database was a Patroni pair (--patroni) */
  patroni?: boolean;
  slowLink?: string;
  /** what was done, when (ms after the load started) */
  faultLog?: Array<
    Fault & {
      injectedAt: number;
      healedAt: number | null;
      error?: string;
      notInjected?: boolean;
      /**
       * pause-allocating: the allocation the paused process's worker held; pause-node-lock: the node
       * whose lock it held; and whether another conductor took it over meanwhile
       */
      held?: string | null;
      takenOver?: boolean;
      /** failover: what happened */
      outcome?: string;
    }
  >;
  startedAt?: string;
}

// ---- the outer process: namespaces in, run the inner one inside them, namespaces out ------------

function outer(options: Options): Promise<number> {
  const missing = [
    ['ip', 'iproute2'],
    ['iptables', 'iptables'],
    ['tc', 'iproute2'],
    ['setpriv', 'util-linux'],
  ].filter(([bin]) => spawnSync('which', [bin!]).status !== 0);
  if (process.getuid?.() !== 0) throw new Error('npm run test:chaos needs root: it makes network namespaces and runs PostgreSQL as postgres');
  if (missing.length) throw new Error(`missing programs: ${missing.map(([b, p]) => `${b} (${p})`).join(', ')}`);
  if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime`);
  if (!existsSync(path.join(options.allotDist, 'cli/main.js'))) throw new Error(`${options.allotDist}/cli/main.js is missing: npm run build`);
  const patroni = options.patroni || (options.replay !== null && (JSON.parse(readFileSync(options.replay, 'utf8')) as RunRecord).patroni === true);
  const missingHa = patroni ? missingPatroniPackages() : [];
  if (missingHa.length) throw new Error(`--patroni needs the Debian packages ${missingHa.join(', ')}`);

  const prefix = `allot-chaos-${process.pid}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-chaos-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as postgres below it
  let cleaned = false;
  const cleanUp = () => {
    if (cleaned) return;
    cleaned = true;
    const { killed, removed } = destroyNamespaces(prefix);
    rmSync(dir, { recursive: true, force: true });
    console.log(`# cleaned up: ${removed.length} namespaces removed, ${killed} processes left in them killed`);
  };
  process.once('exit', cleanUp);

  return (async () => {
    const network = new ChaosNetwork(prefix, machines(patroni));
    await network.create();
    const client = network.machine('client');
    const args = [...process.argv.slice(2), ...(patroni && !options.patroni ? ['--patroni'] : []), '--inside', dir];
    const inner = spawn('ip', ['netns', 'exec', client.ns, process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
      stdio: 'inherit',
      cwd: root,
    });
    let interrupted = false;
    const onSignal = (sig: NodeJS.Signals) => {
      interrupted = true;
      inner.kill(sig);
      // the inner run stops its processes; whatever it cannot, the namespaces' removal ends
      setTimeout(() => inner.kill('SIGKILL'), 30_000).unref();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const code = await new Promise<number>((resolve) => inner.on('exit', (c, sig) => resolve(c ?? (sig ? 128 + (os.constants.signals[sig] ?? 0) : 1))));
    cleanUp();
    return interrupted ? 130 : code;
  })();
}

// ---- the inner process: everything else, from the clients' namespace -----------------------------

async function inner(options: Options, dir: string): Promise<number> {
  const replayed: RunRecord | null = options.replay ? JSON.parse(readFileSync(options.replay, 'utf8')) : null;
  const patroni = replayed?.patroni ?? options.patroni;
  const network = new ChaosNetwork(`allot-chaos-${process.ppid}`, machines(patroni));
  const seed = replayed?.seed ?? options.seed;
  const seconds = replayed?.seconds ?? Math.round(options.minutes * 60);
  const rng = new Rng(seed);
  const schedule =
    replayed?.schedule ??
    makeSchedule(rng.fork(1), {
      seconds,
      processes: PROCESSES,
      heartbeatTimeoutS: TIMING.heartbeatTimeoutS,
      statementBoundS: STATEMENT_BOUND_S,
      delayedWorkers: ALLOCATION_DELAYS_S.flatMap((delay, i) => (delay > 0 ? [i] : [])),
      lockingWorkers: TRANSITION_TIMES_S.flatMap((time, i) => (time >= 1 ? [i] : [])),
      holdWaitS: HOLD_WAIT_MS / 1000,
      takeOverS: TIMING.heartbeatTimeoutS + TIMING.heartbeatIntervalS + TIMING.takeoverIntervalS,
      ...(patroni ? { kinds: PATRONI_FAULT_KINDS } : {}),
    });
  const record: RunRecord = {
    seed,
    seconds,
    schedule,
    timing: TIMING,
    ...(patroni ? { patroni } : {}),
    slowLink: network.slowKind,
    faultLog: [],
    startedAt: new Date().toISOString(),
  };
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const log = (line: string) => console.log(`# ${(now() / 1000).toFixed(1).padStart(7)} s  ${line}`);
  log(
    `seed ${seed}, ${seconds} s of load, ${schedule.length} faults scheduled${replayed ? ` (replaying ${options.replay})` : ''}; slow links by ${network.slowKind}`,
  );

  const postgres: ChaosDatabase = patroni
    ? new ChaosPatroni(
        path.join(dir, 'pg'),
        [network.machine('pg1'), network.machine('pg2')],
        network.machine('etcd'),
        [...ALLOTS, 'client'].map((m) => network.machine(m)),
      )
    : new ChaosPostgres(network.machine('pg'), path.join(dir, 'pg'));
  const allots: ChaosAllot[] = [];
  let aborted = false;
  const stopEverything = async () => {
    await Promise.all(allots.map((a) => a.stop(10_000).catch(() => {})));
    await postgres.stop().catch(() => {});
  };
  process.on('SIGINT', () => {
    aborted = true;
    log('interrupted: stopping');
    void stopEverything().then(() => process.exit(130));
  });

  // PostgreSQL and allot
  mkdirSync(postgres.dir, { recursive: true });
  await postgres.init();
  await postgres.start();
  await withClient(postgres.url('postgres'), (c) => c.query('create database allot'));
  for (let i = 0; i < PROCESSES; i++) {
    const machine = network.machine(`a${i}`);
    const args = [
      '--db',
      postgres.url('allot'),
      '--host',
      machine.ip,
      '--port',
      '8778',
      '--insecure-noauth',
      '--allowed-hosts',
      machine.ip,
      '--conductor-id',
      `chaos-${i}`,
      '--log-format',
      'json',
      '--db-connect-timeout',
      String(TIMING.connectTimeoutS),
      '--db-statement-timeout',
      String(TIMING.statementTimeoutS),
      '--db-idle-in-transaction-timeout',
      '5',
      '--db-keepalive',
      '1',
      '--request-deadline',
      String(TIMING.requestDeadlineS),
      '--health-timeout',
      '1',
      '--pool-size',
      '6',
      '--heartbeat-interval',
      String(TIMING.heartbeatIntervalS),
      '--heartbeat-timeout',
      String(TIMING.heartbeatTimeoutS),
      '--takeover-interval',
      String(TIMING.takeoverIntervalS),
      '--transition-time',
      String(TRANSITION_TIMES_S[i]),
      '--allocation-delay',
      String(ALLOCATION_DELAYS_S[i]),
      '--ids-worker-interval-ms',
      '500',
    ];
    const allot = new ChaosAllot(i, machine, dir, options.allotDist, args);
    allots.push(allot);
    await allot.start(); // one at a time: the first migrates
  }
  log(`${postgres.describe}, allot at ${allots.map((a) => a.machine.ip).join(', ')}`);
  // which process writes each change of a bare-metal allocation (the fencing rule's evidence)
  await installAllocationChanges(postgres.url('allot'));

  // fixtures
  const fixtures = await makeFixtures(allots[0]!.url);
  const workload = new Workload(() => allots.map((a) => a.url), fixtures, now);
  const setupRng = rng.fork(2);
  for (const consumer of fixtures.sharedConsumers) {
    const rp = Object.keys(fixtures.providers)[0]!;
    const r = await workload.call(
      setupRng,
      { client: 'setup', api: 'placement', kind: 'claim', key: consumer, write: { from: 0, to: { version: 1, value: { rp, vcpu: 1 } } } },
      'PUT',
      `/allocations/${consumer}`,
      { allocations: { [rp]: { resources: { VCPU: 1 } } }, project_id: 'chaos', user_id: 'chaos', consumer_generation: null, consumer_type: 'INSTANCE' },
    );
    if (r.outcome !== 'ok') throw new Error(`the shared consumer could not be claimed: ${r.op.told}`);
  }

  // snapshots during the run
  const snapshots: Snapshot[] = [];
  const scope = {
    providers: Object.keys(fixtures.providers),
    pool: fixtures.pool,
    resourceClass: fixtures.resourceClass,
    lockClass: LOCK_CLASS,
    reservationSpec: fixtures.reservation.name,
  };
  let snapshotting = true;
  const snapshotter = (async () => {
    while (snapshotting) {
      const s = await takeSnapshot(postgres.url('allot'), scope, now).catch(() => null);
      if (s) snapshots.push(s);
      await sleep(SNAPSHOT_EVERY_MS);
    }
  })();

  // load and faults
  const loadStart = now();
  workload.start(rng.fork(3));
  log(`load started: ${fixtures.nodes.length} nodes, ${PROVIDERS} providers of ${PROVIDER_VCPU} VCPU, a pool of ${POOL_SIZE} values`);
  const injections: Array<Promise<void>> = [];
  // a target recovering from its last fault (a restart under load can take longer than planned) takes the next one after
  const recovered = new Map<number, Promise<void>>();
  for (const fault of schedule) {
    const wait = loadStart + fault.at * 1000 - now();
    if (wait > 0) await sleep(wait);
    if (aborted) break;
    const injected = (recovered.get(fault.target) ?? Promise.resolve()).then(() => inject(fault, { network, postgres, allots, now, log, record }));
    recovered.set(fault.target, injected);
    injections.push(injected);
  }
  const remaining = loadStart + seconds * 1000 - now();
  if (remaining > 0) await sleep(remaining);
  await Promise.all(injections);
  await healEverything(network, postgres, allots, log);
  log('load stopping');
  await workload.stop();

  // settle: every process ready, every bare-metal allocation finished
  for (const a of allots) await a.start(60_000).catch((err) => log(`allot ${a.index} not ready again: ${(err as Error).message}`));
  const settleBy = Date.now() + SETTLE_MS;
  for (;;) {
    const s = await takeSnapshot(postgres.url('allot'), scope, now).catch(() => null);
    if (s && !Object.values(s.baremetal.allocations).some((a) => a.state === 'allocating') && !Object.values(s.baremetal.nodes).some((n) => n.reservation))
      break;
    if (Date.now() > settleBy) {
      log(`bare-metal allocations still allocating, or node locks still held, ${SETTLE_MS / 1000} s after the faults healed`);
      break;
    }
    await sleep(1_000);
  }
  snapshotting = false;
  await snapshotter;
  const final = await takeSnapshot(postgres.url('allot'), scope, now, 30_000);
  const conductors = Object.fromEntries(allots.map((a, i) => [a.machine.ip, `chaos-${i}`]));
  const history: History = {
    ops: workload.ops,
    snapshots,
    final,
    allocationChanges: await readAllocationChanges(postgres.url('allot'), fixtures.resourceClass, conductors),
    nodeLockChanges: await readNodeLockChanges(postgres.url('allot'), [...fixtures.nodes, ...fixtures.lockNodes], conductors),
    finalThroughApis: await readReservations(
      allots[0]!.url,
      fixtures,
      workload.ops.filter((op) => op.reservation).map((op) => op.key),
    ),
    fixtures: {
      providers: fixtures.providers,
      nodes: fixtures.nodes,
      poolSize: fixtures.poolSize,
      sharedConsumers: fixtures.sharedConsumers,
      reservation: fixtures.reservation,
    },
  };
  // what the conductors say they took over from each other (the zombies' work)
  const takeovers = allots.map((a) => {
    let allocations = 0;
    let nodes = 0;
    for (const line of readFileSync(a.log, 'utf8').split('\n')) {
      if (!line.includes('took over work of dead conductors')) continue;
      const entry = JSON.parse(line) as { allocations: number; nodes: number };
      allocations += entry.allocations;
      nodes += entry.nodes;
    }
    return { allocations, nodes };
  });
  const exits = allots.map(
    (a, i) => `allot ${a.index}: started ${a.starts} times, took over ${takeovers[i]!.allocations} allocations and ${takeovers[i]!.nodes} node locks`,
  );
  await stopEverything();

  const verdict = check(history);
  report(verdict, record, exits);
  const notInjected = record.faultLog!.filter((f) => f.notInjected).length;
  if (notInjected) console.log(`# FAULTS NOT INJECTED: ${notInjected} of ${record.faultLog!.length}: this run does not show what its schedule claims`);
  const failed = verdict.anomalies.length > 0 || notInjected > 0;
  const out = path.join(options.out, `${new Date().toISOString().replace(/[:.]/g, '-')}-seed${seed}${failed ? '-FAILED' : ''}`);
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'run.json'), JSON.stringify(record, null, 1));
  writeFileSync(path.join(out, 'verdict.json'), JSON.stringify(verdict, null, 1));
  if (failed || options.keep) {
    writeFileSync(path.join(out, 'history.json'), JSON.stringify(history));
    for (const f of [...allots.map((a) => a.log), ...postgres.logs]) if (existsSync(f)) cpSync(f, path.join(out, path.basename(f)));
  }
  console.log(
    `# saved in ${out}${failed || options.keep ? ' (with the history and the logs)' : ''}; run it again: npm run test:chaos -- --replay ${path.join(out, 'run.json')}`,
  );
  return verdict.anomalies.length > 0 ? 1 : notInjected > 0 ? 3 : 0;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The database of a run: one PostgreSQL, or a Patroni pair (its faults act on the primary). */
type ChaosDatabase = ChaosPostgres | ChaosPatroni;

interface Cast {
  network: ChaosNetwork;
  postgres: ChaosDatabase;
  allots: ChaosAllot[];
  now: () => number;
  log: (line: string) => void;
  record: RunRecord;
}

/** Inject one fault, wait its duration, heal it. */
async function inject(fault: Fault, cast: Cast): Promise<void> {
  const { network, postgres, allots, now, log } = cast;
  const entry = { ...fault, injectedAt: now(), healedAt: null as number | null } as NonNullable<RunRecord['faultLog']>[number];
  cast.record.faultLog!.push(entry);
  const a = fault.target >= 0 ? allots[fault.target]! : null;
  const name = `a${fault.target}`;
  // a link to the database is a link to each of its machines
  const toDatabase = async (act: (machine: string) => Promise<void>) => {
    for (const m of postgres instanceof ChaosPatroni ? ['pg1', 'pg2'] : ['pg']) await act(m);
  };
  const actions: Record<FaultKind, [() => Promise<void> | void, () => Promise<void> | void]> = {
    partition: [() => toDatabase((m) => network.partition(name, m)), () => toDatabase((m) => network.heal(name, m))],
    'client-partition': [() => network.partition('client', name), () => network.heal('client', name)],
    loss: [() => toDatabase((m) => network.loss(name, m, fault.amount!)), () => toDatabase((m) => network.heal(name, m))],
    slow: [() => network.slow(name, fault.amount!), () => network.unslow(name)],
    'pause-allot': [() => a!.pause(true), () => a!.pause(false)],
    'pause-allocating': [
      async () => {
        entry.held = await pauseHolding(
          a!,
          (ms) => heldAllocation(postgres, fault.target, ms),
          async (uuid) =>
            (
              await queryAllot(postgres, "select 1 from baremetal_allocations where uuid = $1 and state = 'allocating' and conductor_affinity = $2", [
                uuid,
                `chaos-${fault.target}`,
              ])
            ).length > 0,
        );
      },
      () => a!.pause(false),
    ],
    'pause-node-lock': [
      async () => {
        entry.held = await pauseHolding(
          a!,
          (ms) => heldNodeLock(postgres, fault.target, ms),
          async (uuid) =>
            (await queryAllot(postgres, 'select 1 from baremetal_nodes where uuid = $1 and reservation = $2', [uuid, `chaos-${fault.target}`])).length > 0,
        );
      },
      () => a!.pause(false),
    ],
    'pause-postgres': [() => postgres.freeze(true), () => postgres.freeze(false)],
    'kill-allot': [() => a!.kill(), () => a!.start()],
    'kill-postgres': [() => postgres.kill(), () => postgres.start()],
    skew: [() => a!.skew(fault.amount!), () => a!.skew(0)],
    failover: [
      async () => {
        if (!(postgres instanceof ChaosPatroni)) throw new Error('a failover needs --patroni');
        entry.outcome = await postgres.failover(fault.amount === 1 ? 'crash' : 'switchover');
      },
      () => postgres.start(),
    ],
  };
  const [start, heal] = actions[fault.kind];
  const what = `${fault.kind} ${fault.target >= 0 ? `allot ${fault.target}` : 'PostgreSQL'}${fault.amount !== undefined ? ` (${fault.amount})` : ''} for ${fault.duration} s`;
  let injected = false;
  try {
    await start();
    injected = true;
    if (fault.kind === 'pause-allocating' || fault.kind === 'pause-node-lock') {
      const lock = fault.kind === 'pause-node-lock';
      entry.takenOver = entry.held ? await takenOver(postgres, fault.target, entry.held, fault.duration * 1000, lock) : false;
      log(
        `${what}: ${entry.held ? `held ${lock ? "node's lock" : 'allocation'} ${entry.held}, ${entry.takenOver ? 'taken over' : 'NOT taken over'}` : `held no ${lock ? 'node lock' : 'allocation'}`}`,
      );
    } else {
      log(`${what}${entry.outcome ? `: ${entry.outcome}` : ''}`);
      await sleep(fault.duration * 1000);
    }
    await heal();
    entry.healedAt = now();
  } catch (err) {
    entry.error = (err as Error).message.slice(0, 500);
    if (!injected) entry.notInjected = true;
    log(`${what}: ${entry.error}`);
  }
}

/** Bounded reads of the allot database by the harness (PostgreSQL may be frozen meanwhile). */
async function queryAllot(postgres: ChaosDatabase, sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: postgres.url('allot'), connectionTimeoutMillis: 1_000, query_timeout: 1_000 });
  // a connection PostgreSQL ends under it (a crash, a failover) is an 'error' event: unheard, it ends the run
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query(sql, params)).rows;
  } catch {
    return [];
  } finally {
    await client.end().catch(() => {});
  }
}

/** How long a paused process's statements already sent get to land before what it holds is looked at again. */
const IN_FLIGHT_MS = 250;

/**
 * Pauses allot process `a` (SIGSTOP) holding what `find` finds it holding (waiting at most
 * HOLD_WAIT_MS for it): what it holds once paused, or null when it holds nothing (paused all the
 * same). Work found a moment before the SIGSTOP may have been finished in that moment (a 20-minute
 * run paused a process whose allocation ended in error as it stopped: nothing was left to take
 * over), so it is looked at again once the process is stopped; gone, the process resumes and the
 * search goes on.
 */
async function pauseHolding(
  a: ChaosAllot,
  find: (ms: number) => Promise<string | null>,
  stillHeld: (held: string) => Promise<boolean>,
): Promise<string | null> {
  const until = Date.now() + HOLD_WAIT_MS;
  for (;;) {
    const held = await find(Math.max(0, until - Date.now()));
    a.pause(true);
    if (held === null) return null;
    await sleep(IN_FLIGHT_MS);
    if (await stillHeld(held)) return held;
    if (Date.now() >= until) return null;
    a.pause(false);
  }
}

/** Waits (at most `ms`) until allot process `target`'s worker holds an `allocating` allocation: its uuid, or null. */
async function heldAllocation(postgres: ChaosDatabase, target: number, ms: number): Promise<string | null> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(50)) {
    const rows = await queryAllot(
      postgres,
      "select uuid from baremetal_allocations where state = 'allocating' and conductor_affinity = $1 order by id limit 1",
      [`chaos-${target}`],
    );
    if (rows[0]) return String(rows[0].uuid);
  }
  return null;
}

/** Waits (at most `ms`) until allot process `target` holds a node's lock: the node's uuid, or null. */
async function heldNodeLock(postgres: ChaosDatabase, target: number, ms: number): Promise<string | null> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(50)) {
    const rows = await queryAllot(postgres, 'select uuid from baremetal_nodes where reservation = $1 order by id limit 1', [`chaos-${target}`]);
    if (rows[0]) return String(rows[0].uuid);
  }
  return null;
}

/**
 * Waits (at most `ms`) until another conductor has taken allocation `uuid` (`lock`: node `uuid`'s
 * lock) over from allot process `target`, as the change log (allocation-changes.ts) records the
 * take-over's compare-and-set. (Polling the row missed take-overs: a conductor with a short
 * --transition-time takes a lock over and lets it go within 100 ms.)
 */
async function takenOver(postgres: ChaosDatabase, target: number, uuid: string, ms: number, lock = false): Promise<boolean> {
  const sql = lock
    ? 'select 1 from chaos.node_lock_changes where uuid = $1 and old_reservation = $2 and new_reservation is not null and new_reservation <> $2'
    : 'select 1 from chaos.allocation_changes where uuid = $1 and old_conductor = $2 and new_conductor is not null and new_conductor <> $2';
  // since the pause (PostgreSQL runs on this host's clock; a take-over comes a heartbeat timeout later)
  const since = new Date().toISOString();
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) {
    if ((await queryAllot(postgres, `${sql} and at >= $3 limit 1`, [uuid, `chaos-${target}`, since])).length > 0) return true;
  }
  return false;
}

async function healEverything(network: ChaosNetwork, postgres: ChaosDatabase, allots: ChaosAllot[], log: (line: string) => void): Promise<void> {
  await network.healAll();
  await postgres.recover();
  for (const a of allots) {
    a.pause(false);
    a.skew(0);
  }
  log('every fault healed');
}

function report(verdict: Verdict, record: RunRecord, exits: string[]): void {
  const byKind = new Map<string, { n: number; seconds: number; errors: number; notInjected: number }>();
  for (const f of record.faultLog ?? []) {
    const k = byKind.get(f.kind) ?? { n: 0, seconds: 0, errors: 0, notInjected: 0 };
    k.n++;
    k.seconds += f.duration;
    if (f.notInjected) k.notInjected++;
    else if (f.error) k.errors++;
    byKind.set(f.kind, k);
  }
  console.log('\n# faults injected:');
  for (const [kind, k] of byKind)
    console.log(
      `#   ${kind.padEnd(17)} ${String(k.n).padStart(3)}  (${k.seconds.toFixed(0)} s in all${k.notInjected ? `, ${k.notInjected} NOT INJECTED` : ''}${k.errors ? `, ${k.errors} failed to heal` : ''})`,
    );
  const zombies = record.faultLog!.filter((f) => f.kind === 'pause-allocating');
  if (zombies.length)
    console.log(
      `#   (pause-allocating: ${zombies.filter((f) => f.held).length} paused holding an allocation, ${zombies.filter((f) => f.takenOver).length} resumed after its take-over)`,
    );
  const lockZombies = record.faultLog!.filter((f) => f.kind === 'pause-node-lock');
  if (lockZombies.length)
    console.log(
      `#   (pause-node-lock: ${lockZombies.filter((f) => f.held).length} paused holding a node's lock, ${lockZombies.filter((f) => f.takenOver).length} resumed after its take-over)`,
    );
  console.log(
    `# operations: ${verdict.counts.ops} (${Object.entries(verdict.counts.byOutcome)
      .map(([o, n]) => `${o} ${n}`)
      .join(', ')}), ${verdict.counts.snapshots} snapshots, ${verdict.counts.objects} objects`,
  );
  const fencing = verdict.counts.fencing;
  console.log(
    `# bare-metal allocation changes recorded: ${fencing.changes} (${fencing.takeOvers} take-overs, ${fencing.finishes} finishes or other conductor writes, each judged by its writer)`,
  );
  const locks = verdict.counts.nodeLocks;
  console.log(
    `# node lock changes recorded: ${locks.changes} (${locks.taken} locks taken, ${locks.takeOvers} take-overs, ${locks.lockedWrites} writes under a lock, each judged by its writer)`,
  );
  const reservations = verdict.counts.reservations;
  console.log(
    `# reservation (service instances across the engines): ${reservations.instances} instances judged all-or-nothing; ${Object.entries(reservations.ops)
      .map(
        ([kind, outcomes]) =>
          `${kind} ${Object.entries(outcomes)
            .map(([o, n]) => `${o} ${n}`)
            .join('/')}`,
      )
      .join(', ')}`,
  );
  // what each was told, in all and over the run: reservations answered (201/200) and refused (409 and its code) in every window
  const told = (byKind: Record<string, Record<string, number>>) =>
    Object.entries(byKind)
      .map(
        ([kind, answers]) =>
          `${kind} ${Object.entries(answers)
            .sort(([, a], [, b]) => b - a)
            .map(([t, n]) => `${t} ${n}`)
            .join(', ')}`,
      )
      .join('; ');
  console.log(`#   told: ${told(reservations.told)}`);
  for (const w of reservations.windows) console.log(`#   from ${String(w.fromS / 60).padStart(3)} min: ${told({ reserve: w.told.reserve ?? {} })}`);
  for (const [kind, outcomes] of Object.entries(verdict.counts.byApiKind).sort())
    console.log(
      `#   ${kind.padEnd(24)} ${Object.entries(outcomes)
        .map(([o, n]) => `${o} ${n}`)
        .join(', ')}`,
    );
  const resolutions = new Map<string, number>();
  for (const u of verdict.unknowns)
    resolutions.set(`${u.api} ${u.kind} (${u.told}) → ${u.resolution}`, (resolutions.get(`${u.api} ${u.kind} (${u.told}) → ${u.resolution}`) ?? 0) + 1);
  console.log(`# unknown outcomes: ${verdict.unknowns.length}`);
  for (const [what, n] of [...resolutions].sort()) console.log(`#   ${String(n).padStart(4)}  ${what}`);
  console.log(`# processes: ${exits.join('; ')}`);
  if (verdict.anomalies.length === 0) {
    console.log('# anomalies: none');
    return;
  }
  console.log(`# ANOMALIES: ${verdict.anomalies.length}`);
  for (const a of verdict.anomalies.slice(0, 40)) console.log(`#   [${a.rule}] ${a.key}: ${a.detail}${a.repeats ? ` (+${a.repeats} more)` : ''}`);
}

// ---- entry ------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  if (options.check) {
    const history: History = JSON.parse(readFileSync(options.check, 'utf8'));
    const verdict = check(history);
    report(verdict, { seed: 0, seconds: 0, schedule: [], timing: TIMING, faultLog: [] }, []);
    return verdict.anomalies.length ? 1 : 0;
  }
  return options.inside ? inner(options, options.inside) : outer(options);
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`# chaos run failed: ${(err as Error).stack}`);
    process.exit(2);
  },
);
