// The query parameters of Ironic's endpoints, declared once on each endpoint (`query`): the OpenAPI
// document shows them and the handler reads exactly them (IronicRequest.queryArgs: an undeclared
// one is Ironic's 400, one newer than the request's version its 406).
import type { JsonSchema } from '../../core/json-schema.js';
import type { IronicQuery, ParamSince } from '../request.js';

export const text = { type: 'string' } as const satisfies JsonSchema;
export const flag = { type: 'boolean' } as const satisfies JsonSchema;

/** A parameter with the version that brought it (`named`: Ironic's 406 names that version). */
export interface Versioned<S extends JsonSchema = JsonSchema> extends ParamSince {
  schema: S;
}
export type Param = JsonSchema | Versioned;

export const since = <S extends JsonSchema>(version: string, schema: S, named?: 'named'): Versioned<S> => ({
  schema,
  since: version,
  ...(named ? { named: true } : {}),
});

/** What a declared filter reads as: a boolean for a flag, else the text the request gave. */
type FilterValue<P> = (P extends Versioned<infer S> ? S : P) extends { type: 'boolean' } ? boolean : string;
/** A list's filters, as `listFilters` hands them on: each one its declaration names, typed by its schema. */
export type Filters<P> = { [K in keyof P]?: FilterValue<P[K]> };

const isVersioned = (p: Param): p is Versioned => 'schema' in p;

/** An endpoint's query parameters, in the order the document lists them. */
export function ironicQuery(params: Record<string, Param>): IronicQuery {
  const properties: Record<string, JsonSchema> = {};
  const versions: Record<string, ParamSince> = {};
  for (const [name, p] of Object.entries(params)) {
    if (!isVersioned(p)) {
      properties[name] = p;
      continue;
    }
    const { schema, ...version } = p;
    properties[name] = schema;
    versions[name] = version;
  }
  return { type: 'object', properties, versions };
}

/** A list's paging and sorting (listing.ts reads them). */
export const PAGING: Record<string, JsonSchema> = {
  limit: { type: 'integer' },
  marker: text,
  sort_key: text,
  sort_dir: { type: 'string', enum: ['asc', 'desc'] },
};

/** `fields`: since 1.8 (a bare 406 before), on the resources older than that. */
export const FIELDS_SINCE_1_8 = since('1.8', text);

/**
 * A list's query: paging and sorting, `fields` (`fields`: its declaration where it has a version),
 * then its own filters, and `detail` where the list takes it.
 */
export const listQuery = (filters: Record<string, Param>, fields: Param = text): IronicQuery => ironicQuery({ ...PAGING, fields, ...filters });

/** The same list at …/detail: every field, so neither `fields` nor `detail`. */
export const detailQuery = (filters: Record<string, Param>): IronicQuery => ironicQuery({ ...PAGING, ...filters });

/** A single resource's query: the fields to show. */
export const showQuery = (fields: Param = text): IronicQuery => ironicQuery({ fields });
