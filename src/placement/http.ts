// The Placement request pipeline, in the order Placement's own middleware runs it:
//   auth (401, except at `/`) → microversion (400/406) → route (404/405, `since` → 404)
//   → policy (403) → handler (accept 406, content-type 415/400, JSON schema 400) → response
// Every response carries the request id and, once negotiated, the microversion headers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AllotError } from '../core/errors.js';
import { type JsonSchema, describeSchemaError, isWellFormedJson, validate } from '../core/json-schema.js';
import { type MatchedRoute, QueryParams, appendVary, faultAsError } from '../server/http.js';
import { CODES, accepts, errorMedia, placementError, renderError } from './errors.js';
import { Microversion, byVersion } from '../core/microversion.js';
import { negotiate } from './microversion.js';

export interface Caller {
  userId: string;
  projectId: string;
  roles: string[];
}

/** A body already written as JSON text (a hot answer built as a string, not as objects). */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface PlacementResponse {
  status?: number;
  /** serialised with JSON.stringify, unless it is JsonText */
  body?: unknown;
  location?: string;
  /** ISO timestamp for `last-modified` (1.15+); defaults to now */
  lastModified?: string | null;
  /** extra response headers (e.g. `server-timing`) */
  headers?: Record<string, string>;
}

export interface Endpoint<C> {
  /** lowest microversion that has this endpoint; below it the path answers 404 (or `tooOld`) */
  since?: string;
  tooOld?: 404 | 405;
  /** policy rule name, e.g. `placement:resource_providers:list`; absent means public */
  policy?: string;
  handle: (req: PlacementRequest, ctx: C) => Promise<PlacementResponse>;
}

export class PlacementRequest {
  readonly query: QueryParams;

  constructor(
    readonly raw: FastifyRequest,
    readonly mv: Microversion,
    readonly caller: Caller | null,
  ) {
    this.query = new QueryParams(raw.url);
  }

  get method(): string {
    return this.raw.method;
  }

  param(name: string): string {
    return (this.raw.params as Record<string, string>)[name] ?? '';
  }

  /** An absolute URL on this server for a path, as Placement puts in `Location`. */
  absoluteUrl(path: string): string {
    return `${this.raw.protocol}://${this.raw.host}${path}`;
  }

  /** 406 unless the client accepts JSON (Placement checks this on reads). */
  requireJsonAccept(): void {
    const accept = this.raw.headers.accept;
    if (accept && !accepts(accept, 'application/json')) throw placementError(406, 'Only application/json is provided');
  }

  /** The JSON body, checked for content type, syntax and (per microversion) schema. */
  json<T>(schema: JsonSchema | Record<string, JsonSchema>): T {
    const body = this.raw.body as Buffer | undefined;
    const contentType = this.raw.headers['content-type'];
    if (!contentType) {
      if (body && body.length > 0) throw placementError(400, 'content-type header required');
      throw placementError(415, 'The media type None is not supported, use application/json');
    }
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    if (mediaType !== 'application/json') {
      throw placementError(415, `The media type ${contentType} is not supported, use application/json`);
    }
    let data: unknown;
    try {
      data = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
    } catch (err) {
      throw placementError(400, `Malformed JSON: ${(err as Error).message}`);
    }
    if (!isWellFormedJson(data)) throw placementError(400, 'Malformed JSON: strings must be valid Unicode (a lone surrogate escape is not)');
    const chosen = isVersionTable(schema) ? byVersion(this.mv, schema) : schema;
    let error;
    try {
      error = validate(chosen, data);
    } catch (err) {
      // Only absurdly deep nesting gets here (the call stack ran out).
      if (err instanceof RangeError) throw placementError(400, 'JSON does not validate: the document is nested too deeply');
      throw err;
    }
    if (error) throw placementError(400, `JSON does not validate: ${describeSchemaError(error)}`);
    return data as T;
  }

  /** Query parameters validated against a schema (one value per key, the last one wins). */
  queryObject<T>(schema: JsonSchema | Record<string, JsonSchema>): T {
    const chosen = isVersionTable(schema) ? byVersion(this.mv, schema) : schema;
    const object = this.query.toObject();
    const error = validate(chosen, object);
    if (error) throw placementError(400, `Invalid query string parameters: ${describeSchemaError(error)}`);
    return object as T;
  }
}

function isVersionTable(s: JsonSchema | Record<string, JsonSchema>): s is Record<string, JsonSchema> {
  return Object.keys(s).length > 0 && Object.keys(s).every((k) => /^\d+\.\d+$/.test(k));
}

