// The wire types of the identifier API, Placement and bare metal, written from their JSON schemas
// (the WIRE_TYPES of src/ids/schemas.ts, src/placement/schemas.ts and src/baremetal/schemas.ts):
// the same objects validate requests, describe them in the OpenAPI documents, and — through the
// files this writes — type the server's views and the typed client. So a body's shape is written
// once. `npx tsx scripts/wire-types.ts` rewrites src/client/ids-wire.ts, placement-wire.ts and
// baremetal-wire.ts; test/ids/wire-types.test.ts, test/placement/wire-types.test.ts and
// test/baremetal/wire-types.test.ts fail when a file is not what the schemas say.
//
// The schemas use a small subset of JSON Schema, and that subset is what is translated: type
// (one or several), const, enum, anyOf/oneOf (a union), properties with required (the rest
// optional), additionalProperties/patternProperties (an index signature), items, $ref to a
// component, description (a doc comment). A schema that is itself one of the named wire types is
// written as its name; one that shares a named type's `properties` object with fewer required
// (bare metal's selections: `fields=`) as `Partial<Name> & Pick<Name, …required>`; an anyOf whose
// branches only constrain a typed schema (a trait: a pattern or a known name) as that type. A table of schemas by microversion (Placement's request bodies) is the
// union of its entries: a body some microversion accepts.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WIRE_TYPES as BAREMETAL_WIRE_TYPES } from '../src/baremetal/schemas.js';
import { WIRE_TYPES as IDS_WIRE_TYPES } from '../src/ids/schemas.js';
import { WIRE_TYPES as PLACEMENT_WIRE_TYPES } from '../src/placement/schemas.js';

interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  items?: Schema;
  $ref?: string;
  description?: string;
}

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each API's generated file: where it goes, the table it is written from, and what it holds. */
// Each file ends with `WireTypes`, every type by its schema's name, by which an endpoint that
// names its response schema has its answer typed (each API's request.ts `answers`).
export const WIRE_FILES = {
  ids: {
    file: path.join(ROOT, 'src', 'client', 'ids-wire.ts'),
    types: IDS_WIRE_TYPES,
    header: ['from src/ids/schemas.ts (WIRE_TYPES): do not edit. The', 'identifier API’s request and response bodies, as its JSON schemas define them.'],
  },
  placement: {
    file: path.join(ROOT, 'src', 'client', 'placement-wire.ts'),
    types: PLACEMENT_WIRE_TYPES,
    header: [
      'from src/placement/schemas.ts (WIRE_TYPES): do not edit.',
      'Placement’s request and response bodies, as its JSON schemas define them: a request body is',
      'what some microversion accepts, a member of an answer that only some microversions write is',
      'optional (its comment says from which).',
    ],
  },
  baremetal: {
    file: path.join(ROOT, 'src', 'client', 'baremetal-wire.ts'),
    types: BAREMETAL_WIRE_TYPES,
    header: [
      'from src/baremetal/schemas.ts (WIRE_TYPES): do not edit.',
      'The bare-metal (Ironic) request bodies the client sends and the answers, as its JSON schemas',
      'define them: a member only some microversions write is optional (its comment says from which);',
      'a `…Selection` is what `fields=` or a list without detail shows (every member optional but links).',
    ],
  },
} satisfies Record<string, { file: string; types: Record<string, Schema | Record<string, Schema>>; header: string[] }>;
export type WireApi = keyof typeof WIRE_FILES;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const literal = (v: unknown) => JSON.stringify(v);
const union = (parts: string[]) => [...new Set(parts)].join(' | ');
const doc = (text: string | undefined, indent: string) => (text ? `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n` : '');

