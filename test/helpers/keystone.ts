// A real OpenStack Keystone for the tests: Debian's `keystone` (keystone-manage and the WSGI
// application) served by uwsgi on 127.0.0.1, with a SQLite database and Fernet keys in a state
// directory of its own. Bootstrapped, then given through its own API the projects, users and roles
// the tests sign in as, a catalog, a clouds.yaml with one cloud per user, and two tokens that no
// longer work (one past its expiry, one revoked). Starting one takes about a minute, so `npm test`
// starts it once per run when a selected file needs it and hands its state directory over in
// ALLOT_TEST_KEYSTONE_DIR; a file run on its own starts its own.
//
// Needs `apt-get install keystone uwsgi uwsgi-plugin-python3` (scripts/system-deps.ts installs them
// for `npm test`). A start that fails stops what it started and removes its state directory.
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Sqlite from 'better-sqlite3';
import YAML from 'yaml';
import type { Config } from '../../src/config.js';
import { freePort } from './postgres.js';

const exec = promisify(execFile);

const KEYSTONE_MANAGE = '/usr/bin/keystone-manage';
const KEYSTONE_WSGI = '/usr/bin/keystone-wsgi-public';
const REGION = 'RegionOne';
const DOMAIN = 'Default';
/** a keystone-manage step (db_sync is the slowest: about 20 s on a loaded 2-core machine) */
const MANAGE_TIMEOUT_MS = 300_000;
/** how long a started Keystone may take to answer GET /v3 (ALLOT_TEST_KEYSTONE_TIMEOUT, seconds) */
const READY_TIMEOUT_MS = Number(process.env.ALLOT_TEST_KEYSTONE_TIMEOUT ?? 120) * 1_000;
/** one call to Keystone's API while populating it */
const API_TIMEOUT_MS = 60_000;

/** The projects the tests use besides bootstrap's `admin`. */
const PROJECTS = ['service', 'p1', 'p2'];

/**
 * The identities: a role on a project, or on the whole system. Bootstrap makes `admin` imply
 * `member` and `member` imply `reader`, so tokens carry the implied roles too.
 */
const USERS: Array<{ name: string; scope: 'project' | 'system'; project: string | null; roles: string[] }> = [
  { name: 'admin', scope: 'project', project: 'admin', roles: ['admin'] }, // made by bootstrap
  { name: 'sys-admin', scope: 'system', project: null, roles: ['admin'] },
  { name: 'p1-member', scope: 'project', project: 'p1', roles: ['member'] },
  { name: 'p1-reader', scope: 'project', project: 'p1', roles: ['reader'] },
  { name: 'p2-member', scope: 'project', project: 'p2', roles: ['member'] },
  // what nova's [placement] user holds
  { name: 'nova', scope: 'project', project: 'service', roles: ['service'] },
  // service users that validate tokens (Keystone's identity:validate_token takes role:service)
  { name: 'allot', scope: 'project', project: 'service', roles: ['service'] },
  { name: 'placement', scope: 'project', project: 'service', roles: ['service'] },
  { name: 'ironic', scope: 'project', project: 'service', roles: ['service'] },
];

export interface KeystoneUser {
  password: string;
  id: string;
  scope: 'project' | 'system';
  project: string | null;
  project_id?: string;
  roles: string[];
}

/** STATE_DIR/users.json: what another process needs to use a started Keystone. */
interface KeystoneState {
  keystone_url: string;
  region: string;
  users: Record<string, KeystoneUser>;
  projects: Record<string, string>;
}

