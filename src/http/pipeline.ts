// The one request pipeline every API runs through. An API supplies data — its route table, the
// order of its checks, its microversion negotiation, its request helpers and its error format —
// and the pipeline does the rest the same way for all three:
//
//   request id → admission (noauth: the Host header) → readiness (503 while starting) → [the API's
//   order of: authenticate (401; 503 when Keystone is down), negotiate a microversion (400/406),
//   route (404), method (405 + Allow), version gate, authorize (403)] → handler → response
//   (status, Location, JSON) or the API's error body.
//
// The handler runs under the request's deadline (db/deadline.ts): its waits on the database end
// when it passes, and the answer is a 503.
//
// Bodies are read with one set of safety rules (http/body.ts: content coding, UTF-8, JSON limits),
// query strings too (http/query.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Json } from '../core/json-text.js';
import type { Credentials } from '../auth/credentials.js';
import type { Microversion, Schemas } from '../core/microversion.js';
import { withDeadline } from '../db/deadline.js';
import { classifyFault } from '../db/faults.js';
import { readJson } from './body.js';
import { ApiError, HTTP, httpError } from './errors.js';
import type { OperationDoc } from './openapi.js';
import { QueryParams } from './query.js';
import { METHODS, type Method, type RouteMatch, type RouteTable, Router } from './router.js';

/** The checks an API runs before its handler, in the order it runs them. */
export type Step = 'authenticate' | 'negotiate' | 'route' | 'method' | 'gate' | 'authorize';

/**
 * One endpoint, declared once: its handler and everything said of it — versions, policy, the
 * schemas it validates with and its documentation (http/openapi.ts builds the API's document from
 * these alone; an API's own Endpoint type makes the documentation required).
 */
export interface Endpoint<C, R extends ApiRequest = ApiRequest, S extends ApiResponse = ApiResponse> extends Partial<OperationDoc> {
  /** lowest microversion that has this endpoint */
  since?: string;
  /**
   * what an older version gets: a routing error (default 404 with no message; a 405 lists the
   * path's other methods in Allow unless `allow` says otherwise, null for none), or the API's own
   * error for that version
   */
  tooOld?: { status: 404 | 405; message?: string; allow?: string | null } | ((mv: Microversion) => ApiError);
  /** served without authentication (version documents at the root) */
  public?: boolean;
  /** served without microversion negotiation (Ironic's root document) */
  unversioned?: boolean;
  /** policy rule checked before the handler; absent: the handler checks what it needs */
  policy?: string;
  /**
   * `policy` depends on the resource (its owner, a project's filter): the handler checks it once
   * it has loaded what the request names, and the pipeline does not check it beforehand
   */
  scoped?: boolean;
  handle(req: R, ctx: C): Promise<S>;
}

export interface ApiResponse {
  status?: number;
  /** serialised with JSON.stringify, unless it is JsonText */
  body?: unknown;
  /** absolute or relative URL for `Location` */
  location?: string;
  headers?: Record<string, string>;
}

/** A body already written as JSON text (a hot answer built as a string, not as objects): the text of a T. */
export class JsonText<T = unknown> {
  /** what the text holds, for the compiler only (core/json-text.ts) */
  declare readonly value?: T;
  constructor(readonly text: Json<T>) {}
}

/** Who authenticates requests and decides what they may do (auth/): one for every API. */
export interface AccessControl {
  /** Refuse a request before anything else looks at it (noauth: a `Host` that is not this machine). */
  admit(headers: FastifyRequest['headers'], method: string): void;
  /** The caller's credentials; throws 401 (no or bad token) or 503 (the identity service is down). */
  authenticate(api: string, headers: FastifyRequest['headers']): Promise<Credentials>;
  /** Throws 403 unless `rule` allows the caller on `target` (fields the target lacks are the caller's own). */
  authorize(api: string, rule: string, target: Record<string, unknown>, credentials: Credentials): void;
  /** Does `rule` allow the caller on `target`? (A question, not a refusal: oslo.policy's `check`.) */
  allows(api: string, rule: string, target: Record<string, unknown>, credentials: Credentials): boolean;
}