/** The TypeScript type of `schema`; `names` gives the named wire types by schema object (and by their `properties` object). */
function typeOf(schema: Schema, names: Map<object, string>, indent: string, self?: object): string {
  const named = names.get(schema);
  if (named && schema !== self) return named;
  if (schema.$ref) return schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1);
  if ('const' in schema) return literal(schema.const);
  if (schema.enum) return union(schema.enum.map(literal));
  // a named schema with another named type's members: a selection of it
  const partOf = schema === self && schema.properties ? names.get(schema.properties) : undefined;
  if (partOf && partOf !== named) return `Partial<${partOf}> & Pick<${partOf}, ${union((schema.required ?? []).map(literal)) || 'never'}>`;
  const branches = schema.oneOf ?? schema.anyOf;
  const onlyConstrains = schema.type !== undefined && branches?.every((b) => b.type === undefined && !b.$ref && !b.properties);
  if (branches && !onlyConstrains) return union(branches.map((b) => typeOf(b, names, indent)));
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length === 0) return schema.properties ? objectType(schema, names, indent) : 'unknown';
  return union(
    types.map((t) => {
      switch (t) {
        case 'string':
          return 'string';
        case 'integer':
        case 'number':
          return 'number';
        case 'boolean':
          return 'boolean';
        case 'null':
          return 'null';
        case 'array':
          return `Array<${schema.items ? typeOf(schema.items, names, indent) : 'unknown'}>`;
        case 'object':
          return objectType(schema, names, indent);
        default:
          throw new Error(`wire types: no TypeScript for type ${t}`);
      }
    }),
  );
}

function objectType(schema: Schema, names: Map<object, string>, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const members = Object.entries(schema.properties ?? {}).map(([key, s]) => {
    const name = IDENTIFIER.test(key) ? key : literal(key);
    // a member of a named type: that type's own comment says what it is
    return `${doc(names.has(s) ? undefined : s.description, inner)}${inner}${name}${required.has(key) ? '' : '?'}: ${typeOf(s, names, inner)};`;
  });
  const open = [...Object.values(schema.patternProperties ?? {}), ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : [])];
  const values = union(open.map((s) => typeOf(s, names, inner)));
  if (!schema.properties) return `Record<string, ${open.length ? values : 'unknown'}>`;
  if (open.length) members.push(`${inner}[key: string]: ${values};`);
  return members.length ? `{\n${members.join('\n')}\n${indent}}` : 'Record<string, never>';
}

/** A table of schemas keyed by microversion (`{"1.0": …, "1.14": …}`), not a schema. */
const isVersionTable = (s: object): s is Record<string, Schema> => Object.keys(s).length > 0 && Object.keys(s).every((k) => /^\d+\.\d+$/.test(k));

/** The text of an API's file: one exported type per entry of its WIRE_TYPES, in its order, as Biome formats it. */
export function wireTypes(api: WireApi): string {
  return execFileSync(path.join(ROOT, 'node_modules', '.bin', 'biome'), ['format', `--stdin-file-path=${WIRE_FILES[api].file}`], {
    input: unformatted(api),
    encoding: 'utf8',
  });
}

function unformatted(api: WireApi): string {
  const { types, header } = WIRE_FILES[api];
  const entries = Object.entries(types) as Array<[string, Schema | Record<string, Schema>]>;
  const names = new Map<object, string>(entries.map(([name, s]) => [s, name]));
  // a named object type's members, by their object: another schema with the same is a selection of it
  for (const [name, s] of entries) if (!isVersionTable(s) && s.properties && !names.has(s.properties)) names.set(s.properties, name);
  const decls = entries.map(([name, s]) => {
    if (!isVersionTable(s)) return `${doc(s.description, '')}export type ${name} = ${typeOf(s, names, '', s)};`;
    const versions = Object.keys(s);
    return `${doc(`by microversion: ${versions.join(', ')}`, '')}export type ${name} = ${union(versions.map((v) => typeOf(s[v]!, names, '')))};`;
  });
  decls.push(`/** Every type above by its schema's name. */\nexport interface WireTypes {\n${entries.map(([name]) => `  ${name}: ${name};`).join('\n')}\n}`);
  const [first, ...rest] = header;
  return [`// Generated by scripts/wire-types.ts ${first}`, ...rest.map((line) => `// ${line}`), '', ...decls.flatMap((d) => [d, ''])].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const api of Object.keys(WIRE_FILES) as WireApi[]) {
    writeFileSync(WIRE_FILES[api].file, wireTypes(api));
    console.log(`wrote ${path.relative(process.cwd(), WIRE_FILES[api].file)}`);
  }
}
