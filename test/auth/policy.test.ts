// The policy engine and its default rules, decided for the personas OpenStack's defaults are
// written for; the operator's policy file and what it refuses; the start-up refusals of access
// control; and that every route of the three APIs names a rule that exists. Pure code (the HTTP
// behaviour is in noauth.test.ts and keystone.test.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { after, describe, test } from 'node:test';
import { createAccessControl, createPolicy } from '../../src/auth/access.js';
import type { Credentials } from '../../src/auth/credentials.js';
import { PolicyEngine, PolicyError } from '../../src/auth/policy.js';
import { DEFAULT_RULES } from '../../src/auth/rules/index.js';
import { baremetalRoutes } from '../../src/baremetal/api.js';
import { defaultConfig, loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/core/clock.js';
import { idsRoutes } from '../../src/ids/api.js';
import { placementRoutes } from '../../src/placement/api.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-policy-'));
const silent = pino({ level: 'silent' });

function who(roles: string[], scope: { project?: string; system?: boolean; domain?: string }): Credentials {
  return {
    userId: `user-${roles.join('-')}`,
    userName: null,
    userDomainId: 'default',
    projectId: scope.project ?? null,
    projectName: scope.project ?? null,
    projectDomainId: scope.project ? 'default' : null,
    domainId: scope.domain ?? null,
    systemScope: scope.system ? 'all' : null,
    roles,
    isAdminProject: true,
    expiresAt: null,
  };
}

// Keystone expands implied roles: admin ⊃ member ⊃ reader.
const P = {
  projectAdmin: who(['admin', 'member', 'reader'], { project: 'admin-project' }),
  service: who(['service'], { project: 'service' }),
  p1Member: who(['member', 'reader'], { project: 'p1' }),
  p1Reader: who(['reader'], { project: 'p1' }),
  p2Member: who(['member', 'reader'], { project: 'p2' }),
  p2Admin: who(['admin', 'member', 'reader'], { project: 'p2' }),
  systemAdmin: who(['admin', 'member', 'reader'], { system: true }),
  systemMember: who(['member', 'reader'], { system: true }),
  systemReader: who(['reader'], { system: true }),
  domainAdmin: who(['admin', 'member', 'reader'], { domain: 'd1' }),
};

const engine = (options: Partial<{ enforceNewDefaults: boolean; enforceScope: boolean; overrides: Record<string, string> }> = {}) =>
  new PolicyEngine(DEFAULT_RULES, { enforceNewDefaults: true, enforceScope: true, ...options });

function allowed(e: PolicyEngine, api: string, rule: string, c: Credentials, target: Record<string, unknown> = {}): boolean {
  return e.decide(api, rule, target, c) === 'allow';
}

/** Which personas a rule allows. */
function matrix(e: PolicyEngine, api: string, rule: string, target: Record<string, unknown> = {}): string[] {
  return Object.entries(P)
    .filter(([, c]) => allowed(e, api, rule, c, target))
    .map(([name]) => name);
}

describe('Placement default rules', () => {
  test('new defaults with scope enforcement: admins and services in a project token; nobody system-scoped', () => {
    const e = engine();
    assert.deepEqual(matrix(e, 'placement', 'placement:resource_providers:list'), ['projectAdmin', 'service', 'p2Admin']);
    assert.deepEqual(matrix(e, 'placement', 'placement:allocation_candidates:list'), ['projectAdmin', 'service', 'p2Admin']);
    assert.deepEqual(matrix(e, 'placement', 'placement:reshaper:reshape'), ['service'], 'only services reshape');
    assert.equal(e.decide('placement', 'placement:resource_providers:list', {}, P.systemAdmin), 'wrong_scope');
    assert.equal(e.decide('placement', 'placement:resource_providers:list', {}, P.domainAdmin), 'wrong_scope');
  });

  test("a project's readers and members see their own project's usages, admins and services any", () => {
    const e = engine();
    assert.deepEqual(matrix(e, 'placement', 'placement:usages', { project_id: 'p1' }), ['projectAdmin', 'service', 'p1Member', 'p1Reader', 'p2Admin']);
    assert.deepEqual(matrix(e, 'placement', 'placement:usages', { project_id: null }), ['projectAdmin', 'service', 'p2Admin']);
  });

  test('legacy defaults (--no-enforce-new-defaults): role:admin is OR-ed in; --no-enforce-scope lets system admins through', () => {
    const legacy = engine({ enforceNewDefaults: false });
    assert.deepEqual(matrix(legacy, 'placement', 'placement:reshaper:reshape'), ['projectAdmin', 'service', 'p2Admin'], 'admins reshape again');
    assert.deepEqual(matrix(legacy, 'placement', 'placement:usages', { project_id: 'p1' }), ['projectAdmin', 'service', 'p1Member', 'p1Reader', 'p2Admin']);
    const unscoped = engine({ enforceNewDefaults: false, enforceScope: false });
    assert.deepEqual(matrix(unscoped, 'placement', 'placement:resource_providers:create'), [
      'projectAdmin',
      'service',
      'p2Admin',
      'systemAdmin',
      'domainAdmin',
    ]);
  });
});

