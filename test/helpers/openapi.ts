// Checking answers against the OpenAPI documents' response schemas.
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * Check answers against an API's response schemas (`schemas`: name → schema), members they do not
 * document refused; `checked` names the schemas met so far.
 */
export function wireChecker<N extends string>(schemas: Record<N, unknown>) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const components = { schemas: documentedOnly(schemas) };
  const validators = new Map<N, ReturnType<Ajv2020['compile']>>();
  const checked = new Set<N>();
  const check = (name: N, at: string, body: unknown) => {
    let validate = validators.get(name);
    if (!validate) validators.set(name, (validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components })));
    assert.ok(validate(body), `${name} at ${at}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`);
    checked.add(name);
  };
  return { check, checked };
}

/**
 * A response schema that refuses members it does not document: every object schema with
 * `properties` and no `additionalProperties` of its own gets `additionalProperties: false`.
 */
export function documentedOnly(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(documentedOnly);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, k === 'properties' ? documentedMembers(v) : documentedOnly(v)]),
  );
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}
const documentedMembers = (properties: object) => Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, documentedOnly(v)]));
