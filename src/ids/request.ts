// What identifier-API handlers get and give: the request with the API's own helpers (JSON bodies
// and query strings whose errors point at the field, If-Match), the response with its ETag, and
// cursor pagination.
import type { WireTypes } from '../client/ids-wire.js';
import { type JsonSchema, type SchemaError, validate } from '../core/json-schema.js';
import { jsonProblem } from '../http/body.js';
import { HTTP } from '../http/errors.js';
import type { OperationDoc } from '../http/openapi.js';
import { ApiRequest, type ApiResponse, type Endpoint as PipelineEndpoint } from '../http/pipeline.js';
import type { IdsContext } from './context.js';
import { type IfMatch, parseIfMatch } from './core/if-match.js';
import type { PoolScope } from './core/scope.js';
import { idsError, invalidRequest } from './errors.js';
import { type ResponseName, emptyQuery, schemaRef } from './schemas.js';

export interface IdsResponse extends ApiResponse {
  /** a version for ETag */
  etag?: number;
}

/** An endpoint of this API: its handler, policy and documentation in one declaration. */
export type Endpoint = PipelineEndpoint<IdsContext, IdsRequest, IdsResponse> & OperationDoc;

const ETAG = { ETag: "the resource's version, for If-Match" };

/**
 * An endpoint's answer, declared once: the response schema it names (schemas.ts RESPONSE_SCHEMAS,
 * the OpenAPI document's component) and its handler, whose body is that schema's generated wire
 * type — a body other than the schema it declares does not compile.
 */
export const answers = <N extends ResponseName>(
  name: N,
  handle: (req: IdsRequest, ctx: IdsContext) => Promise<IdsResponse & { body: WireTypes[N] }>,
): Pick<Endpoint, 'response' | 'handle'> => ({ response: schemaRef(name), handle });

/** An endpoint that answers a resource with its version as ETag (one that honours If-Match: IF_MATCH). */
export const WITH_ETAG = { responseHeaders: ETAG };

/** An endpoint that honours If-Match (a stale version is 412). */
export const IF_MATCH = {
  headers: [{ name: 'If-Match', description: 'the ETag read before; a different current version is 412' }],
  responseHeaders: ETAG,
};

const MERGE_PATCH = 'application/merge-patch+json';
const JSON_TYPES: readonly string[] = ['application/json', MERGE_PATCH];

