// The query parameters of Ironic's endpoints, declared once on each endpoint (`query`): the OpenAPI
// document shows them and the handler reads exactly them (IronicRequest.queryArgs: an undeclared
// one is Ironic's 400, one newer than the request's version its 406).
import type { JsonSchema } from '../../core/json-schema.js';
import type { Compare } from '../core/paging.js';
import type { ColumnFilter, IronicQuery, ParamSince } from '../request.js';

export const text = { type: 'string' } as const satisfies JsonSchema;
export const flag = { type: 'boolean' } as const satisfies JsonSchema;

/** A parameter with the version that brought it (`named`: Ironic's 406 names that version). */
export interface Versioned<S extends JsonSchema = JsonSchema> extends ParamSince {
  schema: S;
}
/** A list filter that is a comparison with one column of the listed table: the store applies it as declared. */
export interface Column<S extends JsonSchema = JsonSchema> extends Partial<ParamSince> {
  schema: S;
  filter: ColumnFilter;
}
export type Param = JsonSchema | Versioned | Column;

export const since = <S extends JsonSchema>(version: string, schema: S, named?: 'named'): Versioned<S> => ({
  schema,
  since: version,
  ...(named ? { named: true } : {}),
});

/**
 * A list filter on the column `column` of the listed table (`C`: the table's columns, so a column
 * it lacks does not compile), declared with its parameter (`param`: its schema, or `since(…)`):
 * this one declaration is the query parameter the document shows and the request reads, and what
 * the store compares (core/paging.ts `Compare`; a flag's default `flag`, else `equals`).
 * `parse`: the request's text → the value compared, refusing (400) what is malformed.
 */
export const columnOf =
  <C extends string>() =>
  <S extends JsonSchema>(column: C, param: S | Versioned<S>, compare?: Compare, parse?: (raw: string) => string): Column<S> => {
    const { schema, ...version } = isVersioned(param) ? param : { schema: param };
    const filter: ColumnFilter = { column, compare: compare ?? (schema.type === 'boolean' ? 'flag' : 'equals'), ...(parse ? { parse } : {}) };
    return { schema, ...version, filter };
  };

function isVersioned<S extends JsonSchema>(p: S | Versioned<S>): p is Versioned<S>;
function isVersioned(p: Param): p is Versioned | Column;
function isVersioned(p: Param): boolean {
  return 'schema' in p;
}

/** An endpoint's query parameters, in the order the document lists them. */
export function ironicQuery(params: Record<string, Param>): IronicQuery {
  const properties: Record<string, JsonSchema> = {};
  const versions: Record<string, ParamSince> = {};
  const columns: Record<string, ColumnFilter> = {};
  for (const [name, p] of Object.entries(params)) {
    if (!isVersioned(p)) {
      properties[name] = p;
      continue;
    }
    properties[name] = p.schema;
    if (p.since !== undefined) versions[name] = { since: p.since, ...(p.named ? { named: true } : {}) };
    if ('filter' in p) columns[name] = p.filter;
  }
  return { type: 'object', properties, versions, columns };
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
