// A real OpenStack Keystone for the tests (../shared/reference/keystone/real_keystone.py: Debian's
// keystone under uwsgi, SQLite, Fernet keys, users in several projects and roles). Starting one
// takes about a minute, so `npm test` starts it once per run when a selected file needs it and
// hands its state directory over in ALLOT_TEST_KEYSTONE_DIR; a file run on its own starts its own.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Config } from '../../src/config.js';
import { freePort } from './postgres.js';

const exec = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const REAL_KEYSTONE = process.env.ALLOT_REAL_KEYSTONE ?? path.resolve(root, '../shared/reference/keystone/real_keystone.py');

export interface KeystoneUser {
  password: string;
  id: string;
  scope: 'project' | 'system';
  project: string | null;
  project_id?: string;
  roles: string[];
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
  /** tokens real_keystone.py made at start: one past its expiry, one revoked */
  expiredToken: string;
  revokedToken: string;
  /** point the catalog's placement and baremetal endpoints at these URLs */
  catalog(placementUrl: string, baremetalUrl: string): Promise<void>;
  /**
   * The options of an allot that validates tokens with this Keystone as its service user; a
   * generous timeout, because on a loaded test machine Keystone can take seconds to answer.
   */
  allotConfig(overrides?: Partial<Config>): Partial<Config>;
}

async function script(...args: string[]): Promise<string> {
  const { stdout } = await exec('/usr/bin/python3', [REAL_KEYSTONE, ...args], { maxBuffer: 16 << 20 });
  return stdout;
}

/** Start a Keystone in a new state directory (about a minute). */
export async function startKeystone(): Promise<{ stateDir: string; stop(): Promise<void> }> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'allot-keystone-'));
  await script('start', '--state-dir', stateDir, '--port', String(await freePort()));
  return {
    stateDir,
    stop: async () => {
      await script('stop', '--state-dir', stateDir).catch(() => {});
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
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
  const state = JSON.parse(readFileSync(path.join(stateDir, 'users.json'), 'utf8')) as {
    keystone_url: string;
    users: Record<string, KeystoneUser>;
    projects: Record<string, string>;
  };
  const url = state.keystone_url;
  const read = (name: string) => readFileSync(path.join(stateDir!, name), 'utf8').trim();
  return {
    url,
    stateDir,
    cloudsYaml: path.join(stateDir, 'clouds.yaml'),
    users: state.users,
    projects: state.projects,
    expiredToken: read('expired-token'),
    revokedToken: read('revoked-token'),
    async token(user) {
      const u = state.users[user];
      if (!u) throw new Error(`no Keystone user ${user}`);
      const scope = u.scope === 'system' ? { system: { all: true } } : { project: { name: u.project, domain: { name: 'Default' } } };
      const res = await fetch(`${url}/auth/tokens?nocatalog`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth: { identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password: u.password } } }, scope },
        }),
      });
      const token = res.headers.get('x-subject-token');
      if (res.status !== 201 || !token) throw new Error(`Keystone refused a token for ${user}: ${res.status} ${await res.text()}`);
      return token;
    },
    async revoke(token) {
      const res = await fetch(`${url}/auth/tokens`, { method: 'DELETE', headers: { 'x-auth-token': token, 'x-subject-token': token } });
      if (res.status !== 204) throw new Error(`revoking failed: ${res.status}`);
    },
    allotConfig: (overrides = {}) => ({
      auth: 'keystone',
      keystoneUrl: url,
      keystoneUsername: 'allot',
      keystonePassword: state.users.allot!.password,
      keystoneProject: 'service',
      keystoneTimeout: 30_000,
      ...overrides,
    }),
    async catalog(placementUrl, baremetalUrl) {
      await script('catalog', '--state-dir', stateDir!, '--placement-url', placementUrl, '--baremetal-url', baremetalUrl);
    },
    stop,
  };
}
