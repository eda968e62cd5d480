// Keystone password authentication of the client and the CLI (OS_AUTH_URL, OS_USERNAME, …)
// against a real Keystone (test/helpers/keystone.ts: Debian's keystone under uwsgi). The token
// the client gets is checked by Keystone itself; the CLI is run with the OS_*
// variables a user of the openstack CLI has in their environment.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { AllotApiError, keystonePasswordLogin, keystonePasswordToken } from '../../src/client/index.js';
import { type RealKeystone, realKeystone } from '../helpers/keystone.js';
import { type TestServer, startServer } from '../helpers/server.js';

const exec = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/cli/main.js');

describe('Keystone password authentication (real Keystone)', () => {
  let keystone: RealKeystone & { stop(): Promise<void> };
  let server: TestServer;

  before(async () => {
    // `npm test` hands over a Keystone started once for the run; run alone, the file starts one
    keystone = await realKeystone();
    server = await startServer({ db: 'sqlite::memory:' });
  });

  after(async () => {
    await server?.close();
    await keystone?.stop();
  });

  const auth = (user: string, password?: string) => ({
    authUrl: keystone.url,
    username: user,
    password: password ?? keystone.users[user]!.password,
    projectName: keystone.users[user]!.project ?? undefined,
  });

  test('the client logs in by password and Keystone accepts the token it got, scoped to the project', async () => {
    const { token, expiresAt } = await keystonePasswordLogin(auth('p1-member'));
    assert.ok(expiresAt! > Date.now());
    const check = await fetch(`${keystone.url.replace(/\/$/, '')}/auth/tokens`, { headers: { 'x-auth-token': token, 'x-subject-token': token } });
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
      OS_AUTH_URL: keystone.url,
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
