// Checking answers against the OpenAPI documents' response schemas.

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
