// HTTP plumbing shared by the three APIs: raw bodies (each API parses and validates JSON itself,
// with its own error format), route tables that know which methods a path allows (so a wrong
// method is a 405 with `Allow`, as OpenStack clients expect), and ordered query parameters.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AllotError } from '../core/errors.js';
import { classifyFault } from '../db/faults.js';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type Method = (typeof METHODS)[number];

/** path (Fastify syntax, `:param`) → method → endpoint */
export type RouteTable<E> = Record<string, Partial<Record<Method, E>>>;

/**
 * Register every path of a table on one catch-all-methods route, so `dispatch` decides between
 * the endpoint and a 405 listing what the path allows.
 */
export function registerRouteTable<E>(
  app: FastifyInstance,
  table: RouteTable<E>,
  dispatch: (req: FastifyRequest, reply: FastifyReply, route: MatchedRoute<E>) => Promise<unknown>,
): void {
  for (const [path, byMethod] of Object.entries(table)) {
    const allowed = METHODS.filter((m) => byMethod[m] !== undefined);
    app.route({
      method: [...METHODS],
      url: path,
      handler: (req, reply) => dispatch(req, reply, { path, endpoint: byMethod[req.method as Method], allowed }),
    });
  }
}

/** What the router found for a request: the table path, the endpoint for its method if any. */
export interface MatchedRoute<E> {
  path: string;
  endpoint: E | undefined;
  allowed: Method[];
}

/** Keep request bodies as raw Buffers whatever their content type; the API decides what is acceptable. */
export function acceptRawBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
}

/** Query parameters in order, repeated keys kept (`member_of=a&member_of=b`). */
export class QueryParams {
  readonly pairs: Array<[string, string]>;

  constructor(rawUrl: string) {
    const i = rawUrl.indexOf('?');
    this.pairs = i < 0 ? [] : [...new URLSearchParams(rawUrl.slice(i + 1))];
  }

  has(name: string): boolean {
    return this.pairs.some(([k]) => k === name);
  }

  /** all values of a key, in order */
  all(name: string): string[] {
    return this.pairs.filter(([k]) => k === name).map(([, v]) => v);
  }

  /** the last value of a key, as a Python WSGI MultiDict would give */
  get(name: string): string | undefined {
    const values = this.all(name);
    return values[values.length - 1];
  }

  keys(): string[] {
    return [...new Set(this.pairs.map(([k]) => k))];
  }

  /** one value per key (the last), for schema validation */
  toObject(): Record<string, string> {
    return Object.fromEntries(this.pairs);
  }
}

/** Add a header name to `Vary` without dropping what another layer put there. */
export function appendVary(reply: FastifyReply, name: string): void {
  const current = String(reply.getHeader('vary') ?? '');
  const names = current.split(',').map((v) => v.trim()).filter(Boolean);
  if (!names.some((v) => v.toLowerCase() === name.toLowerCase())) names.push(name);
  reply.header('vary', names.join(', '));
}

/**
 * A database fault as an API error: 503 (507 for a full disk) with Retry-After, logged once as a
 * warning (it is the infrastructure, not a bug). Null when `err` is not a fault.
 */
export function faultAsError(err: unknown, req: FastifyRequest, reply: FastifyReply, code: string): AllotError | null {
  const fault = classifyFault(err);
  if (!fault) return null;
  reply.header('retry-after', String(fault.retryAfter));
  req.log.warn({ fault: fault.kind, err: (fault.cause as Error | undefined)?.message ?? fault.message }, 'database fault');
  return new AllotError(fault.kind === 'storage_full' ? 507 : 503, code, fault.message, { fault: fault.kind });
}