describe('Ironic default rules', () => {
  const node = (owner: string | null, lessee: string | null = null) => ({ 'node.owner': owner, 'node.lessee': lessee });

  test('system scope sees and manages every node; creating and deleting nodes is for system admins', () => {
    const e = engine();
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:list_all'), ['systemAdmin', 'systemMember', 'systemReader']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:create'), ['systemAdmin']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:delete', node('p1')), ['systemAdmin']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:update', node('p1')), ['p1Member', 'systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:conductor:get'), ['systemAdmin', 'systemMember', 'systemReader']);
  });

  test('a project acts on nodes it owns or leases, each rule as Ironic draws the line between owner and lessee', () => {
    const e = engine();
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:get', node('p1')), ['p1Member', 'p1Reader', 'systemAdmin', 'systemMember', 'systemReader']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:get', node('p2', 'p1')), [
      'p1Member',
      'p1Reader',
      'p2Member',
      'p2Admin',
      'systemAdmin',
      'systemMember',
      'systemReader',
    ]);
    assert.deepEqual(
      matrix(e, 'baremetal', 'baremetal:node:get', node(null)),
      ['systemAdmin', 'systemMember', 'systemReader'],
      "an unowned node is the system's",
    );
    // provisioning: owner members, lessee admins (not lessee members)
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:set_provision_state', node('p2', 'p1')), ['p2Member', 'p2Admin', 'systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:set_provision_state', node('p1', 'p2')), ['p1Member', 'p2Admin', 'systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:node:update:owner', node('p1')), ['systemAdmin', 'systemMember'], 'only the system gives nodes away');
  });

  test("allocations: members create (their own), read and release their own; list_all is the system's", () => {
    const e = engine();
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:allocation:create'), ['projectAdmin', 'p1Member', 'p2Member', 'p2Admin', 'systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:allocation:create_restricted'), ['systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:allocation:get', { 'allocation.owner': 'p1' }), [
      'p1Member',
      'p1Reader',
      'systemAdmin',
      'systemMember',
      'systemReader',
    ]);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:allocation:delete', { 'allocation.owner': 'p1' }), ['p1Member', 'systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'baremetal', 'baremetal:allocation:list_all'), ['systemAdmin', 'systemMember', 'systemReader']);
  });

  test('legacy defaults: any admin (rule:is_admin) manages everything', () => {
    const legacy = engine({ enforceNewDefaults: false, enforceScope: false });
    assert.deepEqual(matrix(legacy, 'baremetal', 'baremetal:node:create'), ['projectAdmin', 'p2Admin', 'systemAdmin', 'domainAdmin']);
    assert.deepEqual(matrix(legacy, 'baremetal', 'baremetal:node:list_all'), [
      'projectAdmin',
      'p2Admin',
      'systemAdmin',
      'systemMember',
      'systemReader',
      'domainAdmin',
    ]);
  });
});

describe('identifier API rules', () => {
  test('readers read, members (and services) allocate and release, admins manage pools; system or project scope', () => {
    const e = engine();
    assert.deepEqual(
      matrix(e, 'ids', 'ids:pools:list'),
      Object.keys(P).filter((k) => k !== 'domainAdmin'),
    );
    assert.deepEqual(matrix(e, 'ids', 'ids:allocations:create'), ['projectAdmin', 'service', 'p1Member', 'p2Member', 'p2Admin', 'systemAdmin', 'systemMember']);
    assert.deepEqual(matrix(e, 'ids', 'ids:pools:create'), ['projectAdmin', 'p2Admin', 'systemAdmin']);
  });
});

