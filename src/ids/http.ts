// The identifier API's request pipeline: route (404/405 with Allow) → Accept (406) → handler
// (content type 415, JSON syntax and schema 400, If-Match 412/400) → response with ETag/Location/
// Link. Every failure leaves as RFC 9457 problem+json via errors.ts, the API's one error renderer.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AllotError } from '../core/errors.js';
import { type JsonSchema, validate } from '../core/json-schema.js';
import { type MatchedRoute, QueryParams, faultAsError } from '../server/http.js';
import { accepts } from '../placement/errors.js';
import { idsError, invalidRequest, toProblem } from './errors.js';

export interface IdsResponse {
  status?: number;
  body?: unknown;
  /** a version for ETag */
  etag?: number;
  location?: string;
  headers?: Record<string, string>;
}

export interface IdsEndpoint<C> {
  handle: (req: IdsRequest, ctx: C) => Promise<IdsResponse>;
}

const JSON_TYPES = new Set(['application/json', 'application/merge-patch+json']);

/** `['ranges'][0]['lower']` (the validator's path) → `/ranges/0/lower` (a JSON Pointer, RFC 6901). */
export function toPointer(instancePath: string): string {
  const parts = [...instancePath.matchAll(/\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(\d+))\]/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
  return parts.map((p) => `/${p.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export class IdsRequest {
  readonly query: QueryParams;

  constructor(
    readonly raw: FastifyRequest,
    readonly basePath: string,
  ) {
    this.query = new QueryParams(raw.url);
  }

  param(name: string): string {
    return (this.raw.params as Record<string, string>)[name] ?? '';
  }

  header(name: string): string | undefined {
    const v = this.raw.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  /** The JSON body, checked for content type, syntax and schema. */
  json<T>(schema: JsonSchema): T {
    const body = this.raw.body as Buffer | undefined;
    const contentType = this.header('content-type');
    const mediaType = contentType?.split(';')[0]!.trim().toLowerCase();
    if (!mediaType || !JSON_TYPES.has(mediaType)) {
      throw idsError(415, 'ids.unsupported_media_type', `Send the body as application/json${contentType ? `, not ${contentType}` : ''}`);
    }
    let data: unknown;
    try {
      data = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
    } catch (err) {
      throw invalidRequest(`The body is not valid JSON: ${(err as Error).message}`);
    }
    const error = validate(schema, data);
    if (error) {
      const pointer = toPointer(error.instancePath);
      throw invalidRequest(`${pointer || 'body'}: ${error.message}`, { errors: [{ pointer: pointer || '/', detail: error.message }] });
    }
    return data as T;
  }

  /** Query parameters against a schema; unknown ones and repeated ones are refused. */
  queryObject<T>(schema: JsonSchema): T {
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

  /** The version an `If-Match` names: null when absent or `*`; 400 when it is not one of ours. */
  ifMatch(): number | null {
    const v = this.header('if-match');
    if (v === undefined || v.trim() === '*') return null;
    const m = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(v);
    if (!m) throw invalidRequest(`If-Match must be one ETag this API gave ("<version>"), got ${v}`);
    return Number(m[1]);
  }

  url(path: string): string {
    return `${this.basePath}${path}`;
  }
}

// --- pagination ---

export const PAGE_QUERY: Record<string, JsonSchema> = {
  limit: { type: 'string', pattern: '^([1-9]\\d{0,2}|1000)$', description: 'page size, 1–1000 (default 100)' },
  cursor: { type: 'string', maxLength: 512, description: 'next_cursor of the previous page' },
};

export function pageLimit(query: { limit?: string }): number {
  return query.limit === undefined ? 100 : Number(query.limit);
}

export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

export function decodeCursor<T>(text: string | undefined, check: (v: unknown) => v is T): T | null {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (check(v)) return v;
  } catch {
    /* fall through */
  }
  throw invalidRequest('cursor is not one this API gave out', { errors: [{ parameter: 'cursor', detail: 'invalid' }] });
}

/** A list page: `{items, next_cursor}` and a `Link: <…>; rel="next"` header. */
export function page(req: IdsRequest, items: unknown[], next: unknown | null): IdsResponse {
  const nextCursor = next === null ? null : encodeCursor(next);
  const headers: Record<string, string> = {};
  if (nextCursor) {
    const params = new URLSearchParams(req.query.pairs.filter(([k]) => k !== 'cursor'));
    params.set('cursor', nextCursor);
    const path = req.raw.url.split('?')[0];
    headers.link = `<${path}?${params}>; rel="next"`;
  }
  return { body: { items, next_cursor: nextCursor }, headers };
}

// --- serving ---

export async function serveIds<C>(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: C,
  basePath: string,
  route: MatchedRoute<IdsEndpoint<C>> | null,
  failure?: unknown,
): Promise<void> {
  reply.header('x-request-id', req.id);
  try {
    if (failure) throw failure;
    if (!route) throw idsError(404, 'ids.not_found', `No resource at ${req.url.split('?')[0]}`);
    if (!route.endpoint) {
      reply.header('allow', route.allowed.join(', '));
      throw idsError(405, 'ids.method_not_allowed', `${req.method} is not allowed here; allowed: ${route.allowed.join(', ')}`);
    }
    const accept = req.headers.accept;
    if (accept && !accepts(accept, 'application/json') && !accepts(accept, 'application/problem+json')) {
      throw idsError(406, 'ids.not_acceptable', 'This API answers application/json');
    }
    const result = await route.endpoint.handle(new IdsRequest(req, basePath), ctx);
    for (const [k, v] of Object.entries(result.headers ?? {})) reply.header(k, v);
    if (result.etag !== undefined) reply.header('etag', `"${result.etag}"`);
    if (result.location) reply.header('location', result.location);
    const status = result.status ?? (result.body === undefined ? 204 : 200);
    if (result.body === undefined) reply.code(status).send();
    else reply.code(status).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(result.body)));
  } catch (err) {
    const problem = toProblem(toAllotError(err, req, reply), req.id, req.url.split('?')[0] ?? '');
    reply.code(problem.status).header('content-type', 'application/problem+json').send(Buffer.from(JSON.stringify(problem)));
  }
}

function toAllotError(err: unknown, req: FastifyRequest, reply: FastifyReply): AllotError {
  if (err instanceof AllotError) return err;
  const fault = faultAsError(err, req, reply, 'ids.database_unavailable');
  if (fault) return fault.status === 507 ? idsError(507, 'ids.storage_full', fault.message) : fault;
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.statusCode === 413) return idsError(413, 'ids.body_too_large', e.message ?? 'Body too large');
    if (e.statusCode === 415) return idsError(415, 'ids.unsupported_media_type', e.message ?? 'Unsupported media type');
    return invalidRequest(e.message ?? 'Bad request');
  }
  req.log.error({ err }, 'unexpected error');
  return idsError(500, 'ids.internal_error', 'An unexpected error occurred; the request id identifies it in the log.');
}
