// The check-string language of policy files: how it parses (precedence, parentheses, the errors
// an operator sees) and what each kind of check means, as oslo.policy defines it. Pure code: no
// server, no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Check, CheckSyntaxError, evaluate, parseCheck } from '../../src/auth/check-string.js';

const creds = {
  user_id: 'u1',
  project_id: 'p1',
  system_scope: null,
  roles: ['member', 'reader'],
  is_admin_project: true,
  is_admin: false,
  nested: { list: [{ name: 'a' }, { name: 'b' }] },
};

function check(text: string, target: Record<string, unknown> = {}, rules: Record<string, string> = {}, who: Record<string, unknown> = creds): boolean {
  const parsed = Object.fromEntries(Object.entries(rules).map(([k, v]) => [k, parseCheck(v)]));
  return evaluate(parseCheck(text), { target, creds: who, rule: (name) => parsed[name] as Check | undefined });
}

describe('check strings: meaning', () => {
  test('@ always, ! never, the empty string always (as oslo.policy reads it)', () => {
    assert.equal(check('@'), true);
    assert.equal(check('!'), false);
    assert.equal(check(''), true);
    assert.equal(check('   '), true);
  });

  test('role: is case-insensitive and may name a target field', () => {
    assert.equal(check('role:member'), true);
    assert.equal(check('role:MEMBER'), true);
    assert.equal(check('role:admin'), false);
    assert.equal(check('role:%(wanted)s', { wanted: 'Reader' }), true);
    assert.equal(check('role:%(wanted)s'), false, 'a target field the target lacks makes the check false');
  });

  test('field:%(target_field)s compares the caller with the target; a missing target field is false', () => {
    assert.equal(check('project_id:%(project_id)s', { project_id: 'p1' }), true);
    assert.equal(check('project_id:%(project_id)s', { project_id: 'p2' }), false);
    assert.equal(check('project_id:%(node.owner)s', { 'node.owner': 'p1' }), true, 'dotted target keys are flat');
    assert.equal(check('project_id:%(node.owner)s', {}), false);
  });

  test('values compare as Python prints them: True, False, None', () => {
    assert.equal(check('is_admin_project:True'), true);
    assert.equal(check('is_admin:True'), false);
    assert.equal(check('is_admin:False'), true);
    assert.equal(check('system_scope:None'), true);
    // oslo.policy's quirk, kept: a caller without a project and a target field that is None match.
    assert.equal(check('system_scope:%(node.owner)s', { 'node.owner': null }), true);
    assert.equal(check('system_scope:all', {}, {}, { ...creds, system_scope: 'all' }), true);
  });

  test('a dotted field walks into the caller; any element of a list may match', () => {
    assert.equal(check('nested.list.name:b'), true);
    assert.equal(check('nested.list.name:c'), false);
    assert.equal(check('roles:reader'), true, 'a generic check on a list matches any element (case-sensitive)');
    assert.equal(check('roles:Reader'), false);
    assert.equal(check('no_such_field:x'), false);
  });

  test('a literal on the left compares with the target', () => {
    assert.equal(check("'member':%(role.name)s", { 'role.name': 'member' }), true);
    assert.equal(check('"member":%(role.name)s', { 'role.name': 'admin' }), false);
    assert.equal(check('True:%(enabled)s', { enabled: true }), true);
    assert.equal(check('42:%(n)s', { n: 42 }), true);
  });

  test('literal text around a target field, and %% for a percent sign', () => {
    assert.equal(check('user_id:u%(n)s', { n: 1 }), true);
    assert.equal(check('project_id:100%%', {}, {}, { project_id: '100%' }), true);
  });

  test('rule: evaluates another rule; a rule that does not exist is false', () => {
    assert.equal(check('rule:members', {}, { members: 'role:member' }), true);
    assert.equal(check('rule:admins', {}, { admins: 'role:admin' }), false);
    assert.equal(check('rule:nowhere'), false);
  });

  test('and binds tighter than or; not applies to what follows; parentheses group', () => {
    assert.equal(check('role:admin or role:member and role:reader'), true);
    assert.equal(check('role:admin or role:member and role:nobody'), false);
    assert.equal(check('(role:admin or role:member) and role:nobody'), false);
    assert.equal(check('not role:admin and role:member'), true);
    assert.equal(check('not (role:admin or role:member)'), false);
    assert.equal(check('not not role:member'), true);
    assert.equal(check('((role:member))'), true);
    assert.equal(check('role:member AND project_id:%(project_id)s', { project_id: 'p1' }), true, 'keywords in any case');
    assert.equal(check('(role:admin and system_scope:all) or (role:member and project_id:%(node.owner)s)', { 'node.owner': 'p1' }), true);
  });
});

describe('check strings: errors name what is wrong and where', () => {
  const refused = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseCheck(text),
      (err: Error) => err instanceof CheckSyntaxError && pattern.test(err.message),
      text,
    );

  test('malformed strings are refused, never read as "deny" silently', () => {
    refused('admin', /"admin" at position 1 is not a check/);
    refused('role:admin and', /expected a check, found the end/);
    refused('role:admin or or role:member', /expected a check, found "or" at position 15/);
    refused('(role:admin', /expected "\)" to close the "\(" at position 1/);
    refused('role:admin)', /unexpected "\)"/);
    refused('role:admin role:member', /unexpected "role:member" at position 12 \(checks are joined with "and" or "or"\)/);
    refused('role:', /needs both a kind and a value/);
    refused('project_id:%(project_id)d', /a target field is written %\(name\)s/);
    refused('http://policy.example/check', /remote \(http:\) checks are not supported/);
    refused("'quoted'", /a quoted string is not a check/);
  });
});
