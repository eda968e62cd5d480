// Keystone password authentication of the client and the CLI (OS_AUTH_URL, OS_USERNAME, …)
// against a real Keystone (../shared/reference/keystone/real_keystone.py: Debian's keystone under
// uwsgi). The token the client gets is checked by Keystone itself; the CLI is run with the OS_*
// variables a user of the openstack CLI has in their environment.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { AllotApiError, keystonePasswordLogin, keystonePasswordToken } from '../../src/client/index.js';
import { freePort } from '../helpers/postgres.js';
import { type TestServer, startServer } from '../helpers/server.js';

const exec = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const launcher = process.env.ALLOT_REAL_KEYSTONE ?? path.resolve(root, '../shared/reference/keystone/real_keystone.py');
const cli = path.join(root, 'dist/cli/main.js');

interface KeystoneState {
  keystone_url: string;
  users: Record<string, { password: string; project: string | null }>;
}

describe('Keystone password authentication (real Keystone)', () => {
  let stateDir: string;
  let ownKeystone = false;
  let keystone: KeystoneState;
  let server: TestServer;

  before(async () => {
    // `npm test` may hand over a Keystone started once for the run; otherwise start one (about a minute)
    stateDir = process.env.ALLOT_TEST_KEYSTONE_DIR ?? '';
    if (!stateDir) {
      stateDir = mkdtempSync(path.join(os.tmpdir(), 'allot-keystone-'));
      ownKeystone = true;
      await exec('/usr/bin/python3', [launcher, 'start', '--state-dir', stateDir, '--port', String(await freePort())], { maxBuffer: 16 << 20 });
    }
    keystone = JSON.parse(readFileSync(path.join(stateDir, 'users.json'), 'utf8')) as KeystoneState;
    server = await startServer({ db: 'sqlite::memory:' });
  });

  after(async () => {
    await server?.close();
    if (ownKeystone) {
      await exec('/usr/bin/python3', [launcher, 'stop', '--state-dir', stateDir]).catch(() => {});
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  const auth = (user: string, password?: string) => ({
    authUrl: keystone.keystone_url,
    username: user,
    password: password ?? keystone.users[user]!.password,
    projectName: keystone.users[user]!.project ?? undefined,
  });

  test('the client logs in by password and Keystone accepts the token it got, scoped to the project', async () => {
    const { token, expiresAt } = await keystonePasswordLogin(auth('p1-member'));
    assert.ok(expiresAt! > Date.now());
    const check = await fetch(`${keystone.keystone_url.replace(/\/$/, '')}/auth/tokens`, { headers: { 'x-auth-token': token, 'x-subject-token': token } });
    assert.equal(check.status, 200);
    const body = (await check.json()) as { token: { user: { name: string }; project: { name: string } } };
    assert.equal(body.token.user.name, 'p1-member');
    assert.equal(body.token.project.name, 'p1');
  });

  test('the token provider keeps its token, and gets a new one when asked to refresh', async () => {
    const provider = keystonePasswordToken(auth('p1-reader'));
    const first = await provider({ refresh: false });
    assert.equal(await provider({ refresh: false }), first);
    const renewed = await provider({ refresh: true });
    assert.notEqual(renewed, first);
  });

  test('a wrong password is an AllotApiError from Keystone', async () => {
    const err = await keystonePasswordLogin(auth('p1-member', 'wrong')).catch((e: unknown) => e);
    assert.ok(err instanceof AllotApiError);
    assert.deepEqual([err.status, err.code, err.api], [401, 'keystone.auth_failed', 'keystone']);
    assert.match(err.message, /p1-member/);
  });

  test('the CLI gets its token from OS_* variables; a refused login exits 1 with one line', async () => {
    const env = (user: string, password?: string) => ({
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALLOT_') && !k.startsWith('OS_'))),
      ALLOT_URL: server.url,
      OS_AUTH_URL: keystone.keystone_url,
      OS_USERNAME: user,
      OS_PASSWORD: password ?? keystone.users[user]!.password,
      OS_PROJECT_NAME: keystone.users[user]!.project ?? '',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    });
    const ok = await exec(process.execPath, [cli, 'ids', 'pools', 'list'], { env: env('p1-member') });
    assert.deepEqual(JSON.parse(ok.stdout), []);
    // allot's noauth2 Placement reads the token as a user name: a Keystone token is not `admin`,
    // so the Placement call is refused — the token sent was Keystone's, not the default
    await assert.rejects(exec(process.execPath, [cli, 'placement', 'provider', 'list'], { env: env('p1-member') }), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /HTTP 403/);
      return true;
    });
    await assert.rejects(exec(process.execPath, [cli, 'ids', 'pools', 'list'], { env: env('p1-member', 'wrong') }), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /^allot: Keystone refused the credentials of p1-member: .*\(HTTP 401 keystone\.auth_failed/);
      assert.equal(err.stderr.trim().split('\n').length, 1);
      return true;
    });
  });
});