export interface RequestParts {
  raw: FastifyRequest;
  /** where the API is mounted: '' at a port's root, '/placement' on the main port */
  prefix: string;
  params: Record<string, string>;
  query: QueryParams;
  mv: Microversion | null;
  credentials: Credentials | null;
  access: AccessControl;
  api: string;
  /** what the matched endpoint declares (its schemas, its policy rule) */
  endpoint: Declared;
}

/** What a handler may read of its own endpoint's declaration. */
export type Declared = Partial<OperationDoc> & { policy?: string };

/** What a handler gets: the request, as every API sees it. APIs extend it with their own helpers. */
export class ApiRequest {
  readonly raw: FastifyRequest;
  readonly prefix: string;
  readonly query: QueryParams;
  readonly credentials: Credentials | null;
  /** the matched endpoint's declaration: a handler validates with its schemas and checks its rule */
  readonly endpoint: Declared;
  private readonly params: Record<string, string>;
  private readonly version: Microversion | null;
  private readonly access: AccessControl;
  private readonly api: string;

  constructor(parts: RequestParts) {
    this.raw = parts.raw;
    this.prefix = parts.prefix;
    this.query = parts.query;
    this.credentials = parts.credentials;
    this.endpoint = parts.endpoint;
    this.params = parts.params;
    this.version = parts.mv;
    this.access = parts.access;
    this.api = parts.api;
  }

  /** The negotiated microversion (APIs without versions never ask). */
  get mv(): Microversion {
    if (!this.version) throw new Error('this API has no microversions');
    return this.version;
  }

  get method(): string {
    return this.raw.method;
  }

  param(name: string): string {
    return this.params[name] ?? '';
  }

