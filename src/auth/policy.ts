// The one policy engine of the three APIs: OpenStack's model (oslo.policy) of named rules written
// in check strings (check-string.ts), with defaults in code per API (rules/), an operator's
// policy file over them (policy-file.ts), and the two switches every OpenStack service has:
//
//   enforce new defaults (on)   off: a rule that changed its default also allows what its
//                               deprecated (legacy) check string allowed — unless the operator
//                               overrode the rule, which then stands as written
//   enforce scope (on)          a rule names the token scopes it is for (system, domain,
//                               project); a token of another scope is refused before the check
//
// Everything is parsed and cross-checked when allot starts (a rule referring to a rule that does
// not exist, a cycle of rules: refused with the rule's name); a request only evaluates.
import type { Credentials } from './credentials.js';
import { type Check, CheckSyntaxError, evaluate, parseCheck, referencedRules } from './check-string.js';

export type ScopeType = 'system' | 'domain' | 'project';

export interface RuleDefault {
  name: string;
  /** the current default check string */
  check: string;
  description: string;
  /** token scopes the rule is for; absent: any */
  scopeTypes?: readonly ScopeType[];
  /** the check string before the current defaults (OR-ed in with enforce-new-defaults off) */
  deprecated?: string;
}

export interface PolicyOptions {
  enforceNewDefaults: boolean;
  enforceScope: boolean;
  /** rule name → check string, from the operator's policy file */
  overrides?: Readonly<Record<string, string>>;
}

export class PolicyError extends Error {}

interface CompiledRule {
  check: Check;
  scopeTypes: readonly ScopeType[] | null;
}

export type Decision = 'allow' | 'deny' | 'wrong_scope' | 'unknown_rule';

/** The rules of one API, compiled. */
class RuleSet {
  constructor(readonly rules: Map<string, CompiledRule>) {}
  readonly lookup = (name: string): Check | undefined => this.rules.get(name)?.check;
}

function compile(rule: string, text: string): Check {
  try {
    return parseCheck(text);
  } catch (err) {
    if (err instanceof CheckSyntaxError) throw new PolicyError(`policy rule "${rule}": ${err.message} (in ${JSON.stringify(text)})`);
    throw err;
  }
}

export class PolicyEngine {
  private readonly sets = new Map<string, RuleSet>();
  /** policy values per credentials object: a cached token's are built once */
  private readonly values = new WeakMap<Credentials, Record<string, unknown>>();

  /**
   * `defaults`: API name → its rules. Overrides are placed by name: `placement:…` rules in
   * placement, `baremetal:…` in baremetal, `ids:…` in ids; a name without an API prefix (a base
   * rule such as `admin_api`) in every API that has it. A name no API has is refused — unless a
   * rule refers to it (`rule:my_admins`): then it is the operator's own helper rule.
   */
  constructor(
    defaults: Readonly<Record<string, readonly RuleDefault[]>>,
    readonly options: PolicyOptions,
  ) {
    const overrides = Object.entries(options.overrides ?? {}).map(([name, text]) => ({ name, text, check: compile(name, text) }));
    const apis = Object.keys(defaults);
    const apiOf = (name: string) => apis.find((api) => name.startsWith(`${api}:`)) ?? null;
    const known = new Set(Object.values(defaults).flatMap((rules) => rules.map((r) => r.name)));
    const referenced = new Set(
      [...overrides.map((o) => o.check), ...Object.values(defaults).flatMap((rules) => rules.map((r) => compile(r.name, r.check)))].flatMap(referencedRules),
    );
    for (const o of overrides) {
      if (known.has(o.name) || referenced.has(o.name)) {
        const prefix = o.name.split(':')[0]!;
        if (o.name.includes(':') && apiOf(o.name) === null)
          throw new PolicyError(
            `policy rule "${o.name}": no API is called "${prefix}" (rules start with ${apis.map((a) => `${a}:`).join(', ')} or have no prefix)`,
          );
        continue;
      }
      throw new PolicyError(`policy rule "${o.name}" is not a rule of ${apis.join(', ')} and no rule refers to it (a misspelt name?)`);
    }

    for (const api of apis) {
      const rules = new Map<string, CompiledRule>();
      const overridden = new Map(
        overrides.filter((o) => apiOf(o.name) === api || (apiOf(o.name) === null && !o.name.includes(':'))).map((o) => [o.name, o.check]),
      );
      for (const d of defaults[api]!) {
        let check = overridden.get(d.name);
        if (!check) {
          check = compile(d.name, d.check);
          if (!options.enforceNewDefaults && d.deprecated !== undefined && d.deprecated !== d.check)
            check = { kind: 'or', checks: [check, compile(d.name, d.deprecated)] };
        }
        rules.set(d.name, { check, scopeTypes: d.scopeTypes ?? null });
      }
      // The operator's helper rules (and unprefixed overrides of rules this API does not have).
      for (const [name, check] of overridden) if (!rules.has(name)) rules.set(name, { check, scopeTypes: null });
      checkReferences(api, rules);
      this.sets.set(api, new RuleSet(rules));
    }
  }