describe('every route names a rule its API has', () => {
  const tables = { placement: placementRoutes, baremetal: baremetalRoutes, ids: idsRoutes } as const;
  for (const [api, table] of Object.entries(tables)) {
    test(api, () => {
      const names = new Set(engine().ruleNames(api));
      for (const [template, methods] of Object.entries(table)) {
        for (const [method, endpoint] of Object.entries(methods as Record<string, { policy?: string; public?: boolean }>)) {
          if (endpoint.public) continue;
          // GET /usages authorizes in its handler, with the project the query names as the target.
          if (api === 'placement' && template === '/usages') continue;
          assert.ok(endpoint.policy, `${method} ${template} names no policy rule`);
          assert.ok(names.has(endpoint.policy), `${method} ${template}: no rule ${endpoint.policy}`);
        }
      }
    });
  }
});

test('docs/auth.md lists every default rule', () => {
  const doc = readFileSync(new URL('../../docs/auth.md', import.meta.url), 'utf8');
  for (const rules of Object.values(DEFAULT_RULES)) for (const r of rules) assert.ok(doc.includes(`\`${r.name}\``), `docs/auth.md does not list ${r.name}`);
});

describe('the policy file', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const file = (text: string) => {
    const p = path.join(dir, `policy-${++n}.yaml`);
    writeFileSync(p, text);
    return p;
  };
  const load = (text: string, legacy = false) => createPolicy({ policyFile: file(text), enforceNewDefaults: !legacy, enforceScope: true });
  const refused = (text: string, pattern: RegExp) =>
    assert.throws(
      () => load(text),
      (err: Error) => err instanceof PolicyError && pattern.test(err.message) && err.message.includes(dir),
    );

  test('overrides rules by name, and an override stands as written even with the legacy defaults on', () => {
    const e = load('"placement:resource_providers:list": "role:reader"\n# a comment\n"placement:reshaper:reshape": "role:admin"\n', true);
    assert.equal(allowed(e, 'placement', 'placement:resource_providers:list', P.p1Reader), true);
    assert.equal(allowed(e, 'placement', 'placement:resource_providers:create', P.p1Reader), false);
    assert.equal(allowed(e, 'placement', 'placement:reshaper:reshape', P.service), false, 'the legacy rule is not OR-ed into an override');
  });

  test("the operator's helper rules: an unknown name that a rule refers to", () => {
    const e = load('"cloud_operators": "role:admin and project_id:ops"\n"baremetal:node:create": "rule:cloud_operators"\n');
    assert.equal(allowed(e, 'baremetal', 'baremetal:node:create', who(['admin'], { project: 'ops' })), true);
    assert.equal(allowed(e, 'baremetal', 'baremetal:node:create', P.systemAdmin), false);
  });

  test('a base rule without an API prefix applies to every API that has it', () => {
    const e = createPolicy({ policyFile: file('"admin_api": "role:cloud_admin"\n'), enforceNewDefaults: false, enforceScope: false });
    const cloudAdmin = who(['cloud_admin'], { project: 'x' });
    assert.equal(allowed(e, 'placement', 'placement:resource_providers:list', cloudAdmin), false, "Placement's legacy rule is role:admin itself");
    assert.equal(allowed(e, 'baremetal', 'baremetal:node:create', cloudAdmin), true, "Ironic's legacy rules go through rule:admin_api");
  });

  test('what is wrong is refused at start, naming the file and the rule', () => {
    refused(
      '"placement:resource_provider:list": "role:admin"\n',
      /policy rule "placement:resource_provider:list" is not a rule of placement, baremetal, ids and no rule refers to it/,
    );
    refused('"placement:traits:list": "role:admin or"\n', /policy rule "placement:traits:list": expected a check, found the end/);
    refused('"placement:traits:list": "rule:nobody"\n', /policy rule "placement:traits:list" refers to rule:nobody, which placement does not have/);
    refused('"a": "rule:b"\n"b": "rule:a"\n"placement:traits:list": "rule:a"\n', /refer to each other in a cycle: a → b → a/);
    refused('"placement:traits:list": ["role:admin"]\n', /policy rule "placement:traits:list" .*the check must be a string/);
    refused('"placement:traits:list": "role:admin"\n"placement:traits:list": "@"\n', /not valid YAML/);
    refused('- role:admin\n', /must be a mapping of rule names to check strings/);
    refused('"nova:servers:list": "@"\n"placement:traits:list": "rule:nova:servers:list"\n', /no API is called "nova"/);
    assert.throws(
      () => createPolicy({ policyFile: path.join(dir, 'missing.yaml'), enforceNewDefaults: true, enforceScope: true }),
      /cannot read the policy file .*missing\.yaml/,
    );
  });

  test('an empty file changes nothing', () => {
    const e = load('# nothing yet\n');
    assert.equal(allowed(e, 'placement', 'placement:resource_providers:list', P.projectAdmin), true);
  });
});