  header(name: string): string | undefined {
    const v = this.raw.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  /** The API's base URL as the client reached it: scheme, host and mount prefix. */
  get baseUrl(): string {
    return `${this.raw.protocol}://${this.raw.host}${this.prefix}`;
  }

  /** The raw body bytes (empty when none was sent). */
  get bodyBytes(): Buffer {
    return (this.raw.body as Buffer | undefined) ?? Buffer.alloc(0);
  }

  /**
   * The body as JSON under the common safety rules (a content coding is a 415 here, for every
   * API), or undefined when empty. Content type is the API's to check.
   */
  jsonBody(): unknown {
    const bytes = this.bodyBytes;
    return bytes.length === 0 ? undefined : readJson(bytes, this.header('content-encoding'));
  }

  /**
   * A signal that aborts when the client's connection closes before it is answered, for a handler
   * that waits on something; `release()` when done with it (keep-alive connections outlive requests).
   */
  whileConnected(): { signal: AbortSignal; release(): void } {
    const socket = this.raw.socket;
    const gone = new AbortController();
    const abort = () => gone.abort();
    if (socket.destroyed) abort();
    else socket.once('close', abort);
    return { signal: gone.signal, release: () => socket.off('close', abort) };
  }

  /**
   * Check the endpoint's own rule — a `scoped` one, which the pipeline leaves to the handler — on
   * the target the handler has loaded: the rule is declared once, on the endpoint.
   */
  authorizeScoped(target: Record<string, unknown>): void {
    this.authorize(this.endpointRule, target);
  }

  /** The endpoint's declared policy rule, for a handler that checks it itself (on several targets, or asks first). */
  get endpointRule(): string {
    const rule = this.endpoint.policy;
    if (!rule) throw new Error('the endpoint declares no policy rule');
    return rule;
  }

  /** A schema the endpoint declares: reading one it does not declare is a bug, found by its first request. */
  protected declared(what: 'body' | 'mergeBody' | 'query'): Schemas {
    const schemas = this.endpoint[what];
    if (!schemas) throw new Error(`the endpoint reads a ${what} it does not declare`);
    return schemas;
  }

  /** Check a policy rule for a resource the handler has loaded (e.g. a node's owner). */
  authorize(rule: string, target: Record<string, unknown> = {}): void {
    if (this.credentials) this.access.authorize(this.api, rule, target, this.credentials);
  }

  /** Would `rule` allow the caller on `target`? (Always, on a public endpoint: nobody is asked.) */
  allows(rule: string, target: Record<string, unknown> = {}): boolean {
    return this.credentials ? this.access.allows(this.api, rule, target, this.credentials) : true;
  }
}

/** What an error renderer knows about the request that failed. */
export interface ErrorContext {
  requestId: string;
  method: string;
  /** path without the query string, as the client sent it */
  path: string;
  headers: FastifyRequest['headers'];
  /** the negotiated version, when negotiation got that far */
  mv: Microversion | null;
  /** the route table's path that matched (`/resource_providers/:uuid`), when routing got that far */
  route: string | null;
}

export interface RenderedError {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export interface ApiDefinition<C, R extends ApiRequest = ApiRequest, S extends ApiResponse = ApiResponse> {
  name: string;
  routes: RouteTable<Endpoint<C, R, S>>;
  /** also answer every path with a trailing slash */
  trailingSlash?: boolean;
  /**
   * Answer HEAD wherever GET is answered, as GET without its body (RFC 9110 §9.3.2). Placement and
   * Ironic leave it out: their references answer HEAD with 405.
   */
  headAsGet?: boolean;
  /** the order of the checks before the handler */
  steps: readonly Step[];
  /** response headers that carry the request id */
  requestIdHeaders: readonly string[];
  /**
   * Negotiate the request's microversion: set the version headers on `reply`, return the version,
   * or throw the API's 400/406. Absent: the API has no microversions.
   */
  negotiate?(headers: FastifyRequest['headers'], reply: FastifyReply, endpoint: Endpoint<C, R, S> | undefined): Microversion | null;
  /** Make the API's own request object (with its helpers) from the parts. */
  request(parts: RequestParts): R;
  /** Add the API's own response headers (Last-Modified, ETag, …) before the body is written. */
  decorate?(req: R, response: S, reply: FastifyReply): void;
  /**
   * Turn a domain error (or anything else the API recognises) into an ApiError; null if unknown.
   * The context says which operation met it: an API may word one fact differently per operation.
   */
  translate?(err: unknown, context: ErrorContext): ApiError | null;
  /** The API's error format. */
  render(err: ApiError, context: ErrorContext): RenderedError;
}

/** A mounted API: its definition, compiled router and what its handlers get. */
export interface MountedApi {
  readonly name: string;
  readonly prefix: string;
  /** Serve a request under this mount; `failure` is an error met before routing (bad body, too large). */
  serve(req: FastifyRequest, reply: FastifyReply, failure?: unknown): Promise<void>;
  /** Answer an error in this API's format (framework and malformed-request errors). */
  fail(req: FastifyRequest, reply: FastifyReply, err: unknown): void;
  /** Render an error for a request the HTTP parser refused (no Fastify request exists). */
  renderBare(err: ApiError, context: ErrorContext): RenderedError & { requestIdHeaders: readonly string[] };
}

export interface PipelineOptions {
  access: AccessControl;
  /** null once the process is ready (waiting a bounded time for it); else the 503 that refuses the request */
  awaitReady(req: FastifyRequest): Promise<ApiError | null>;
  /** How long a request may wait on the database from its arrival, ms (`--request-deadline`, db/deadline.ts). */
  deadlineMs: number;
  /** Told of every answered request: the route table's template ('unmatched' when none), the status and the time taken. */
  observe?(api: string, route: string, method: string, status: number, seconds: number): void;
}

export function mountApi<C, R extends ApiRequest, S extends ApiResponse>(
  api: ApiDefinition<C, R, S>,
  ctx: C,
  prefix: string,
  options: PipelineOptions,
): MountedApi {
  const router = new Router(api.routes, { trailingSlash: api.trailingSlash ?? false });

  function errorContext(req: FastifyRequest, mv: Microversion | null, route: string | null): ErrorContext {
    return { requestId: req.id, method: req.method, path: req.url.split('?')[0] ?? '', headers: req.headers, mv, route };
  }

  function toApiError(err: unknown, req: FastifyRequest, reply: FastifyReply, context: ErrorContext): ApiError {
    if (err instanceof ApiError) return err;
    const translated = api.translate?.(err, context);
    if (translated) return translated;
    const fault = classifyFault(err);
    // The client went away (or was timed out) before its body arrived: its failure, not the
    // database's — unless a commit was sent, whose outcome is then unknown: that is said whoever
    // hears it (the log, the metrics), never hidden as a request that did not arrive.
    if (req.raw.readableAborted && fault?.kind !== 'commit_unknown') {
      return httpError(408, HTTP.requestTimeout, 'The request body was not received in full.');
    }
    if (fault) {
      reply.header('retry-after', String(fault.retryAfter));
      req.log.warn({ fault: fault.kind, err: (fault.cause as Error | undefined)?.message ?? fault.message }, 'database fault');
      return httpError(fault.kind === 'storage_full' ? 507 : 503, HTTP.unavailable, fault.message, { fault: fault.kind });
    }
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e?.statusCode === 413)
      return httpError(413, HTTP.bodyTooLarge, 'The request body is larger than this server accepts.');
    if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return httpError(400, HTTP.badRequest, e.message ?? 'Bad request');
    req.log.error({ err }, 'unexpected error');
    return httpError(500, HTTP.internal, 'An unexpected error occurred; the request id identifies it in the log.');
  }

