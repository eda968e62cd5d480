// `npm run test:clients [-- --out FILE] [--suites a,b]`: the real OpenStack clients' own functional
// test suites, as Debian ships them, run unmodified against a real allot server (SQLite):
//
// - osc-placement: the `openstack resource provider …` commands (python3-osc-placement). Its base
//   class asks Placement's own test fixture for an endpoint and a token; the plugin
//   scripts/clients/allot_placement_fixture.py hands it allot's instead (noauth, token `admin`, as
//   the real fixture uses).
// - openstacksdk placement and baremetal (python3-openstacksdk): a real Keystone
//   (test/helpers/keystone.ts) whose catalog names allot, allot with `--auth keystone`, and the
//   clouds.yaml the suite reads (its devstack cloud names). Placement runs as the project admin
//   (devstack-admin); bare metal as the system admin (devstack-system-admin through OS_CLOUD and
//   OPENSTACKSDK_OPERATOR_CLOUD), as Ironic's default policy wants for creating nodes.
// - ironicclient (python3-ironicclient): its test.conf in `noauth` mode (`ironic_url`), as Ironic's
//   own CI runs it: its keystone mode passes only project-scoped credentials.
// - nova, nova-full (python3-nova, nova-common for its api-paste.ini): Nova's own functional tests,
//   a whole Nova in one process (API, conductor, scheduler, fake computes, nova-manage) whose
//   report client Nova's PlacementFixture sends to allot, a fresh server for each test
//   (scripts/clients/nova_functional.py, allot_placement_fixture.py, placement-per-test.ts); `nova`
//   is the part CI runs, `nova-full` all of scripts/clients/nova-tests.ts; `--nova-tests a,b` only
//   these. `--nova-placement in-process` runs them on Placement's own fixture instead (Placement
//   in the test process): the reference every test that passes there must pass on allot.
// - ironic-tempest: ironic-tempest-plugin's API tests (Debian's ironic-tempest-plugin), run by
//   stestr as `tempest run` runs them (scripts/clients/allot_tempest.py), against an allot of its own
//   behind the real Keystone, with the tempest.conf written here (tempestConfig). With
//   `--real-ironic LAUNCHER` (real_ironic.py, scripts/references.ts) they run against the real Ironic
//   instead, validating tokens with the same Keystone: the reference counts.
//
// `--db postgres`: the servers on a throwaway PostgreSQL instead of SQLite files.
// Prints per suite run / passed / failed / skipped, writes a JSON summary to --out (default
// /tmp/allot-clients.json) and exits non-zero when a test fails that KNOWN_GAPS does not name, or
// a suite cannot run. Each suite is bounded by SUITE_TIMEOUT_MS.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { type RealKeystone, realKeystone } from '../test/helpers/keystone.js';
import { type RunningPostgres, createTestDatabase, freePort, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { type SpawnedServer, spawnServer } from '../test/helpers/server.js';
import { NOVA_CI, NOVA_FULL } from './clients/nova-tests.js';
import { type ServerPerTest, serverPerTest } from './clients/placement-per-test.js';
import { referenceFile } from './references.js';
import { ensureSystemPackages } from './system-deps.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = '/usr/bin/python3';
const execFileP = promisify(execFile);
const packages = '/usr/lib/python3/dist-packages';
/**
 * a whole suite: ironicclient's 108 tests take more than 15 minutes here — each spawns
 * `openstack` several times, 2.3–2.7 s a start (a run alone was stopped at 15 minutes unfinished;
 * its two power-state tests take 25 s)
 */
const SUITE_TIMEOUT_MS = 45 * 60_000;
/** Nova's suites: one test takes 3 to 15 s; oslotest fails a test that runs longer than OS_TEST_TIMEOUT */
const NOVA_TEST_TIMEOUT_S = 300;
const NOVA_SUITES: Record<string, { tests: string[]; timeoutMs: number }> = {
  nova: { tests: NOVA_CI, timeoutMs: 60 * 60_000 },
  'nova-full': { tests: NOVA_FULL, timeoutMs: 4 * 60 * 60_000 },
};
/**
 * How Placement's own fixture runs Placement (oslo.policy's defaults in Placement 8.0): the
 * legacy rules (`role:admin`) allowed too, scopes not checked. Reshape (POST /reshaper) needs the
 * `service` role under the current rules, which noauth's `admin` token does not have.
 */
const PLACEMENT_FIXTURE_POLICY = ['--no-enforce-new-defaults', '--no-enforce-scope'];

/**
 * Failures that are known gaps, not regressions: [suite, test id pattern, reason]. A failure that
 * matches is counted as `allowed`; any other failure fails the run.
 */
const KNOWN_GAPS: [string, RegExp, string][] = [];

interface TestResult {
  test: string;
  outcome: 'passed' | 'failed' | 'skipped';
  reason: string;
}

interface SuiteSummary {
  suite: string;
  run: number;
  passed: number;
  failed: number;
  skipped: number;
  /** failures KNOWN_GAPS names */
  allowed: number;
  seconds: number;
  /** the exit code of pytest (or the suite's command): 0 all passed, 1 some failed; anything else: the suite did not run right */
  exitCode: number | null;
  unexpected: TestResult[];
  skips: TestResult[];
  /** KNOWN_GAPS entries of this suite whose tests all passed: the gap is closed, remove the entry */
  stale: string[];
}

interface Suite {
  name: string;
  /** test paths under dist-packages (pytest) */
  paths?: string[];
  env: NodeJS.ProcessEnv;
  plugins?: string[];
  cwd?: string;
  /** python's arguments when the suite is not run by pytest (then `paths` and `plugins` are unused) */
  command?: string[];
  timeoutMs?: number;
}

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function runSuite(suite: Suite, work: string): Promise<SuiteSummary> {
  const resultsFile = path.join(work, `${suite.name}.jsonl`);
  const logFile = path.join(work, `${suite.name}.log`);
  const args = suite.command ?? [
    ...['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p', 'allot_results', ...(suite.plugins ?? []).flatMap((p) => ['-p', p])],
    ...(suite.paths ?? []).map((p) => path.join(packages, p)),
  ];
  const started = Date.now();
  console.log(`# ${suite.name}: running (log: ${logFile})`);
  const exitCode = await new Promise<number | null>((resolve) => {
    const child = spawn(python, args, {
      cwd: suite.cwd ?? work,
      env: { ...process.env, ...suite.env, PYTHONPATH: path.join(root, 'scripts/clients'), ALLOT_RESULTS_FILE: resultsFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr.on('data', (c: Buffer) => (log += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), suite.timeoutMs ?? SUITE_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      writeFileSync(logFile, log);
      resolve(code);
    });
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  let results: TestResult[] = [];
  try {
    results = readFileSync(resultsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TestResult);
  } catch {
    /* no results: pytest did not get to run the tests; exitCode says so */
  }
  const gaps = KNOWN_GAPS.filter(([name]) => name === suite.name);
  const gapOf = (t: TestResult) => gaps.find(([, pattern]) => pattern.test(t.test));
  const failures = results.filter((r) => r.outcome === 'failed');
  return {
    suite: suite.name,
    run: results.length,
    passed: results.filter((r) => r.outcome === 'passed').length,
    failed: failures.length,
    skipped: results.filter((r) => r.outcome === 'skipped').length,
    allowed: failures.filter((r) => gapOf(r)).length,
    seconds,
    exitCode,
    unexpected: failures.filter((r) => !gapOf(r)),
    skips: results.filter((r) => r.outcome === 'skipped'),
    stale: gaps.filter(([, pattern]) => !failures.some((r) => pattern.test(r.test))).map(([, pattern, reason]) => `${pattern.source} (${reason})`),
  };
}

/** a directory as tox would leave it for ironicclient: its CLI client runs .tox/functional/bin/openstack */
function ironicclientDir(work: string, baremetalUrl: string): { dir: string; config: string } {
  const dir = path.join(work, 'ironicclient');
  mkdirSync(path.join(dir, '.tox/functional/bin'), { recursive: true });
  symlinkSync('/usr/bin/openstack', path.join(dir, '.tox/functional/bin/openstack'));
  const config = path.join(dir, 'test.conf');
  writeFileSync(config, `[functional]\nauth_strategy = noauth\nironic_url = ${baremetalUrl}\n`);
  return { dir, config };
}

/**
 * ironic-tempest-plugin's configuration: the Keystone, its project admin and system admin as
 * pre-provisioned accounts (dynamic credentials would create and delete users and projects for
 * every test class: minutes of Keystone calls on a small machine), scope enforced as allot's
 * defaults do (the tests then act as the system admin), and no other service.
 */
function tempestConfig(work: string, ks: RealKeystone): string {
  const dir = path.join(work, 'tempest');
  mkdirSync(dir, { recursive: true });
  const accounts = path.join(dir, 'accounts.yaml');
  const { admin, 'sys-admin': sysAdmin } = ks.users;
  writeFileSync(
    accounts,
    YAML.stringify([
      { username: 'admin', project_name: admin!.project, password: admin!.password, roles: ['admin'], types: ['admin'] },
      { username: 'sys-admin', system: 'all', password: sysAdmin!.password, roles: ['admin'] },
    ]),
    { mode: 0o600 },
  );
  const conf = `[DEFAULT]
log_file = ${path.join(dir, 'tempest.log')}

[auth]
use_dynamic_credentials = false
test_accounts_file = ${accounts}
admin_username = admin
admin_password = ${admin!.password}
admin_project_name = ${admin!.project}
admin_domain_name = Default

[identity]
# the label preprov_creds gives \`types: [admin]\` accounts: the system admin (role admin as well)
# is then never handed out as the project admin, which would leave no system admin for the class
admin_role = project-admin
uri_v3 = ${ks.url}
auth_version = v3
region = RegionOne

[identity-feature-enabled]
api_v2 = false

[service_available]
ironic = true
nova = false
neutron = false
glance = false
cinder = false
swift = false

[enforce_scope]
ironic = true

[baremetal]
driver = fake-hardware
# the only hardware type (as the reference Ironic runs): the tests that need ipmi skip
enabled_hardware_types = fake-hardware

[oslo_concurrency]
lock_path = ${path.join(dir, 'locks')}
`;
  writeFileSync(path.join(dir, 'tempest.conf'), conf, { mode: 0o600 });
  return dir;
}

/** the real Ironic's launcher started it, with its state directory: stopped with the servers */
let realIronicStateDir: string | null = null;

/**
 * The real Ironic (API and conductor in one process, fake hardware) behind the run's Keystone as
 * allot is: tokens checked by keystonemiddleware with allot's service user, and the new policy
 * defaults. Answers its bare-metal URL. The launcher waits for GET /v1/drivers without a token:
 * keystonemiddleware hands token-less requests on (delay_auth_decision) and a policy file lets
 * anyone list drivers, which needs scope checks off (a token-less request has no system scope);
 * every other rule is Ironic's default, and the tests always send the system admin's token.
 */
async function startRealIronic(launcher: string, ks: RealKeystone): Promise<string> {
  const stateDir = path.join(work, 'real-ironic');
  mkdirSync(stateDir, { recursive: true });
  const extraConf = path.join(work, 'real-ironic.conf');
  const identity = ks.url.replace(/\/v3$/, '');
  const policy = path.join(stateDir, 'policy.yaml');
  writeFileSync(policy, `"baremetal:driver:get": ""\n`);
  writeFileSync(
    extraConf,
    `[DEFAULT]
auth_strategy = keystone

[keystone_authtoken]
delay_auth_decision = true
www_authenticate_uri = ${identity}
auth_url = ${identity}
auth_type = password
username = allot
password = ${ks.users.allot!.password}
project_name = service
user_domain_name = Default
project_domain_name = Default

[oslo_policy]
enforce_scope = false
enforce_new_defaults = true
policy_file = ${policy}
`,
    { mode: 0o600 },
  );
  const port = await freePort();
  realIronicStateDir = stateDir;
  await execFileP(python, [launcher, 'start', '--state-dir', stateDir, '--port', String(port), '--extra-conf', extraConf, '--timeout', '180'], {
    timeout: 240_000,
  });
  return `http://127.0.0.1:${port}`;
}

async function stopRealIronic(): Promise<void> {
  if (!realIronicStateDir || !realIronic) return;
  await execFileP(python, [realIronic, 'stop', '--state-dir', realIronicStateDir], { timeout: 60_000 }).catch(() => {});
  realIronicStateDir = null;
}

const out = option('--out') ?? path.join(os.tmpdir(), 'allot-clients.json');
const selected = option('--suites')?.split(',') ?? [
  'osc-placement',
  'openstacksdk-placement',
  'openstacksdk-baremetal',
  'ironicclient',
  'ironic-tempest',
  'nova',
];
const wantsKeystone = selected.some((s) => s.startsWith('openstacksdk') || s === 'ironic-tempest');
const novaSuites = Object.keys(NOVA_SUITES).filter((name) => selected.includes(name));
/**
 * ironic-tempest against the real Ironic (its launcher), instead of an allot of its own: only when
 * the option asks, never from ALLOT_REAL_IRONIC, so that a shell set up for the benchmarks still
 * tests allot
 */
const realIronic = process.argv.includes('--real-ironic') ? referenceFile('real-ironic', 'test:clients --real-ironic', option('--real-ironic')) : null;
const dialect = option('--db') ?? 'sqlite';
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`--db sqlite or --db postgres, not ${dialect}`);
const novaPlacement = option('--nova-placement') ?? 'allot';
if (novaPlacement !== 'allot' && novaPlacement !== 'in-process') throw new Error(`--nova-placement allot or in-process, not ${novaPlacement}`);
/** `--nova-tests a,b`: only these Nova modules, classes or tests (unittest names), e.g. to look into one failure */
const novaTests = option('--nova-tests')?.split(',');

ensureSystemPackages([
  'python3-pytest',
  'python3-openstackclient',
  'python3-osc-placement',
  'python3-placement',
  'python3-openstacksdk',
  'python3-ironicclient',
  'python3-tempest',
  ...(wantsKeystone ? ['keystone', 'uwsgi', 'uwsgi-plugin-python3'] : []),
  ...(novaSuites.length > 0 ? ['python3-nova', 'nova-common'] : []),
  ...(selected.includes('ironic-tempest') ? ['ironic-tempest-plugin'] : []),
]);

const work = mkdtempSync(path.join(os.tmpdir(), 'allot-clients-'));
/** with --db postgres: a throwaway PostgreSQL (test/helpers/postgres.ts), started on first use */
let postgres = null as RunningPostgres | null;
let postgresStarting: Promise<RunningPostgres> | null = null;

/** a fresh database for one server */
async function database(name: string): Promise<string> {
  if (dialect === 'sqlite') return `sqlite:${path.join(work, `${name}.db`)}`;
  postgresStarting ??= startEmbeddedPostgres().then((started) => (postgres = started));
  return createTestDatabase((await postgresStarting).adminUrl, `allot_clients_${name}`);
}
const servers: SpawnedServer[] = [];
/** the services handing out a server per test (Nova's suites) */
const perTestServers: ServerPerTest[] = [];
const started = Date.now();
const summaries: SuiteSummary[] = [];
let keystone: ReturnType<typeof realKeystone> | null = null;
/** a server or Keystone that did not start: its suites did not run */
const setupErrors: string[] = [];

/** Servers, PostgreSQL and Keystone never outlive the run, also when it is interrupted. */
async function stopEverything(): Promise<void> {
  for (const server of servers.splice(0)) await server.stop();
  await stopRealIronic();
  for (const service of perTestServers.splice(0)) await service.close();
  await postgres?.stop();
  postgres = null;
  await keystone?.then((ks) => ks.stop()).catch(() => {});
  keystone = null;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`# ${signal}: stopping the servers, PostgreSQL and Keystone`);
    void stopEverything().finally(() => process.exit(130));
  });
}
try {
  // Keystone takes about 30 s to start: it starts while the noauth suites run.
  keystone = wantsKeystone ? realKeystone() : null;

  const noauthSuites = (async (): Promise<SuiteSummary[]> => {
    const suites: Promise<SuiteSummary>[] = [];
    if (!selected.includes('osc-placement') && !selected.includes('ironicclient')) return [];
    const noauth = await spawnServer(['--db', await database('noauth')]);
    servers.push(noauth);
    if (selected.includes('osc-placement')) {
      suites.push(
        runSuite(
          {
            name: 'osc-placement',
            paths: ['osc_placement/tests/functional'],
            plugins: ['allot_placement_fixture'],
            env: { ALLOT_PLACEMENT_URL: noauth.placementUrl },
          },
          work,
        ),
      );
    }
    if (selected.includes('ironicclient')) {
      const { dir, config } = ironicclientDir(work, `${noauth.url}/baremetal`);
      suites.push(runSuite({ name: 'ironicclient', paths: ['ironicclient/tests/functional'], cwd: dir, env: { IRONICCLIENT_TEST_CONFIG: config } }, work));
    }
    return Promise.all(suites);
  })();

  const keystoneSuites: Promise<SuiteSummary[]> = (async () => {
    if (!keystone) return [];
    const ks = await keystone;
    /** an allot on a database of its own, validating tokens with the Keystone as its service user */
    const keystoneServer = async (name: string): Promise<SpawnedServer> => {
      const spawned = await spawnServer(
        // a token check waits up to 30 s for Keystone (5 s by default): the suites keep the machine busy
        ['--db', await database(name), ...ks.serveArgs],
        { ALLOT_KEYSTONE_PASSWORD: ks.users.allot!.password },
      );
      servers.push(spawned);
      return spawned;
    };
    const server = await keystoneServer('keystone');
    await ks.catalog(server.placementUrl, `${server.url}/baremetal`);
    // The cloud names the suite's base class reads (devstack's), from real_keystone.py's clouds.
    const clouds = (YAML.parse(readFileSync(ks.cloudsYaml, 'utf8')) as { clouds: Record<string, unknown> }).clouds;
    const cloudsYaml = path.join(work, 'clouds.yaml');
    writeFileSync(
      cloudsYaml,
      YAML.stringify({
        clouds: {
          'devstack-admin': clouds.admin,
          'devstack-system-admin': clouds['sys-admin'],
          devstack: clouds['p1-member'],
          'devstack-alt': clouds['p2-member'],
        },
      }),
      { mode: 0o600 },
    );
    // tox's functional environment raises the per-test timeout (default 5 s); waits for a state
    // (an allocation going active) give up after OPENSTACKSDK_FUNC_TEST_TIMEOUT seconds.
    const env = { OS_CLIENT_CONFIG_FILE: cloudsYaml, OS_TEST_TIMEOUT: '120', OPENSTACKSDK_FUNC_TEST_TIMEOUT: '60' };
    const results: SuiteSummary[] = [];
    if (selected.includes('openstacksdk-placement')) {
      results.push(
        await runSuite({ name: 'openstacksdk-placement', paths: ['openstack/tests/functional/placement'], env: { ...env, OS_CLOUD: 'devstack-admin' } }, work),
      );
    }
    if (selected.includes('openstacksdk-baremetal')) {
      const admin = { OS_CLOUD: 'devstack-system-admin', OPENSTACKSDK_OPERATOR_CLOUD: 'devstack-system-admin' };
      results.push(await runSuite({ name: 'openstacksdk-baremetal', paths: ['openstack/tests/functional/baremetal'], env: { ...env, ...admin } }, work));
    }
    if (selected.includes('ironic-tempest')) {
      // an allot of its own (or the real Ironic), which the catalog now names
      let url: string;
      if (realIronic) url = await startRealIronic(realIronic, ks);
      else url = `${(await keystoneServer('tempest')).url}/baremetal`;
      await ks.catalog(server.placementUrl, url);
      const dir = tempestConfig(work, ks);
      results.push(
        await runSuite(
          {
            name: 'ironic-tempest',
            command: [path.join(root, 'scripts/clients/allot_tempest.py'), dir],
            // tempest fails a test that runs longer than OS_TEST_TIMEOUT (the slowest took 6.4 s here)
            env: { TEMPEST_CONFIG_DIR: dir, TEMPEST_CONFIG: 'tempest.conf', OS_TEST_TIMEOUT: '300' },
            // the whole suite took 5 minutes here (230 tests, one at a time: two pre-provisioned accounts)
            timeoutMs: 30 * 60_000,
          },
          work,
        ),
      );
    }
    return results;
  })();

  // Nova's suites: each in a process of its own (eventlet patches the interpreter), each test on
  // a server of its own. They start once the noauth suites are done: Nova's tests keep both cores
  // busy, and beside them ironicclient's (each spawns `openstack`) ran past their suite's bound.
  const novaRuns: Promise<SuiteSummary[]> = (async () => {
    await noauthSuites.catch(() => {}); // its failure is reported with its own result below
    const results: SuiteSummary[] = [];
    for (const name of novaSuites) {
      let placement: string[] = ['--placement', 'in-process'];
      const env: NodeJS.ProcessEnv = { OS_TEST_TIMEOUT: String(NOVA_TEST_TIMEOUT_S) };
      if (novaPlacement === 'allot') {
        let count = 0;
        const service = await serverPerTest(() => database(`${name.replace('-', '_')}_${++count}`), PLACEMENT_FIXTURE_POLICY);
        perTestServers.push(service);
        placement = ['--placement', 'allot'];
        env.ALLOT_PLACEMENT_SERVERS = service.url;
      }
      const command = [path.join(root, 'scripts/clients/nova_functional.py'), ...placement, ...(novaTests ?? NOVA_SUITES[name]!.tests)];
      results.push(await runSuite({ name, command, env, timeoutMs: NOVA_SUITES[name]!.timeoutMs }, work));
    }
    return results;
  })();

  // The suites run to their end before the servers stop, whatever the others did.
  for (const half of await Promise.allSettled([noauthSuites, keystoneSuites, novaRuns])) {
    if (half.status === 'fulfilled') summaries.push(...half.value);
    else setupErrors.push(String(half.reason));
  }
} finally {
  await stopEverything();
}

const seconds = Math.round((Date.now() - started) / 1000);
writeFileSync(out, `${JSON.stringify({ seconds, setupErrors, suites: summaries }, null, 2)}\n`);
let ok = setupErrors.length === 0;
for (const error of setupErrors) console.log(`could not run suites: ${error}`);
for (const s of summaries) {
  console.log(`${s.suite}: run ${s.run}, passed ${s.passed}, failed ${s.failed} (${s.allowed} known gaps), skipped ${s.skipped} — ${s.seconds} s`);
  for (const skip of s.skips) console.log(`  skipped ${skip.test}: ${skip.reason}`);
  for (const f of s.unexpected) console.log(`  FAILED ${f.test}\n    ${f.reason.split('\n').slice(-3).join('\n    ')}`);
  for (const gap of s.stale) console.log(`  known gap no longer fails, remove it from KNOWN_GAPS: ${gap}`);
  if (s.unexpected.length > 0 || (s.exitCode !== 0 && s.exitCode !== 1) || s.run === 0) {
    if (s.exitCode !== 0 && s.exitCode !== 1) console.log(`  the suite's process exited with ${s.exitCode}: see ${path.join(work, `${s.suite}.log`)}`);
    ok = false;
  }
}
console.log(`# ${seconds} s; summary in ${out}; logs in ${work}`);
process.exit(ok ? 0 : 1);
