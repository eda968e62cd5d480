// The check-string language of OpenStack policy files (oslo.policy), as operators write it:
//
//   role:admin                       the caller has the role (case-insensitive)
//   rule:admin_or_service_api        another rule of the same API
//   project_id:%(project_id)s        a field of the caller equals a field of the target
//   system_scope:all, is_admin:True  a field of the caller equals a literal
//   'member':%(role.name)s           a literal (quoted, True/False/None, a number) equals a target field
//   @  !                             always / never
//   and, or, not, ( )                `and` binds tighter than `or`; `not` applies to what follows
//   (the empty string)               always, as oslo.policy reads it
//
// Parsed once when allot starts — a mistake is refused then, with the position — and evaluated per
// request on plain objects. Matching follows oslo.policy: a target field the check names but the
// target lacks makes the check false; values are compared as Python prints them (True, None).
export type Check =
  | { kind: 'true' }
  | { kind: 'false' }
  | { kind: 'role'; match: Template }
  | { kind: 'rule'; name: string }
  /** `field:match`: the caller's `field` (a dotted path), or a literal, equals `match` */
  | { kind: 'generic'; field: string[]; literal: string | null; match: Template }
  | { kind: 'and'; checks: Check[] }
  | { kind: 'or'; checks: Check[] }
  | { kind: 'not'; check: Check };

/** A match value: literal text and `%(name)s` target fields, in order. */
export type Template = Array<string | { field: string }>;

export class CheckSyntaxError extends Error {}

interface Token {
  type: 'check' | 'and' | 'or' | 'not' | '(' | ')';
  text: string;
  /** character offset in the check string, for messages */
  at: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    let word = m[0];
    let at = m.index;
    while (word.startsWith('(')) {
      tokens.push({ type: '(', text: '(', at });
      word = word.slice(1);
      at++;
    }
    // Templates end in `)s`, so trailing `)` are always closing groups (as oslo.policy reads them).
    let closing = 0;
    while (word.endsWith(')')) {
      word = word.slice(0, -1);
      closing++;
    }
    if (word) {
      const lower = word.toLowerCase();
      tokens.push({ type: lower === 'and' || lower === 'or' || lower === 'not' ? lower : 'check', text: word, at });
    }
    for (let i = 0; i < closing; i++) tokens.push({ type: ')', text: ')', at: at + word.length + i });
  }
  return tokens;
}

/** Parse a check string; throws CheckSyntaxError saying what is wrong and where. */
export function parseCheck(text: string): Check {
  const tokens = tokenize(text);
  if (tokens.length === 0) return { kind: 'true' };
  let i = 0;
  const describe = (t: Token | undefined) => (t ? `"${t.text}" at position ${t.at + 1}` : 'the end');
  const fail = (message: string): never => {
    throw new CheckSyntaxError(message);
  };

  const parseOr = (): Check => {
    const checks = [parseAnd()];
    while (tokens[i]?.type === 'or') {
      i++;
      checks.push(parseAnd());
    }
    return checks.length === 1 ? checks[0]! : { kind: 'or', checks };
  };
  const parseAnd = (): Check => {
    const checks = [parseUnary()];
    while (tokens[i]?.type === 'and') {
      i++;
      checks.push(parseUnary());
    }
    return checks.length === 1 ? checks[0]! : { kind: 'and', checks };
  };
  const parseUnary = (): Check => {
    const t = tokens[i];
    if (t?.type === 'not') {
      i++;
      return { kind: 'not', check: parseUnary() };
    }
    if (t?.type === '(') {
      i++;
      const inner = parseOr();
      if (tokens[i]?.type !== ')') fail(`expected ")" to close the "(" at position ${t.at + 1}, found ${describe(tokens[i])}`);
      i++;
      return inner;
    }
    if (t?.type === 'check') {
      i++;
      return parseAtom(t);
    }
    return fail(`expected a check, found ${describe(t)}`);
  };

  const check = parseOr();
  if (i < tokens.length) fail(`unexpected ${describe(tokens[i])} (checks are joined with "and" or "or")`);
  return check;
}