  function fail(req: FastifyRequest, reply: FastifyReply, err: unknown, mv: Microversion | null = null, route: string | null = null): void {
    for (const h of api.requestIdHeaders) reply.header(h, req.id);
    const context = errorContext(req, mv, route);
    const error = toApiError(err, req, reply, context);
    for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    if (error.status >= 500 && error.status !== 503 && error.status !== 507) req.log.error({ code: error.code, message: error.message }, 'request failed');
    const rendered = api.render(error, context);
    for (const [k, v] of Object.entries(rendered.headers ?? {})) reply.header(k, v);
    reply.code(rendered.status).header('content-type', rendered.contentType).send(Buffer.from(rendered.body));
  }

  async function serve(req: FastifyRequest, reply: FastifyReply, failure?: unknown): Promise<void> {
    const started = performance.now();
    for (const h of api.requestIdHeaders) reply.header(h, req.id);
    let mv: Microversion | null = null;
    let route: string | null = null;
    /** the matched template, for metrics (a 405 or a refused request still has one) */
    let template: string | null = null;
    try {
      options.access.admit(req.headers, req.method);
      const notReady = await options.awaitReady(req);
      if (notReady !== null) {
        reply.header('retry-after', '2');
        throw notReady;
      }
      const path = pathUnder(req.url, prefix);
      let match: RouteMatch<Endpoint<C, R, S>> | null = null;
      const lookup = () => {
        match ??= router.match(api.headAsGet && req.method === 'HEAD' ? 'GET' : req.method, path);
        if (match.found) template = match.template;
        return match;
      };
      let credentials: Credentials | null = null;
      for (const step of api.steps) {
        switch (step) {
          case 'authenticate': {
            const m = safeMatch(lookup);
            if (!(m?.found && m.endpoint?.public)) credentials = await options.access.authenticate(api.name, req.headers);
            break;
          }
          case 'negotiate': {
            const m = safeMatch(lookup);
            mv = api.negotiate?.(req.headers, reply, m?.found ? m.endpoint : undefined) ?? null;
            break;
          }
          case 'route':
            if (failure) throw failure;
            if (!lookup().found) throw httpError(404, HTTP.notFound, `No resource at ${req.url.split('?')[0]}`);
            break;
          case 'method': {
            const m = lookup();
            if (m.found && !m.endpoint) {
              const allowed = api.headAsGet && m.allowed.includes('GET') ? [...m.allowed, 'HEAD'] : m.allowed;
              reply.header('allow', allowed.join(', '));
              throw httpError(405, HTTP.methodNotAllowed, `${req.method} is not allowed here; allowed: ${allowed.join(', ')}`, { allowed });
            }
            break;
          }
          case 'gate': {
            const m = lookup();
            const endpoint = m.found ? m.endpoint : undefined;
            if (endpoint?.since && mv && !mv.atLeast(endpoint.since)) {
              const tooOld = endpoint.tooOld ?? { status: 404 };
              if (typeof tooOld === 'function') throw tooOld(mv);
              if (tooOld.status === 405 && m.found && tooOld.allow !== null)
                reply.header('allow', tooOld.allow ?? m.allowed.filter((x: Method) => x !== req.method).join(', '));
              throw httpError(tooOld.status, tooOld.status === 405 ? HTTP.methodNotAllowed : HTTP.notFound, tooOld.message ?? '', { versionGate: true });
            }
            break;
          }
          case 'authorize': {
            const m = lookup();
            const rule = m.found && !m.endpoint?.scoped ? m.endpoint?.policy : undefined;
            if (rule && credentials) options.access.authorize(api.name, rule, {}, credentials);
            break;
          }
        }
      }
      if (failure) throw failure;
      const m = lookup();
      if (!m.found || !m.endpoint) throw httpError(404, HTTP.notFound, `No resource at ${req.url.split('?')[0]}`);
      const endpoint = m.endpoint;
      route = m.template;
      const request = api.request({
        raw: req,
        prefix,
        params: m.params,
        query: new QueryParams(req.url),
        mv,
        credentials,
        access: options.access,
        api: api.name,
        endpoint,
      });
      const response = await withDeadline(started + options.deadlineMs, () => endpoint.handle(request, ctx));
      api.decorate?.(request, response, reply);
      write(reply, response);
    } catch (err) {
      fail(req, reply, err, mv, route);
    }
    options.observe?.(
      api.name,
      template ?? 'unmatched',
      METHOD_LABELS.has(req.method) ? req.method : 'other',
      reply.statusCode,
      (performance.now() - started) / 1000,
    );
  }