/** `['ranges'][0]['lower']` (the validator's path) → `/ranges/0/lower` (a JSON Pointer, RFC 6901). */
function toPointer(instancePath: string): string {
  const parts = [...instancePath.matchAll(/\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(\d+))\]/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
  return parts.map((p) => `/${p.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * A size limit as a person reads it. python-jsonschema's wording (kept for Placement and Ironic,
 * whose clients read it) repeats the whole value: a 5 000-item batch read as 2 000 characters of
 * it and "is too long", never the limit.
 */
function sizeWording(error: SchemaError): string | null {
  const limit = (error.schema as Record<string, unknown>)[error.keyword];
  const v = error.instance;
  const size = Array.isArray(v) ? v.length : typeof v === 'string' ? [...v].length : v !== null && typeof v === 'object' ? Object.keys(v).length : 0;
  switch (error.keyword) {
    case 'maxItems':
      return `holds ${size} items, at most ${limit} allowed`;
    case 'minItems':
      return `holds ${size} items, at least ${limit} needed`;
    case 'maxLength':
      return `is ${size} characters long, at most ${limit} allowed`;
    case 'minLength':
      return `is ${size} characters long, at least ${limit} needed`;
    case 'maxProperties':
      return `has ${size} members, at most ${limit} allowed`;
    case 'minProperties':
      return `has ${size} members, at least ${limit} needed`;
    default:
      return null;
  }
}

export class IdsRequest extends ApiRequest {
  /**
   * The JSON body, checked for content type, syntax and the schema the endpoint declares (`body`).
   * `accepted`, if given, is a quick check that only ever accepts what the schema accepts (large
   * bodies); when it says no, the schema decides and words the error.
   */
  json<T>(accepted?: (data: unknown) => boolean): T {
    return this.parse<T>(this.plain('body'), accepted);
  }

  /**
   * A PATCH body: plain JSON against the declared `body`, or with `application/merge-patch+json`
   * a JSON merge patch (RFC 7396) against `mergeBody` — `merge` tells the service to merge, not replace.
   */
  patchJson<T>(): { patch: T; merge: boolean } {
    const merge = this.mediaType() === MERGE_PATCH;
    return { patch: this.parse<T>(this.plain(merge ? 'mergeBody' : 'body')), merge };
  }

  /** An action's body: none, or an empty JSON object. */
  noBody(): void {
    if (this.bodyBytes.length > 0) this.parse(emptyQuery);
  }

  /** This API has no microversions: every schema it declares is a plain one. */
  private plain(what: 'body' | 'mergeBody'): JsonSchema {
    return this.declared(what) as JsonSchema;
  }

  private parse<T>(schema: JsonSchema, accepted?: (data: unknown) => boolean): T {
    const contentType = this.header('content-type');
    const mediaType = this.mediaType();
    if (!mediaType || !JSON_TYPES.includes(mediaType)) {
      throw idsError(415, 'ids.unsupported_media_type', `Send the body as application/json${contentType ? `, not ${contentType}` : ''}`);
    }
    let data: unknown;
    try {
      data = this.jsonBody();
    } catch (err) {
      if ((err as { code?: string }).code === HTTP.badJson) throw invalidRequest(`The body is not valid JSON: ${(err as Error).message}`);
      throw err;
    }
    if (data === undefined) throw invalidRequest('The body is not valid JSON: it is empty');
    if (accepted?.(data)) return data as T;
    const error = validate(schema, data);
    if (error) {
      const pointer = toPointer(error.absoluteInstancePath ?? error.instancePath);
      const detail = sizeWording(error) ?? error.message;
      throw invalidRequest(`${pointer || 'body'}: ${detail}`, { errors: [{ pointer: pointer || '/', detail }] });
    }
    return data as T;
  }

  private mediaType(): string | undefined {
    return this.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  }

  /**
   * Query parameters against the endpoint's declared `query` (none declared: no parameters), or a
   * schema the handler refines from it; unknown ones and repeated ones are refused.
   */
  queryObject<T>(schema: JsonSchema = this.endpoint.query ?? emptyQuery): T {
    for (const k of this.query.keys()) {
      if (this.query.all(k).length > 1) throw invalidRequest(`query parameter ${k} may be given once`, { errors: [{ parameter: k, detail: 'repeated' }] });
    }
    const object = this.query.toObject();
    const error = validate(schema, object);
    if (error) {
      const name = toPointer(error.instancePath).slice(1) || Object.keys(object).find((k) => !(k in (schema.properties ?? {}))) || '';
      throw invalidRequest(`query: ${error.message}`, { errors: [{ parameter: name, detail: error.message }] });
    }
    return object as T;
  }

  /** The versions `If-Match` names (null: absent or `*`); 400 when it is not a list of entity tags. */
  ifMatch(): IfMatch {
    const v = this.header('if-match');
    const parsed = parseIfMatch(v);
    if (parsed === undefined) throw invalidRequest(`If-Match must be ETags this API gave ("<version>", comma-separated), got ${v}`);
    return parsed;
  }

  /** Whose pools this caller uses: all with `ids:all_projects`, else the shared ones and its project's. */
  poolScope(): PoolScope {
    return this.allows('ids:all_projects') ? { all: true } : { all: false, project: this.credentials?.projectId ?? null };
  }

  /** A path under this API's mount, for Location and links. */
  url(path: string): string {
    return `${this.prefix}${path}`;
  }
}

// --- pagination ---

export function pageLimit(query: { limit?: string }): number {
  return query.limit === undefined ? 100 : Number(query.limit);
}

/**
 * The cursors of one list: each names its list, so a cursor one list gave out is refused by
 * another, and `check` says what a position of this list looks like.
 */
export interface Cursor<T> {
  list: string;
  check: (v: unknown) => v is T;
}

export const cursorOf = <T>(list: string, check: (v: unknown) => v is T): Cursor<T> => ({ list, check });

const encodeCursor = <T>(cursor: Cursor<T>, value: T): string => Buffer.from(JSON.stringify([cursor.list, value])).toString('base64url');

/** The position a cursor of this list names (null: none given); 400 for any other text. */
export function decodeCursor<T>(text: string | undefined, cursor: Cursor<T>): T | null {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    // what no database can compare (a NUL in a string) is no position either
    if (Array.isArray(v) && v.length === 2 && v[0] === cursor.list && jsonProblem(v) === null && cursor.check(v[1])) return v[1];
  } catch {
    /* fall through */
  }
  throw invalidRequest('cursor is not one this list gave out', { errors: [{ parameter: 'cursor', detail: 'invalid' }] });
}

/** A list's page, `{items, next_cursor}` (what `answers` checks against the list's `…Page` schema), and a `Link: <…>; rel="next"` header. */
export function page<I, T>(req: IdsRequest, items: I[], cursor: Cursor<T>, next: T | null): IdsResponse & { body: { items: I[]; next_cursor: string | null } } {
  const nextCursor = next === null ? null : encodeCursor(cursor, next);
  const headers: Record<string, string> = {};
  if (nextCursor) {
    const params = new URLSearchParams(req.query.pairs.filter(([k]) => k !== 'cursor'));
    params.set('cursor', nextCursor);
    const path = req.raw.url.split('?')[0];
    headers.link = `<${path}?${params}>; rel="next"`;
  }
  return { body: { items, next_cursor: nextCursor }, headers };
}
