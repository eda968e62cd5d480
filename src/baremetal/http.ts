// The bare-metal request pipeline, in the order Ironic's own middleware runs it:
//   routing (404) → version negotiation (406, only under /v1) → method (405)
//   → endpoint version gate (404/405 "The API version does not allow …") → handler → response.
// Every response carries the request id; /v1 responses carry the min/max/used version headers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AllotError } from '../core/errors.js';
import { type JsonSchema, validate, pyRepr } from '../core/json-schema.js';
import type { Microversion } from '../core/microversion.js';
import { type MatchedRoute, QueryParams, faultAsError } from '../server/http.js';
import { badRequest, frameworkError, ironicError, renderError, CODES } from './errors.js';
import { negotiate, versionRangeHeaders } from './microversion.js';

export interface IronicResponse {
  status?: number;
  body?: unknown;
  /** absolute URL for the Location header */
  location?: string;
}

export interface Endpoint<C> {
  /** lowest microversion that has this endpoint */
  since?: string;
  /** what an older version gets: status and framework description (default 404, no description) */
  tooOld?: { status: 404 | 405; description: string };
  /** the root document (`/`) is served without version negotiation */
  unversioned?: boolean;
  handle: (req: IronicRequest, ctx: C) => Promise<IronicResponse>;
}

export class IronicRequest {
  readonly query: QueryParams;

  constructor(
    readonly raw: FastifyRequest,
    readonly mv: Microversion,
    /** the API's URL prefix ('' on a dedicated port, '/baremetal' on the main one) */
    readonly prefix: string,
  ) {
    this.query = new QueryParams(raw.url);
  }

  get method(): string {
    return this.raw.method;
  }

  param(name: string): string {
    return (this.raw.params as Record<string, string>)[name] ?? '';
  }

  /** The API's base URL as the client reached it: scheme, host and prefix. */
  get baseUrl(): string {
    return `${this.raw.protocol}://${this.raw.host}${this.prefix}`;
  }

  /**
   * Query parameters, one value each. Unknown names are a 400 "Unexpected arguments: …" and a
   * repeated one "Expected string for …", as Ironic answers.
   */
  queryArgs(allowed: readonly string[]): Record<string, string> {
    const unknown = this.query.keys().filter((k) => !allowed.includes(k));
    if (unknown.length) throw badRequest(`Unexpected arguments: ${unknown.join(', ')}`);
    const out: Record<string, string> = {};
    for (const key of this.query.keys()) {
      const values = this.query.all(key);
      if (values.length > 1) throw badRequest(`Expected string for ${key}: ${pyRepr(values)}`);
      out[key] = values[0]!;
    }
    return out;
  }

  /** The raw JSON body (any JSON value), or undefined when there is none. */
  jsonBody(): unknown {
    const body = this.raw.body as Buffer | undefined;
    const contentType = this.raw.headers['content-type'];
    if (contentType) {
      const media = contentType.split(';')[0]!.trim().toLowerCase();
      if (media !== 'application/json' && !media.endsWith('+json')) {
        throw frameworkError(415, `The request media type ${media} is not supported; use application/json.`);
      }
    }
    if (!body || body.length === 0) return undefined;
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      throw badRequest('The request body is not valid UTF-8.');
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw badRequest(`Malformed JSON in the request body: ${(err as Error).message}`);
    }
    checkJsonShape(data);
    return data;
  }

  /** The JSON body checked against a schema; errors read "Schema error for <what>: …". */
  json<T>(schema: JsonSchema, what: string): T {
    const data = this.jsonBody();
    if (data === undefined) throw badRequest(`Missing the request body (a JSON ${what}).`);
    checkSchema(schema, data, what);
    return data as T;
  }
}

/** Deepest nesting accepted in a body: deep enough for any document, shallow enough to store. */
const MAX_DEPTH = 64;

/** Refuse what JSON.parse accepts but cannot be stored faithfully: overflowing numbers, absurd nesting. */
function checkJsonShape(data: unknown): void {
  const stack: Array<[unknown, number]> = [[data, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) throw badRequest('The request body holds a number too large to represent.');
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_DEPTH) throw badRequest(`The request body is nested more than ${MAX_DEPTH} levels deep.`);
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
}

/** Validate against a schema, wording the error as Ironic does (with a root cause for anyOf). */
export function checkSchema(schema: JsonSchema, data: unknown, what: string): void {
  const error = validate(schema, data);
  if (!error) return;
  let message = error.message;
  const alternatives = (error.schema as JsonSchema).anyOf;
  if (error.keyword === 'anyOf' && alternatives?.length) {
    const cause = validate(alternatives[alternatives.length - 1]!, error.instance);
    if (cause) message += `. Possible root cause: ${cause.message}`;
  }
  throw badRequest(`Schema error for ${what}: ${message}`);
}

/**
 * Serve one request: run the pipeline, write the response or the error. `route` is null when no
 * path matched; `failure` is an error Fastify met before routing (body too large, bad body).
 */
export async function serveBaremetal<C>(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: C,
  prefix: string,
  route: MatchedRoute<Endpoint<C>> | null,
  failure?: unknown,
): Promise<void> {
  reply.header('openstack-request-id', req.id);
  reply.header('x-openstack-request-id', req.id);
  try {
    if (!route) {
      if (failure) throw failure;
      throw frameworkError(404, '');
    }
    const { endpoint, allowed } = route;
    let mv = negotiate({});
    if (!endpoint?.unversioned) {
      try {
        mv = negotiate(req.headers);
      } catch (err) {
        for (const [k, v] of Object.entries(versionRangeHeaders())) reply.header(k, v);
        throw err;
      }
      for (const [k, v] of Object.entries(versionRangeHeaders())) reply.header(k, v);
      reply.header('x-openstack-ironic-api-version', String(mv));
    }
    if (failure) throw failure;
    if (!endpoint) {
      reply.header('allow', allowed.join(', '));
      throw frameworkError(405, '');
    }
    if (endpoint.since && !mv.atLeast(endpoint.since)) {
      const tooOld = endpoint.tooOld ?? { status: 404, description: '' };
      throw frameworkError(tooOld.status, tooOld.description);
    }
    const result = await endpoint.handle(new IronicRequest(req, mv, prefix), ctx);
    const status = result.status ?? (result.body === undefined ? 204 : 200);
    if (result.location) reply.header('location', result.location);
    if (result.body !== undefined) {
      reply.code(status).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(result.body)));
    } else {
      reply.code(status).send();
    }
  } catch (err) {
    const rendered = renderError(toAllotError(err, req, reply));
    reply.code(rendered.status).header('content-type', 'application/json').send(Buffer.from(rendered.body));
  }
}

/** Anything thrown becomes an AllotError; unexpected ones are logged and become a 500. */
function toAllotError(err: unknown, req: FastifyRequest, reply: FastifyReply): AllotError {
  const fault = faultAsError(err, req, reply, CODES.server);
  if (fault) return fault;
  if (err instanceof AllotError) {
    if (err.status >= 500) req.log.error({ err }, 'bare-metal request failed');
    return err;
  }
  const e = err as { statusCode?: number; message?: string };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    // Fastify's own refusals: body too large, bad content-length and the like.
    if (e.statusCode === 413) return frameworkError(413, `The request body is larger than this server accepts.`);
    return ironicError(400, e.message ?? 'Bad request');
  }
  req.log.error({ err }, 'unexpected error');
  return ironicError(500, 'An unexpected error occurred; the request id identifies it in the log.', CODES.server);
}

