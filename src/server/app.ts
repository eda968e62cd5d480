// One HTTP server: the main port mounts every API under its prefix, a dedicated port mounts one API
// at its root. Every request under a prefix — including those the web framework or the HTTP parser
// refuses (a bad percent-encoding, an over-long URL or header, an unknown method, a CONNECT) — is
// answered by that API's pipeline in that API's format.
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type ApiError, HTTP, httpError } from '../http/errors.js';
import { type MountedApi, mountApi } from '../http/pipeline.js';
import { METHODS } from '../http/router.js';
import { APIS, type ApiModule, type ApiName } from './apis.js';
import type { AppContext } from './context.js';
import { installCors } from './cors.js';
import { installDashboard } from './dashboard.js';
import { serveMetrics } from './metrics.js';
import { installReferencePage } from './reference-page.js';

export interface Mount {
  api: ApiName;
  /** '/placement', or '/' for a port's root */
  prefix: string;
}

/** Longest URL accepted; anything longer is a 414 in the API's format. */
const MAX_URL_LENGTH = 8 * 1024;
/** Largest request head (request line and headers) Node's parser accepts: beyond it, 414 or 431. */
const MAX_HEADER_SIZE = 16 * 1024;

export function buildServer(app: AppContext, mounts: Mount[]): FastifyInstance {
  const { config } = app;
  /** Requests whose head arrived while allot was ready: they are finished when it stops (their body may still be coming). */
  const admitted = new WeakSet<FastifyRequest>();
  const awaitReady = async (req: FastifyRequest) => {
    if (app.readiness.serves || admitted.has(req)) return null;
    const reason = await app.readiness.wait(config.readyWait);
    if (reason === null) return null;
    // waiting for its database, the database is at fault; loading or stopping, allot itself
    return httpError(503, app.readiness.waitsForDatabase ? HTTP.unavailable : HTTP.notReady, `allot is ${reason}`);
  };

  const observe = (api: string, route: string, method: string, status: number, seconds: number) =>
    app.metrics.observeRequest(api, route, method, status, seconds);
  const apis: MountedApi[] = mounts
    .map((m) => {
      const api: ApiModule = APIS[m.api];
      return mountApi(api.definition, api.context(app), m.prefix === '/' ? '' : m.prefix, {
        access: app.access,
        awaitReady,
        deadlineMs: config.requestDeadline,
        observe,
      });
    })
    .sort((a, b) => b.prefix.length - a.prefix.length);
  /** The API that owns a URL: the longest mount prefix it starts with. */
  const apiFor = (url: string): MountedApi | undefined =>
    apis.find((m) => m.prefix === '' || url === m.prefix || url.startsWith(`${m.prefix}/`) || url.startsWith(`${m.prefix}?`));

  const server = Fastify({
    loggerInstance: app.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => `req-${randomUUID()}`,
    bodyLimit: config.bodyLimit,
    exposeHeadRoutes: false,
    return503OnClosing: true,
    // Bounded waits on clients: a slow or silent client cannot hold a socket forever.
    connectionTimeout: config.httpIdleTimeout,
    keepAliveTimeout: config.httpKeepaliveTimeout,
    requestTimeout: config.httpRequestTimeout,
    http: {
      headersTimeout: config.httpHeadersTimeout,
      requestTimeout: config.httpRequestTimeout,
      connectionsCheckingInterval: Math.min(1_000, config.httpHeadersTimeout),
      maxHeaderSize: MAX_HEADER_SIZE,
    },
    // Our own router decodes and checks path segments; the framework's must let them through.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    frameworkErrors: (err, req, reply) => answer(req, reply, frameworkError(err)),
    clientErrorHandler: (err: Error & { code?: string; rawPacket?: unknown }, socket: Socket) => answerMalformed(err, socket),
  });
  server.server.maxConnections = config.maxConnections;
  server.server.on('connect', (req: IncomingMessage, socket: Socket) => answerConnect(req, socket));

  /**
   * Node hands a CONNECT request to a proxy's 'connect' listener and, without one, drops the
   * connection. allot is no proxy: CONNECT is answered as any method an API does not serve (405
   * with Allow, in the API's format). The connection then closes: Node has detached its parser and
   * its error and timeout handlers from the socket, so they are set here.
   */
  function answerConnect(req: IncomingMessage, socket: Socket): void {
    socket.on('error', () => socket.destroy());
    socket.setTimeout(config.httpIdleTimeout, () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => socket.end());
    server.server.emit('request', req, res);
  }

  /** An error met before any route: in the owning API's format, or plain JSON outside every API. */
  function answer(req: FastifyRequest, reply: FastifyReply, err: ApiError): void {
    const api = apiFor(req.url);
    if (api) api.fail(req, reply, err);
    else void reply.code(err.status).send({ error: err.message });
  }

  // Connections answered by the error below. The answer closes the connection, but bytes already
  // on their way (a request sent on a connection that timed out while this process was paused)
  // are still parsed: such a request must not run, since its client reads the error as its answer.
  const answeredWithError = new WeakSet<Socket>();
  function answerMalformed(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
    answeredWithError.add(socket);
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const head = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1') : '';
    const lineEnd = head.indexOf('\r\n');
    const [method = 'GET', target = '/'] = (lineEnd < 0 ? head : head.slice(0, lineEnd)).split(' ');
    // the request line alone is too long (no end in sight, or longer than any URL we take): 414
    const lineTooLong = lineEnd < 0 ? head.length > 0 : lineEnd > MAX_URL_LENGTH;
    const error = malformedError(err.code, lineTooLong);
    const path = target.split('?')[0] ?? '/';
    const api = apiFor(path);
    const requestId = `req-${randomUUID()}`;
    const rendered = api
      ? api.renderBare(error, { requestId, method, path, headers: {}, mv: null, route: null })
      : { status: error.status, contentType: 'application/json', body: JSON.stringify({ error: error.message }), requestIdHeaders: [] as readonly string[] };
    const headers = [
      `Content-Type: ${rendered.contentType}`,
      `Content-Length: ${Buffer.byteLength(rendered.body)}`,
      'Connection: close',
      ...rendered.requestIdHeaders.map((h) => `${h}: ${requestId}`),
    ];
    socket.end(`HTTP/1.1 ${rendered.status} ${STATUS_TEXT[rendered.status] ?? 'Error'}\r\n${headers.join('\r\n')}\r\n\r\n${rendered.body}`);
  }

  // Bodies stay raw bytes whatever their type; each API decides what it accepts (http/body.ts).
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  server.addHook('onRequest', async (req, reply) => {
    if (answeredWithError.has(req.raw.socket)) {
      reply.hijack();
      req.raw.socket.destroy();
      return;
    }
    if (app.readiness.serves) admitted.add(req);
    if (req.url.length > MAX_URL_LENGTH) throw httpError(414, HTTP.uriTooLong, `The URL is longer than ${MAX_URL_LENGTH} characters.`);
    // A blank Content-Type says nothing: treat it as absent so that each API applies its own rule
    // for a body without a type (Ironic reads it as JSON) instead of the framework's 415.
    if (typeof req.headers['content-type'] === 'string' && req.headers['content-type'].trim() === '') delete req.headers['content-type'];
  });
  // Draining or stopping: every answer closes its connection, so that no keep-alive holds the exit
  // back and a load balancer opens its next connection to another process.
  server.addHook('onSend', async (_req, reply) => {
    if (app.readiness.isLeaving) reply.header('connection', 'close');
  });
  server.addHook('onResponse', async (req, reply) => {
    // a 503 says why where it happens (a database fault, not ready); the rest of 5xx are bugs
    const level = reply.statusCode === 503 ? 'warn' : reply.statusCode >= 500 ? 'error' : 'debug';
    req.log[level]({ method: req.method, url: req.url.slice(0, 500), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });
  installCors(server, config.corsAllowedOrigins);

  for (const api of apis) {
    const handler = (req: FastifyRequest, reply: FastifyReply) => api.serve(req, reply);
    server.route({ method: [...METHODS], url: api.prefix || '/', handler });
    server.route({ method: [...METHODS], url: `${api.prefix}/*`, handler });
  }
  // Methods the router does not list (PROPFIND, …) and paths outside every API end here.
  server.setNotFoundHandler((req, reply) => {
    const api = apiFor(req.url);
    if (api) return api.serve(req, reply);
    return reply.code(404).send({ error: `No resource at ${req.url.split('?')[0]}` });
  });
  // Errors before the handler (a body too large, the URL check above) go to the owning API.
  server.setErrorHandler((err, req, reply) => {
    const api = apiFor(req.url);
    if (api) return api.serve(req, reply, err);
    const e = err as { statusCode?: number; message?: string };
    return reply.code(e.statusCode ?? 500).send({ error: e.message });
  });

  if (!apis.some((m) => m.prefix === '')) {
    server.get('/', async () => ({ name: 'allot', apis: Object.fromEntries(mounts.map((m) => [m.api, m.prefix])), dashboard: '/ui/' }));
    installDashboard(server, app.log as FastifyBaseLogger, { auth: app.config.auth });
    // For supervisors: 200 while this process works and reaches its database.
    server.route({
      method: ['GET', 'HEAD'],
      url: '/healthz',
      handler: async (_req, reply) => {
        const answer = await app.health.live();
        if (answer.ok) return { status: 'ok' };
        app.log.warn({ reason: answer.reason }, 'health check failed');
        return reply.code(503).header('retry-after', '2').send({ status: 'unavailable', reason: answer.reason });
      },
    });
    // The API reference rendered from the three OpenAPI documents (no script, works offline).
    installReferencePage(server, { auth: config.auth });
    // For Prometheus (who may scrape: server/metrics.ts).
    server.route({ method: ['GET', 'HEAD'], url: '/metrics', handler: (req, reply) => serveMetrics(app, req, reply) });
    // For load balancers: 200 once started and while a write commits.
    server.route({
      method: ['GET', 'HEAD'],
      url: '/readyz',
      handler: async (_req, reply) => {
        const answer = await app.health.ready();
        if (answer.ok) return { status: 'ready' };
        return reply.code(503).header('retry-after', '2').send({ status: 'not ready', reason: answer.reason });
      },
    });
  }
  return server;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
};

/** The framework's routing refusals, as pipeline errors. */
function frameworkError(err: { code?: string; message: string }): ApiError {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return httpError(414, HTTP.uriTooLong, 'A path segment is longer than this server accepts.');
  if (err.code === 'FST_ERR_BAD_URL') return httpError(400, HTTP.badUrl, 'The URL is not valid percent-encoding.');
  return httpError(400, HTTP.badRequest, err.message);
}

/** What the HTTP parser refused, as a pipeline error. */
function malformedError(code: string | undefined, requestLineTooLong: boolean): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return requestLineTooLong
        ? httpError(414, HTTP.uriTooLong, 'The URL is longer than this server accepts.')
        : httpError(431, HTTP.headersTooLarge, 'The request headers are larger than this server accepts.');
    case 'HPE_INVALID_METHOD':
      return httpError(501, HTTP.notImplemented, 'The request method is not one this server knows.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return httpError(408, HTTP.requestTimeout, 'The request was not received in time.');
    case 'HPE_INVALID_CONTENT_LENGTH':
      return httpError(400, HTTP.badRequest, 'content-length header must be an integer');
    default:
      return httpError(400, HTTP.badRequest, 'Malformed HTTP request');
  }
}