function parseAtom(token: Token): Check {
  const text = token.text;
  const where = `at position ${token.at + 1}`;
  if (text === '@') return { kind: 'true' };
  if (text === '!') return { kind: 'false' };
  if (/^(['"]).*\1$/.test(text) && !text.includes(':')) throw new CheckSyntaxError(`a quoted string is not a check ${where}: ${text}`);
  const colon = text.indexOf(':');
  if (colon < 0) throw new CheckSyntaxError(`"${text}" ${where} is not a check (expected kind:value, "@" or "!")`);
  const kind = text.slice(0, colon);
  const value = text.slice(colon + 1);
  if (kind === '' || value === '') throw new CheckSyntaxError(`"${text}" ${where} needs both a kind and a value`);
  switch (kind) {
    case 'rule':
      return { kind: 'rule', name: value };
    case 'role':
      return { kind: 'role', match: parseTemplate(value, where) };
    case 'http':
    case 'https':
      throw new CheckSyntaxError(`"${text}" ${where}: remote (${kind}:) checks are not supported`);
    default:
      return { kind: 'generic', field: kind.split('.'), literal: literalOf(kind), match: parseTemplate(value, where) };
  }
}

/** A Python literal on the left of a generic check (`'member':…`, `True:…`, `42:…`), as its str(); else null. */
function literalOf(kind: string): string | null {
  const quoted = /^'(.*)'$|^"(.*)"$/.exec(kind);
  if (quoted) return quoted[1] ?? quoted[2] ?? '';
  if (kind === 'True' || kind === 'False' || kind === 'None') return kind;
  if (/^-?\d+$/.test(kind)) return String(Number(kind));
  return null;
}

function parseTemplate(value: string, where: string): Template {
  const parts: Template = [];
  let literal = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c !== '%') {
      literal += c;
      continue;
    }
    if (value[i + 1] === '%') {
      literal += '%';
      i++;
      continue;
    }
    const m = /^%\(([^)]+)\)s/.exec(value.slice(i));
    if (!m) throw new CheckSyntaxError(`"${value}" ${where}: a target field is written %(name)s`);
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ field: m[1]! });
    i += m[0].length - 1;
  }
  if (literal || parts.length === 0) parts.push(literal);
  return parts;
}

/** How Python's str() prints a value, which is what oslo.policy compares. */
export function pyStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  return String(value);
}

export interface CheckContext {
  /** what the operation is on; `%(name)s` reads its fields (flat: `node.owner` is one key) */
  target: Readonly<Record<string, unknown>>;
  /** the caller's policy values (user_id, project_id, roles, system_scope, …) */
  creds: Readonly<Record<string, unknown>>;
  /** a rule of the same API by name (undefined: no such rule, which is false) */
  rule(name: string): Check | undefined;
}

/** The template filled from the target, or null when it names a field the target lacks. */
function fill(template: Template, target: Readonly<Record<string, unknown>>): string | null {
  if (template.length === 1 && typeof template[0] === 'string') return template[0];
  let out = '';
  for (const part of template) {
    if (typeof part === 'string') out += part;
    else if (Object.hasOwn(target, part.field)) out += pyStr(target[part.field]);
    else return null;
  }
  return out;
}

/** Does `value` (following `path` into objects, any element of a list) print as `match`? */
function findIn(value: unknown, path: readonly string[], match: string): boolean {
  if (path.length === 0) return pyStr(value) === match;
  if (value === null || typeof value !== 'object' || !Object.hasOwn(value, path[0]!)) return false;
  const next = (value as Record<string, unknown>)[path[0]!];
  const rest = path.slice(1);
  return Array.isArray(next) ? next.some((v) => findIn(v, rest, match)) : findIn(next, rest, match);
}

export function evaluate(check: Check, ctx: CheckContext): boolean {
  switch (check.kind) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'role': {
      const role = fill(check.match, ctx.target);
      const roles = ctx.creds.roles;
      return role !== null && Array.isArray(roles) && roles.some((r) => String(r).toLowerCase() === role.toLowerCase());
    }
    case 'rule': {
      const rule = ctx.rule(check.name);
      return rule !== undefined && evaluate(rule, ctx);
    }
    case 'generic': {
      const match = fill(check.match, ctx.target);
      if (match === null) return false;
      return check.literal !== null ? check.literal === match : findIn(ctx.creds, check.field, match);
    }
    case 'and':
      return check.checks.every((c) => evaluate(c, ctx));
    case 'or':
      return check.checks.some((c) => evaluate(c, ctx));
    case 'not':
      return !evaluate(check.check, ctx);
  }
}

/** The rule names a check refers to (`rule:x`), for validation at load. */
export function referencedRules(check: Check): string[] {
  switch (check.kind) {
    case 'rule':
      return [check.name];
    case 'and':
    case 'or':
      return check.checks.flatMap(referencedRules);
    case 'not':
      return referencedRules(check.check);
    default:
      return [];
  }
}