/**
 * Placement's noauth2 mode: `x-auth-token: USER[:PROJECT]`; the user `admin` has the admin role;
 * `x-roles` (comma separated) overrides the roles as a real token's roles would.
 */
export function authenticate(headers: FastifyRequest['headers']): Caller | null {
  const token = headers['x-auth-token'];
  if (typeof token !== 'string' || token === '') return null;
  const [userId = '', projectId] = token.split(':', 2);
  const rolesHeader = headers['x-roles'];
  const roles =
    typeof rolesHeader === 'string' ? rolesHeader.split(',').map((r) => r.trim().toLowerCase()).filter(Boolean) : userId === 'admin' ? ['admin', 'member', 'reader'] : [];
  return { userId, projectId: projectId || userId, roles };
}

function authorize(caller: Caller, policy: string): void {
  // Placement's default (legacy) policy: every rule is `role:admin`.
  if (!caller.roles.includes('admin')) throw placementError(403, `Policy does not allow ${policy} to be performed.`);
}

/**
 * Serve one request: run the pipeline, write the response or the error. `route` is null when no
 * path matched; `failure` is an error Fastify met before routing (body too large, bad body).
 */
export async function servePlacement<C>(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: C,
  route: MatchedRoute<Endpoint<C>> | null,
  failure?: unknown,
): Promise<void> {
  let mv: Microversion | null = null;
  reply.header('x-openstack-request-id', req.id);
  try {
    const caller = authenticate(req.headers);
    if (!caller && route?.path !== '/') throw placementError(401, 'The request you have made requires authentication.');
    mv = negotiate(req.headers['openstack-api-version']);
    reply.header('openstack-api-version', `placement ${mv}`);
    appendVary(reply, 'openstack-api-version');
    if (failure) throw failure;
    if (!route) throw placementError(404, '');
    const { endpoint, allowed } = route;
    if (!endpoint) {
      reply.header('allow', allowed.join(', '));
      throw placementError(405, '');
    }
    if (endpoint.since && !mv.atLeast(endpoint.since)) {
      if (endpoint.tooOld === 405) reply.header('allow', allowed.filter((m) => m !== req.method).join(', '));
      throw placementError(endpoint.tooOld ?? 404, '');
    }
    if (endpoint.policy && caller) authorize(caller, endpoint.policy);
    const request = new PlacementRequest(req, mv, caller);
    const result = await endpoint.handle(request, ctx);
    writeResponse(reply, mv, req.method, result);
  } catch (err) {
    const allotError = toAllotError(err, req, reply);
    const rendered = renderError(allotError, { mv, requestId: req.id, media: errorMedia(req.headers.accept), method: req.method });
    reply.code(rendered.status).header('content-type', rendered.contentType).send(Buffer.from(rendered.body));
  }
}

function writeResponse(reply: FastifyReply, mv: Microversion, method: string, result: PlacementResponse): void {
  const status = result.status ?? (result.body === undefined ? 204 : 200);
  if (result.location) reply.header('location', result.location);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  // 1.15+: reads, and writes that return a representation, say when it last changed.
  if (mv.atLeast('1.15') && (result.lastModified !== undefined || (method === 'GET' && result.body !== undefined))) {
    reply.header('cache-control', 'no-cache');
    reply.header('last-modified', new Date(result.lastModified ?? Date.now()).toUTCString());
  }
  if (result.body !== undefined) {
    const text = result.body instanceof JsonText ? result.body.text : JSON.stringify(result.body);
    reply.code(status).header('content-type', 'application/json').send(Buffer.from(text));
  } else {
    reply.code(status).send();
  }
}

/** Anything thrown becomes an AllotError; unexpected ones are logged and become a 500. */
export function toAllotError(err: unknown, req: FastifyRequest, reply: FastifyReply): AllotError {
  if (err instanceof AllotError) return err;
  const fault = faultAsError(err, req, reply, CODES.undefined);
  if (fault) return fault;
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    // Fastify's own refusals: body too large, bad content-length and the like.
    const status = ([400, 413, 415].includes(e.statusCode) ? e.statusCode : 400) as AllotError['status'];
    return new AllotError(status, CODES.undefined, e.message ?? 'Bad request');
  }
  req.log.error({ err }, 'unexpected error');
  return new AllotError(500, CODES.undefined, 'An unexpected error occurred; the request id identifies it in the log.');
}