describe('access control refuses to start when the configuration is unsafe or incomplete', () => {
  test('noauth on an address other machines reach, unless --insecure-noauth', () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10']) {
      assert.throws(
        () => createAccessControl({ ...defaultConfig(), host }, silent, systemClock),
        /refusing to listen on .* without authentication.*--auth keystone.*--insecure-noauth/,
      );
      assert.doesNotThrow(() => createAccessControl({ ...defaultConfig(), host, insecureNoauth: true }, silent, systemClock));
    }
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost'])
      assert.doesNotThrow(() => createAccessControl({ ...defaultConfig(), host }, silent, systemClock));
  });

  test('--auth keystone without what it needs says which options are missing', () => {
    assert.throws(
      () => createAccessControl({ ...defaultConfig(), auth: 'keystone', keystoneUrl: 'http://keystone:5000' }, silent, systemClock),
      /--auth keystone needs --keystone-username, --keystone-password, --keystone-project \(or ALLOT_KEYSTONE_USERNAME, ALLOT_KEYSTONE_PASSWORD, ALLOT_KEYSTONE_PROJECT\)/,
    );
    assert.throws(
      () =>
        createAccessControl(
          { ...defaultConfig(), auth: 'keystone', keystoneUrl: 'keystone:5000', keystoneUsername: 'a', keystonePassword: 'b', keystoneProject: 'c' },
          silent,
          systemClock,
        ),
      /--keystone-url must be an http\(s\) URL/,
    );
  });
});

describe('configuration of authentication', () => {
  test('the Keystone keys and the switches come from the environment as from flags; flags win', () => {
    const env = {
      ALLOT_AUTH: 'keystone',
      ALLOT_KEYSTONE_URL: 'http://keystone.example:5000/v3',
      ALLOT_KEYSTONE_USERNAME: 'allot',
      ALLOT_KEYSTONE_PASSWORD: 'secret',
      ALLOT_KEYSTONE_PROJECT: 'service',
      ALLOT_KEYSTONE_USER_DOMAIN: 'users',
      ALLOT_KEYSTONE_TIMEOUT: '2.5',
      ALLOT_KEYSTONE_TOKEN_CACHE_TIME: '60',
      ALLOT_ENFORCE_SCOPE: 'false',
      ALLOT_ALLOWED_HOSTS: 'allot.internal, allot',
    };
    const c = loadConfig({}, env);
    assert.equal(c.auth, 'keystone');
    assert.equal(c.keystoneUrl, 'http://keystone.example:5000/v3');
    assert.equal(c.keystonePassword, 'secret');
    assert.equal(c.keystoneUserDomain, 'users');
    assert.equal(c.keystoneProjectDomain, 'Default');
    assert.equal(c.keystoneTimeout, 2500);
    assert.equal(c.keystoneTokenCacheTime, 60_000);
    assert.equal(c.keystoneTokenCacheSize, 10_000);
    assert.equal(c.enforceScope, false);
    assert.equal(c.enforceNewDefaults, true);
    assert.deepEqual(c.allowedHosts, ['allot.internal', 'allot']);
    const flags = loadConfig({ enforceScope: true, enforceNewDefaults: false, keystoneUsername: 'other' }, env);
    assert.equal(flags.enforceScope, true);
    assert.equal(flags.enforceNewDefaults, false);
    assert.equal(flags.keystoneUsername, 'other');
    assert.throws(() => loadConfig({}, { ALLOT_AUTH: 'ldap' }), /auth must be one of noauth, keystone/);
  });

  test("defaults: noauth, new defaults and scope enforced, keystonemiddleware's 300 s cache", () => {
    const c = loadConfig({}, {});
    assert.equal(c.auth, 'noauth');
    assert.equal(c.enforceNewDefaults, true);
    assert.equal(c.enforceScope, true);
    assert.equal(c.keystoneTokenCacheTime, 300_000);
  });
});
