// A small JSON Schema (draft 4 subset) validator.
//
// Why not Ajv: OpenStack clients and Placement's own tests read the *text* of validation errors
// ("'bad_field' was unexpected", "Failed validating 'maxLength' in schema…"), which is the text of
// Python's jsonschema. This validator walks the schema keywords in the order they are written, the
// way python-jsonschema does, stops at the first error and words it the same way.
import { canonicalJson } from './canonical-json.js';
import { memo } from './memo.js';
import { pformat, pyRepr, pyStr } from './python-repr.js';
import { isUuidLike } from './uuid.js';

export { pyRepr };

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  minProperties?: number;
  maxProperties?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** `uuid` is checked; `date-time` only documents a response */
  format?: 'uuid' | 'date-time';
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  description?: string;
  /** responses only (documentation and wire types, scripts/wire-types.ts): the validator reads neither */
  const?: unknown;
  $ref?: string;
};

export interface SchemaError {
  message: string;
  keyword: string;
  /** python-style location of the (sub)schema holding the failing keyword, e.g. `['properties']['name']` */
  schemaPath: string;
  instancePath: string;
  /** the (sub)schema holding the failing keyword */
  schema: unknown;
  instance: unknown;
  /** for anyOf/oneOf: every error of every branch (paths relative to the branch) */
  context: SchemaError[];
  /** the instance path from the document's root, also for an error bestMatch took from a branch (python-jsonschema's absolute_path) */
  absoluteInstancePath?: string;
}

// jsonschema patterns are searched (not anchored) and are Unicode-aware.
const regex = memo((pattern: string) => new RegExp(pattern, 'u'), 1000);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function isType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const key = (k: string | number) => `[${typeof k === 'number' ? k : pyStr(k)}]`;

/**
 * Validate `instance`; returns the error python-jsonschema's `validate()` would raise, or null
 * when it conforms. Like python-jsonschema, every error is found (walking the schema's keywords
 * in the order they are written) and `best_match` picks one: the one highest up in the instance,
 * anyOf/oneOf only when nothing else is as high, and then the deepest of their branches' errors.
 */
export function validate(schema: JsonSchema, instance: unknown): SchemaError | null {
  const errors: Found[] = [];
  check(schema, instance, '', '', 0, errors);
  return errors.length ? bestMatch(errors) : null;
}

/** An error as found, with what best_match weighs: how deep in the instance. */
interface Found extends SchemaError {
  depth: number;
  context: Found[];
}

/** Past this many errors in one document the walk stops: a 1 MB body of mistakes is refused all the same. */
const MAX_ERRORS = 1000;

function check(schema: JsonSchema, inst: unknown, sp: string, ip: string, depth: number, out: Found[]): void {
  for (const [kw, arg] of Object.entries(schema)) {
    if (out.length >= MAX_ERRORS) return;
    checkKeyword(schema, kw, arg, inst, sp, ip, depth, out);
  }
}

/** python-jsonschema's relevance(): higher wins. */
function relevance(e: Found): [number, boolean, boolean] {
  return [-e.depth, e.keyword !== 'anyOf' && e.keyword !== 'oneOf', !matchesType(e.schema as JsonSchema, e.instance)];
}

function compare(a: Found, b: Found): number {
  const [x, y] = [relevance(a), relevance(b)];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! > y[i]! ? 1 : -1;
  return 0;
}

/** python-jsonschema's best_match over errors this validator found (a SchemaError's `context` included). */
export function bestMatch(errors: SchemaError[]): SchemaError {
  const found = errors as Found[];
  let best = found[0]!;
  for (const e of found) if (compare(e, best) > 0) best = e; // the first of the most relevant
  let absolute = best.instancePath;
  while (best.context.length) {
    const sorted = [...best.context].sort(compare); // stable: the first of the least relevant
    if (sorted.length >= 2 && compare(sorted[0]!, sorted[1]!) === 0) break;
    best = sorted[0]!;
    absolute += best.instancePath;
  }
  return { ...best, absoluteInstancePath: absolute };
}

function matchesType(schema: JsonSchema, instance: unknown): boolean {
  if (typeof schema !== 'object' || schema === null || schema.type === undefined) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.some((t) => isType(instance, t));
}