  return {
    name: api.name,
    prefix,
    serve,
    fail: (req, reply, err) => fail(req, reply, err),
    renderBare: (err, context) => ({ ...api.render(err, context), requestIdHeaders: api.requestIdHeaders }),
  };
}

/** Methods that label metrics as they are; any other (PROPFIND, …) is `other`, so labels stay bounded. */
const METHOD_LABELS: ReadonlySet<string> = new Set(METHODS);

/** A route lookup that a malformed path may fail: steps before `route` treat that as "no route". */
function safeMatch<T>(route: () => T): T | null {
  try {
    return route();
  } catch {
    return null;
  }
}

/** The request path below the mount prefix ('/' for the mount itself). */
export function pathUnder(url: string, prefix: string): string {
  const path = url.split('?')[0] ?? '/';
  const rest = prefix && path.startsWith(prefix) ? path.slice(prefix.length) : path;
  return rest === '' ? '/' : rest;
}

function write(reply: FastifyReply, response: ApiResponse): void {
  const status = response.status ?? (response.body === undefined ? 204 : 200);
  if (response.location) reply.header('location', response.location);
  for (const [name, value] of Object.entries(response.headers ?? {})) reply.header(name, value);
  if (response.body === undefined) {
    reply.code(status).send();
    return;
  }
  const text = response.body instanceof JsonText ? response.body.text : JSON.stringify(response.body);
  reply.code(status).header('content-type', 'application/json').send(Buffer.from(text));
}

/** Add a header name to `Vary` without dropping what another layer put there. */
export function appendVary(reply: FastifyReply, name: string): void {
  const current = String(reply.getHeader('vary') ?? '');
  const names = current
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (!names.some((v) => v.toLowerCase() === name.toLowerCase())) names.push(name);
  reply.header('vary', names.join(', '));
}
