// A small JSON Schema (draft 4 subset) validator.
//
// Why not Ajv: OpenStack clients and Placement's own tests read the *text* of validation errors
// ("'bad_field' was unexpected", "Failed validating 'maxLength' in schema…"), which is the text of
// Python's jsonschema. This validator walks the schema keywords in the order they are written, the
// way python-jsonschema does, stops at the first error and words it the same way.

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
  format?: 'uuid' | 'uuid-hex';
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  not?: JsonSchema;
  description?: string;
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
}

const regexCache = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let re = regexCache.get(pattern);
  if (!re) {
    // jsonschema patterns are searched (not anchored) and are Unicode-aware.
    re = new RegExp(pattern, 'u');
    regexCache.set(pattern, re);
  }
  return re;
}

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

/**
 * Python's repr() of a JSON value, which is how jsonschema quotes instances in its messages.
 * Bounded in depth and length: an error about a 1 MB body must not become a 1 MB message.
 */
export function pyRepr(value: unknown, depth = 0): string {
  const out = reprInner(value, depth);
  return out.length > 2000 ? `${out.slice(0, 2000)}...` : out;
}

function reprInner(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (typeof value === 'string') return pyStr(value);
  if (depth > 20) return '...';
  if (Array.isArray(value)) return `[${value.slice(0, 100).map((v) => reprInner(v, depth + 1)).join(', ')}${value.length > 100 ? ', ...' : ''}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const inner = entries.slice(0, 100).map(([k, v]) => `${pyStr(k)}: ${reprInner(v, depth + 1)}`);
    return `{${inner.join(', ')}${entries.length > 100 ? ', ...' : ''}}`;
  }
  return String(value);
}

function pyFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  const s = String(n);
  return s.includes('.') || s.includes('e') ? s : `${s}.0`;
}

function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return quote + out + quote;
}

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

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
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

/** Validate `instance`; returns the first error, or null when it conforms. */
export function validate(schema: JsonSchema, instance: unknown): SchemaError | null {
  return check(schema, instance, '', '');
}

function fail(keyword: string, message: string, schemaPath: string, instancePath: string, schema: unknown, instance: unknown): SchemaError {
  return { keyword, message, schemaPath, instancePath, schema, instance };
}

function check(schema: JsonSchema, inst: unknown, sp: string, ip: string): SchemaError | null {
  for (const [kw, arg] of Object.entries(schema)) {
    const err = checkKeyword(schema, kw, arg, inst, sp, ip);
    if (err) return err;
  }
  return null;
}

function checkKeyword(schema: JsonSchema, kw: string, arg: any, inst: any, sp: string, ip: string): SchemaError | null {
  const f = (message: string) => fail(kw, message, sp, ip, schema, inst);
  const t = typeOf(inst);
  switch (kw) {
    case 'type': {
      const types: string[] = Array.isArray(arg) ? arg : [arg];
      if (!types.some((ty) => isType(inst, ty))) return f(`${pyRepr(inst)} is not of type ${types.map(pyStr).join(', ')}`);
      return null;
    }
    case 'properties':
      if (t !== 'object') return null;
      for (const [name, sub] of Object.entries(arg as Record<string, JsonSchema>)) {
        if (Object.prototype.hasOwnProperty.call(inst, name)) {
          const err = check(sub, inst[name], `${sp}['properties']${key(name)}`, ip + key(name));
          if (err) return err;
        }
      }
      return null;
    case 'patternProperties':
      if (t !== 'object') return null;
      for (const [pattern, sub] of Object.entries(arg as Record<string, JsonSchema>)) {
        for (const [name, value] of Object.entries(inst)) {
          if (regex(pattern).test(name)) {
            const err = check(sub, value, `${sp}['patternProperties']${key(pattern)}`, ip + key(name));
            if (err) return err;
          }
        }
      }
      return null;
    case 'additionalProperties': {
      if (t !== 'object') return null;
      const declared = schema.properties ?? {};
      const patterns = Object.keys(schema.patternProperties ?? {});
      const extras = Object.keys(inst).filter(
        (k) => !Object.prototype.hasOwnProperty.call(declared, k) && !patterns.some((p) => regex(p).test(k)),
      );
      if (extras.length === 0) return null;
      if (arg === false) {
        if (patterns.length > 0) {
          const verb = extras.length === 1 ? 'does' : 'do';
          // python-jsonschema sorts both lists in this message
          return f(`${[...extras].sort().map(pyStr).join(', ')} ${verb} not match any of the regexes: ${[...patterns].sort().map(pyStr).join(', ')}`);
        }
        const verb = extras.length === 1 ? 'was' : 'were';
        return f(`Additional properties are not allowed (${extras.map(pyStr).join(', ')} ${verb} unexpected)`);
      }
      if (typeof arg === 'object') {
        for (const extra of extras) {
          const err = check(arg, inst[extra], `${sp}['additionalProperties']`, ip + key(extra));
          if (err) return err;
        }
      }
      return null;
    }
    case 'required':
      if (t !== 'object') return null;
      for (const name of arg as string[]) {
        if (!Object.prototype.hasOwnProperty.call(inst, name)) return f(`${pyStr(name)} is a required property`);
      }
      return null;
    case 'minProperties':
      if (t === 'object' && Object.keys(inst).length < arg) return f(`${pyRepr(inst)} does not have enough properties`);
      return null;
    case 'maxProperties':
      if (t === 'object' && Object.keys(inst).length > arg) return f(`${pyRepr(inst)} has too many properties`);
      return null;
    case 'items':
      if (t !== 'array') return null;
      for (let i = 0; i < inst.length; i++) {
        const err = check(arg, inst[i], `${sp}['items']`, ip + key(i));
        if (err) return err;
      }
      return null;
    case 'minItems':
      if (t === 'array' && inst.length < arg) return f(`${pyRepr(inst)} is too short`);
      return null;
    case 'maxItems':
      if (t === 'array' && inst.length > arg) return f(`${pyRepr(inst)} is too long`);
      return null;
    case 'uniqueItems':
      if (t === 'array' && arg) {
        // Canonical text per item (keys sorted) so duplicates are found in linear time.
        const seen = new Set<string>();
        for (const item of inst) {
          const canonical = canonicalJson(item);
          if (seen.has(canonical)) return f(`${pyRepr(inst)} has non-unique elements`);
          seen.add(canonical);
        }
      }
      return null;
    case 'minLength':
      if (t === 'string' && [...inst].length < arg) return f(`${pyRepr(inst)} is too short`);
      return null;
    case 'maxLength':
      if (t === 'string' && [...inst].length > arg) return f(`${pyRepr(inst)} is too long`);
      return null;
    case 'pattern':
      if (t === 'string' && !regex(arg).test(inst)) return f(`${pyRepr(inst)} does not match ${pyStr(arg)}`);
      return null;
    case 'format':
      if (t === 'string' && (arg === 'uuid' || arg === 'uuid-hex') && !UUID_RE.test(inst)) return f(`${pyRepr(inst)} is not a ${pyStr(arg)}`);
      return null;
    case 'minimum':
      if (t !== 'integer' && t !== 'number') return null;
      if (schema.exclusiveMinimum ? inst <= arg : inst < arg) {
        return f(`${pyRepr(inst)} is less than ${schema.exclusiveMinimum ? 'or equal to ' : ''}the minimum of ${pyRepr(arg)}`);
      }
      return null;
    case 'maximum':
      if ((t === 'integer' || t === 'number') && inst > arg) return f(`${pyRepr(inst)} is greater than the maximum of ${pyRepr(arg)}`);
      return null;
    case 'enum':
      if (!(arg as unknown[]).some((v) => deepEqual(v, inst))) return f(`${pyRepr(inst)} is not one of ${pyRepr(arg)}`);
      return null;
    case 'anyOf':
      if (!(arg as JsonSchema[]).some((sub, i) => check(sub, inst, `${sp}['anyOf'][${i}]`, ip) === null)) {
        return f(`${pyRepr(inst)} is not valid under any of the given schemas`);
      }
      return null;
    case 'oneOf': {
      const matches = (arg as JsonSchema[]).filter((sub, i) => check(sub, inst, `${sp}['oneOf'][${i}]`, ip) === null).length;
      if (matches === 0) return f(`${pyRepr(inst)} is not valid under any of the given schemas`);
      if (matches > 1) return f(`${pyRepr(inst)} is valid under each of the given schemas`);
      return null;
    }
    case 'not':
      if (check(arg, inst, `${sp}['not']`, ip) === null) return f(`${pyRepr(inst)} should not be valid under ${pyRepr(arg)}`);
      return null;
    default:
      return null;
  }
}

/**
 * The full text python-jsonschema gives for an error (str(ValidationError)), which Placement puts
 * after "JSON does not validate: ".
 */
export function describeSchemaError(err: SchemaError): string {
  const indent = (s: string) => s.split('\n').map((l) => `    ${l}`).join('\n');
  return (
    `${err.message}\n\n` +
    `Failed validating ${pyStr(err.keyword)} in schema${err.schemaPath}:\n${indent(pyRepr(err.schema))}\n\n` +
    `On instance${err.instancePath}:\n${indent(pyRepr(err.instance))}`
  );
}

/**
 * True when every string (keys included) in a parsed JSON document is well-formed Unicode.
 * JSON may escape lone surrogates ("\udcff"); such text cannot be stored faithfully as UTF-8, so
 * it is refused rather than silently turned into U+FFFD. Iterative, so any depth is safe.
 */
export function isWellFormedJson(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (!k.isWellFormed()) return false;
        stack.push(item);
      }
    }
  }
  return true;
}