// biome-ignore lint/suspicious/noExplicitAny: a keyword's argument and the instance are any JSON; each branch checks the shape it needs
function checkKeyword(schema: JsonSchema, kw: string, arg: any, inst: any, sp: string, ip: string, depth: number, out: Found[]): void {
  const f = (message: string, context: Found[] = []) =>
    out.push({ keyword: kw, message, schemaPath: sp, instancePath: ip, schema, instance: inst, depth, context });
  const t = typeOf(inst);
  switch (kw) {
    case 'type': {
      const types: string[] = Array.isArray(arg) ? arg : [arg];
      if (!types.some((ty) => isType(inst, ty))) f(`${pyRepr(inst)} is not of type ${types.map(pyStr).join(', ')}`);
      return;
    }
    case 'properties':
      if (t !== 'object') return;
      for (const [name, sub] of Object.entries(arg as Record<string, JsonSchema>)) {
        if (Object.hasOwn(inst, name)) check(sub, inst[name], `${sp}['properties']${key(name)}`, ip + key(name), depth + 1, out);
      }
      return;
    case 'patternProperties':
      if (t !== 'object') return;
      for (const [pattern, sub] of Object.entries(arg as Record<string, JsonSchema>)) {
        for (const [name, value] of Object.entries(inst)) {
          if (regex(pattern).test(name)) check(sub, value, `${sp}['patternProperties']${key(pattern)}`, ip + key(name), depth + 1, out);
        }
      }
      return;
    case 'additionalProperties': {
      if (t !== 'object') return;
      const declared = schema.properties ?? {};
      const patterns = Object.keys(schema.patternProperties ?? {});
      const extras = Object.keys(inst).filter((k) => !Object.hasOwn(declared, k) && !patterns.some((p) => regex(p).test(k)));
      if (extras.length === 0) return;
      if (arg === false) {
        if (patterns.length > 0) {
          const verb = extras.length === 1 ? 'does' : 'do';
          // python-jsonschema sorts both lists in this message
          f(`${[...extras].sort().map(pyStr).join(', ')} ${verb} not match any of the regexes: ${[...patterns].sort().map(pyStr).join(', ')}`);
          return;
        }
        const verb = extras.length === 1 ? 'was' : 'were';
        f(`Additional properties are not allowed (${extras.map(pyStr).join(', ')} ${verb} unexpected)`);
        return;
      }
      if (typeof arg === 'object') for (const extra of extras) check(arg, inst[extra], `${sp}['additionalProperties']`, ip + key(extra), depth + 1, out);
      return;
    }
    case 'required':
      if (t !== 'object') return;
      for (const name of arg as string[]) if (!Object.hasOwn(inst, name)) f(`${pyStr(name)} is a required property`);
      return;
    case 'minProperties':
      if (t === 'object' && Object.keys(inst).length < arg) f(`${pyRepr(inst)} does not have enough properties`);
      return;
    case 'maxProperties':
      if (t === 'object' && Object.keys(inst).length > arg) f(`${pyRepr(inst)} has too many properties`);
      return;
    case 'items':
      if (t !== 'array') return;
      for (let i = 0; i < inst.length && out.length < MAX_ERRORS; i++) check(arg, inst[i], `${sp}['items']`, ip + key(i), depth + 1, out);
      return;
    case 'minItems':
      if (t === 'array' && inst.length < arg) f(`${pyRepr(inst)} is too short`);
      return;
    case 'maxItems':
      if (t === 'array' && inst.length > arg) f(`${pyRepr(inst)} is too long`);
      return;
    case 'uniqueItems':
      if (t === 'array' && arg) {
        // Canonical text per item (keys sorted) so duplicates are found in linear time.
        const seen = new Set<string>();
        for (const item of inst) {
          const canonical = canonicalJson(item);
          if (seen.has(canonical)) return void f(`${pyRepr(inst)} has non-unique elements`);
          seen.add(canonical);
        }
      }
      return;
    case 'minLength':
      if (t === 'string' && [...inst].length < arg) f(`${pyRepr(inst)} is too short`);
      return;
    case 'maxLength':
      if (t === 'string' && [...inst].length > arg) f(`${pyRepr(inst)} is too long`);
      return;
    case 'pattern':
      if (t === 'string' && !regex(arg).test(inst)) f(`${pyRepr(inst)} does not match ${pyStr(arg)}`);
      return;
    case 'format':
      if (t === 'string' && arg === 'uuid' && !isUuidLike(inst)) f(`${pyRepr(inst)} is not a ${pyStr(arg)}`);
      return;
    case 'minimum':
      if ((t === 'integer' || t === 'number') && inst < arg) f(`${pyRepr(inst)} is less than the minimum of ${pyRepr(arg)}`);
      return;
    case 'maximum':
      if ((t === 'integer' || t === 'number') && inst > arg) f(`${pyRepr(inst)} is greater than the maximum of ${pyRepr(arg)}`);
      return;
    case 'enum':
      if (!(arg as unknown[]).some((v) => deepEqual(v, inst))) f(`${pyRepr(inst)} is not one of ${pyRepr(arg)}`);
      return;
    case 'anyOf':
    case 'oneOf': {
      // Each branch is checked from scratch: its errors' paths start at the branch, as python-jsonschema's do.
      const branches = (arg as JsonSchema[]).map((sub, i) => {
        const errs: Found[] = [];
        check(sub, inst, `[${i}]`, '', 0, errs);
        return errs;
      });
      const matching = branches.filter((errs) => errs.length === 0).length;
      if (matching === 0) f(`${pyRepr(inst)} is not valid under any of the given schemas`, branches.flat());
      else if (kw === 'oneOf' && matching > 1) f(`${pyRepr(inst)} is valid under each of the given schemas`);
      return;
    }
    default:
      return;
  }
}

/**
 * The full text python-jsonschema gives for an error (str(ValidationError)), which Placement puts
 * after "JSON does not validate: ".
 */
export function describeSchemaError(err: SchemaError): string {
  // As python-jsonschema's ValidationError prints itself: pprint at width 72, indented by 4.
  const show = (v: unknown) => {
    const text = pformat(v, 72);
    // bounded, past anything a real request needs: a 1 MB body of mistakes need not come back whole
    return (text.length > 65536 ? `${text.slice(0, 65536)}...` : text)
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
  };
  return (
    `${err.message}\n\n` +
    `Failed validating ${pyStr(err.keyword)} in schema${err.schemaPath}:\n${show(err.schema)}\n\n` +
    `On instance${err.instancePath}:\n${show(err.instance)}`
  );
}