  /** Is the caller allowed `rule` on `target`? The target defaults to the caller's own values. */
  decide(api: string, rule: string, target: Readonly<Record<string, unknown>>, credentials: Credentials): Decision {
    const set = this.sets.get(api);
    const compiled = set?.rules.get(rule);
    if (!set || !compiled) return 'unknown_rule';
    if (this.options.enforceScope && compiled.scopeTypes && !compiled.scopeTypes.includes(scopeOf(credentials))) return 'wrong_scope';
    const creds = this.policyValues(credentials);
    // As OpenStack services do: what the operation does not name is the caller's own (project_id, user_id).
    const effective = Object.keys(target).length === 0 ? creds : { ...creds, ...target };
    return evaluate(compiled.check, { target: effective, creds, rule: set.lookup }) ? 'allow' : 'deny';
  }

  /** The rule names an API has (for checks that every route names a real rule). */
  ruleNames(api: string): string[] {
    return [...(this.sets.get(api)?.rules.keys() ?? [])];
  }

  /** The caller as check strings see it (oslo.context's policy values, plus is_admin). */
  policyValues(c: Credentials): Record<string, unknown> {
    let v = this.values.get(c);
    if (!v) {
      v = {
        user_id: c.userId,
        user_name: c.userName,
        user_domain_id: c.userDomainId,
        project_id: c.projectId,
        project_name: c.projectName,
        project_domain_id: c.projectDomainId,
        domain_id: c.domainId,
        system_scope: c.systemScope,
        roles: c.roles,
        is_admin_project: c.isAdminProject,
        // Nova's and Ironic's contexts call an administrator is_admin; with Keystone's role model that is role:admin.
        is_admin: c.roles.includes('admin'),
      };
      if (c.systemScope) v.system = c.systemScope;
      this.values.set(c, v);
    }
    return v;
  }
}

/** The scope of a token: system, domain or (anything else) project. */
export function scopeOf(c: Credentials): ScopeType {
  if (c.systemScope) return 'system';
  if (c.domainId) return 'domain';
  return 'project';
}

/** Every `rule:` reference resolves within the API, and no rule reaches itself. */
function checkReferences(api: string, rules: Map<string, CompiledRule>): void {
  for (const [name, { check }] of rules) {
    for (const ref of referencedRules(check)) {
      if (!rules.has(ref)) throw new PolicyError(`policy rule "${name}" refers to rule:${ref}, which ${api} does not have`);
    }
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting')
      throw new PolicyError(`policy rules refer to each other in a cycle: ${[...path.slice(path.indexOf(name)), name].join(' → ')}`);
    state.set(name, 'visiting');
    for (const ref of referencedRules(rules.get(name)!.check)) visit(ref, [...path, name]);
    state.set(name, 'done');
  };
  for (const name of rules.keys()) visit(name, []);
}