export interface RealKeystone {
  /** the identity API, http://127.0.0.1:PORT/v3 */
  url: string;
  stateDir: string;
  /** the clouds.yaml with one cloud per user, for the openstack CLI */
  cloudsYaml: string;
  users: Record<string, KeystoneUser>;
  projects: Record<string, string>;
  /** a fresh token for a user, in the user's scope (project, or system) */
  token(user: string): Promise<string>;
  /** revoke a token (as `openstack token revoke` does) */
  revoke(token: string): Promise<void>;
  /** tokens made at start: one past its expiry, one revoked */
  expiredToken: string;
  revokedToken: string;
  /** point the catalog's placement and baremetal endpoints at these URLs */
  catalog(placementUrl: string, baremetalUrl: string): Promise<void>;
  /**
   * The options of an allot that validates tokens with this Keystone as its service user; a
   * generous timeout, because on a loaded test machine Keystone can take seconds to answer.
   */
  allotConfig(overrides?: Partial<Config>): Partial<Config>;
  /** The same as `allot serve` options, for a spawned allot (its password goes in ALLOT_KEYSTONE_PASSWORD). */
  serveArgs: string[];
}

const files = (stateDir: string) => ({
  conf: path.join(stateDir, 'keystone.conf'),
  db: path.join(stateDir, 'keystone.sqlite'),
  log: path.join(stateDir, 'keystone.log'),
  uwsgiLog: path.join(stateDir, 'uwsgi.log'),
  pid: path.join(stateDir, 'keystone.pid'),
  state: path.join(stateDir, 'users.json'),
  clouds: path.join(stateDir, 'clouds.yaml'),
  expired: path.join(stateDir, 'expired-token'),
  revoked: path.join(stateDir, 'revoked-token'),
});

function keystoneConf(stateDir: string): string {
  const f = files(stateDir);
  return `[DEFAULT]
use_stderr = false
log_file = ${f.log}

[database]
connection = sqlite:///${f.db}

[token]
provider = fernet

[fernet_tokens]
key_repository = ${path.join(stateDir, 'fernet-keys')}

[fernet_receipts]
key_repository = ${path.join(stateDir, 'fernet-receipts')}

[credential]
key_repository = ${path.join(stateDir, 'credential-keys')}

[identity]
# bcrypt's fewest rounds: every test signs in many times
password_hash_rounds = 4

[cache]
enabled = false
`;
}

/** The environment of every Keystone program: this state directory's configuration only. */
function keystoneEnv(stateDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OS_KEYSTONE_CONFIG_FILES: files(stateDir).conf, ...extra };
  delete env.OS_KEYSTONE_CONFIG_DIR;
  return env;
}

async function manage(stateDir: string, ...args: string[]): Promise<void> {
  try {
    await exec(KEYSTONE_MANAGE, ['--config-file', files(stateDir).conf, ...args], { timeout: MANAGE_TIMEOUT_MS, maxBuffer: 16 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`keystone-manage ${args[0]} failed: ${(e.stderr || e.message).trim().split('\n').slice(-3).join(' | ')}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stop the uwsgi of a state directory: its whole process group, SIGKILL after 15 s. */
async function stopServer(stateDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(files(stateDir).pid, 'utf8'));
  } catch {
    return;
  }
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* already gone */
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + 15_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  signal('SIGKILL');
  while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
  rmSync(files(stateDir).pid, { force: true });
}

/** Serve the state directory with uwsgi, in a process group of its own; wait until GET /v3 answers. */
async function launch(stateDir: string, url: string, port: number, readyTimeoutMs: number): Promise<void> {
  const f = files(stateDir);
  const log = openSync(f.uwsgiLog, 'a');
  const server = spawn(
    'uwsgi',
    [
      '--plugins',
      'python3',
      '--http-socket',
      `127.0.0.1:${port}`,
      '--wsgi-file',
      KEYSTONE_WSGI,
      '--master',
      // SQLite connections may not cross threads: processes of one thread each
      '--processes',
      '2',
      '--threads',
      '1',
      '--need-app',
      '--lazy-apps',
      '--die-on-term',
      '--no-orphans',
      '--buffer-size',
      '32768',
      // uwsgi's http-socket closes each connection after its answer without saying so; a client
      // that kept it alive would send its next request into a closed socket
      '--add-header',
      'Connection: close',
      '--disable-logging',
    ],
    { env: keystoneEnv(stateDir), stdio: ['ignore', log, log], detached: true },
  );
  closeSync(log);
  if (server.pid === undefined) throw new Error('uwsgi could not be started (apt-get install uwsgi uwsgi-plugin-python3)');
  writeFileSync(f.pid, String(server.pid));
  server.unref();
  let exited: number | string | null = null;
  server.on('exit', (code, signal) => (exited = code ?? signal));
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited !== null) throw new Error(`Keystone's uwsgi exited (${exited}) before answering; see ${f.uwsgiLog}`);
    const answer = await fetch(url, { signal: AbortSignal.timeout(3_000) }).catch(() => null);
    if (answer?.status === 200) return;
    if (Date.now() >= deadline) throw new Error(`Keystone did not answer ${url} within ${readyTimeoutMs / 1000}s; see ${f.uwsgiLog}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Keystone's identity API as bootstrap's admin. */
async function adminApi(state: KeystoneState) {
  const token = await passwordToken(state, 'admin');
  return async <T = any>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${state.keystone_url}${route}`, {
      method,
      headers: { 'x-auth-token': token, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`Keystone ${method} ${route}: ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}

function authBody(state: KeystoneState, user: string) {
  const u = state.users[user];
  if (!u) throw new Error(`no Keystone user ${user}`);
  const scope = u.scope === 'system' ? { system: { all: true } } : { project: { name: u.project, domain: { name: DOMAIN } } };
  return { auth: { identity: { methods: ['password'], password: { user: { name: user, domain: { name: DOMAIN }, password: u.password } } }, scope } };
}

async function passwordToken(state: KeystoneState, user: string): Promise<string> {
  const res = await fetch(`${state.keystone_url}/auth/tokens?nocatalog`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(authBody(state, user)),
    signal: AbortSignal.timeout(API_TIMEOUT_MS),
  });
  const token = res.headers.get('x-subject-token');
  if (res.status !== 201 || !token) throw new Error(`Keystone refused a token for ${user}: ${res.status} ${await res.text()}`);
  return token;
}

async function revokeToken(state: KeystoneState, token: string): Promise<void> {
  const res = await fetch(`${state.keystone_url}/auth/tokens`, {
    method: 'DELETE',
    headers: { 'x-auth-token': token, 'x-subject-token': token },
    signal: AbortSignal.timeout(API_TIMEOUT_MS),
  });
  if (res.status !== 204) throw new Error(`revoking a token failed: ${res.status}`);
}

/** The projects, roles and users, made through the API as an administrator would. */
async function populate(state: KeystoneState): Promise<void> {
  const api = await adminApi(state);
  const roles = new Map<string, string>((await api<{ roles: Array<{ id: string; name: string }> }>('GET', '/roles')).roles.map((r) => [r.name, r.id]));
  if (!roles.has('service')) roles.set('service', (await api('POST', '/roles', { role: { name: 'service' } })).role.id);
  const projects: Record<string, string> = {};
  projects.admin = (await api('GET', '/projects?name=admin')).projects[0].id;
  for (const name of PROJECTS) projects[name] = (await api('POST', '/projects', { project: { name, domain_id: 'default' } })).project.id;
  for (const { name, scope, project, roles: granted } of USERS) {
    const user = state.users[name]!;
    user.id =
      name === 'admin'
        ? (await api('GET', '/users?name=admin')).users[0].id
        : (await api('POST', '/users', { user: { name, password: user.password, domain_id: 'default' } })).user.id;
    if (project) user.project_id = projects[project];
    for (const role of granted) {
      const target = scope === 'system' ? '/system' : `/projects/${projects[project!]}`;
      await api('PUT', `${target}/users/${user.id}/roles/${roles.get(role)}`);
    }
  }
  state.projects = projects;
}

/** Make the catalog's placement and baremetal services point at these URLs (replacing any endpoints). */
async function setCatalog(state: KeystoneState, placementUrl: string, baremetalUrl: string): Promise<void> {
  const api = await adminApi(state);
  for (const [name, type, url] of [
    ['placement', 'placement', placementUrl],
    ['ironic', 'baremetal', baremetalUrl],
  ] as const) {
    const service = (await api('GET', `/services?type=${type}`)).services[0] ?? (await api('POST', '/services', { service: { name, type } })).service;
    for (const endpoint of (await api('GET', `/endpoints?service_id=${service.id}`)).endpoints) await api('DELETE', `/endpoints/${endpoint.id}`);
    for (const iface of ['public', 'internal', 'admin']) {
      await api('POST', '/endpoints', { endpoint: { service_id: service.id, url: url.replace(/\/$/, ''), interface: iface, region_id: REGION } });
    }
  }
}

// Keystone's own token issuing, run in a process of its own whose [token] expiration is 1 s
// (oslo.config reads OS_TOKEN__EXPIRATION): the token is made as the server makes one, from the
// same database and keys, and is past its expiry a second later.
const ISSUE_SHORT_LIVED_TOKEN = `
import sys
sys.argv = sys.argv[:1]  # keystone reads the command line as its own
import webob
from keystone.server.wsgi import initialize_public_application
request = webob.Request.blank('/v3/auth/tokens', method='POST', content_type='application/json', body=sys.stdin.buffer.read())
response = request.get_response(initialize_public_application())
if response.status_code != 201:
    sys.exit('Keystone refused the token: %s %s' % (response.status, response.text[:300]))
print(response.headers['X-Subject-Token'])
`;

async function expiredToken(stateDir: string, state: KeystoneState, user: string): Promise<string> {
  const child = execFile('/usr/bin/python3', ['-c', ISSUE_SHORT_LIVED_TOKEN], {
    env: keystoneEnv(stateDir, { OS_TOKEN__EXPIRATION: '1' }),
    timeout: MANAGE_TIMEOUT_MS,
    maxBuffer: 16 << 20,
  });
  child.stdin!.end(JSON.stringify(authBody(state, user)));
  const out = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`issuing a short-lived token failed: ${stderr.trim().split('\n').slice(-2).join(' | ')}`)),
    );
  });
  const token = out.trim().split('\n').at(-1)!;
  await new Promise((r) => setTimeout(r, 2_500)); // past its 1 s life, whatever the rounding
  return token;
}

function cloudsYaml(state: KeystoneState): string {
  const clouds: Record<string, unknown> = {};
  for (const [name, user] of Object.entries(state.users)) {
    const auth: Record<string, string> = { auth_url: state.keystone_url, username: name, password: user.password, user_domain_name: DOMAIN };
    if (user.scope === 'system') auth.system_scope = 'all';
    else Object.assign(auth, { project_name: user.project!, project_domain_name: DOMAIN });
    clouds[name] = { auth, auth_type: 'password', region_name: state.region, identity_api_version: 3, interface: 'public' };
  }
  return `# one cloud per test identity (test/helpers/keystone.ts)\n${YAML.stringify({ clouds })}`;
}

export interface StartedKeystone {
  stateDir: string;
  stop(): Promise<void>;
}

/**
 * Start a Keystone in a new state directory under the system's temporary directory (about a
 * minute). When any step fails, what was started is stopped and the directory removed.
 */
export async function startKeystone(options: { readyTimeoutMs?: number } = {}): Promise<StartedKeystone> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'allot-keystone-'));
  const stop = async () => {
    await stopServer(stateDir);
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const f = files(stateDir);
    for (const keys of ['fernet-keys', 'fernet-receipts', 'credential-keys']) mkdirSync(path.join(stateDir, keys), { mode: 0o700 });
    writeFileSync(f.conf, keystoneConf(stateDir));
    const port = await freePort();
    const state: KeystoneState = {
      keystone_url: `http://127.0.0.1:${port}/v3`,
      region: REGION,
      users: Object.fromEntries(
        USERS.map(({ name, scope, project, roles }) => [
          name,
          { password: `pw-${name}-${Math.random().toString(36).slice(2, 10)}`, id: '', scope, project, roles },
        ]),
      ),
      projects: {},
    };
    const owner = ['--keystone-user', String(process.getuid?.() ?? 0), '--keystone-group', String(process.getgid?.() ?? 0)];
    await manage(stateDir, 'db_sync');
    await manage(stateDir, 'fernet_setup', ...owner);
    await manage(stateDir, 'credential_setup', ...owner);
    await manage(
      stateDir,
      'bootstrap',
      ...['--bootstrap-username', 'admin', '--bootstrap-password', state.users.admin!.password, '--bootstrap-project-name', 'admin'],
      ...['--bootstrap-role-name', 'admin', '--bootstrap-service-name', 'keystone', '--bootstrap-region-id', REGION],
      ...['--bootstrap-admin-url', state.keystone_url, '--bootstrap-internal-url', state.keystone_url, '--bootstrap-public-url', state.keystone_url],
    );
    // Keystone opens more than one connection within a request; in SQLite's default journal mode
    // a reader in one then blocks the other's commit ('database is locked'). WAL lets them both.
    const db = new Sqlite(f.db);
    db.pragma('journal_mode = WAL');
    db.close();
    await launch(stateDir, state.keystone_url, port, options.readyTimeoutMs ?? READY_TIMEOUT_MS);
    await populate(state);
    await setCatalog(state, 'http://127.0.0.1:8778/placement', 'http://127.0.0.1:8778/baremetal');
    writeFileSync(f.expired, `${await expiredToken(stateDir, state, 'p1-member')}\n`, { mode: 0o600 });
    const revoked = await passwordToken(state, 'p1-member');
    await revokeToken(state, revoked);
    writeFileSync(f.revoked, `${revoked}\n`, { mode: 0o600 });
    writeFileSync(f.clouds, cloudsYaml(state), { mode: 0o600 });
    writeFileSync(f.state, JSON.stringify(state, null, 1), { mode: 0o600 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { stateDir, stop };
}

/** The Keystone of this run (or of this file: then `stop` stops it). */
export async function realKeystone(): Promise<RealKeystone & { stop(): Promise<void> }> {
  let stateDir = process.env.ALLOT_TEST_KEYSTONE_DIR;
  let stop = async () => {};
  if (!stateDir) {
    const started = await startKeystone();
    stateDir = started.stateDir;
    stop = started.stop;
  }
  const f = files(stateDir);
  const state = JSON.parse(readFileSync(f.state, 'utf8')) as KeystoneState;
  const read = (file: string) => readFileSync(file, 'utf8').trim();
  return {
    url: state.keystone_url,
    stateDir,
    cloudsYaml: f.clouds,
    users: state.users,
    projects: state.projects,
    expiredToken: read(f.expired),
    revokedToken: read(f.revoked),
    token: (user) => passwordToken(state, user),
    revoke: (token) => revokeToken(state, token),
    allotConfig: (overrides = {}) => ({
      auth: 'keystone',
      keystoneUrl: state.keystone_url,
      keystoneUsername: 'allot',
      keystonePassword: state.users.allot!.password,
      keystoneProject: 'service',
      keystoneTimeout: 30_000,
      ...overrides,
    }),
    serveArgs: [
      '--auth',
      'keystone',
      '--keystone-url',
      state.keystone_url,
      '--keystone-username',
      'allot',
      '--keystone-project',
      'service',
      '--keystone-timeout',
      '30',
    ],
    catalog: (placementUrl, baremetalUrl) => setCatalog(state, placementUrl, baremetalUrl),
    stop,
  };
}
