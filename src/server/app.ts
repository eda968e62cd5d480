// Assembling HTTP servers from the APIs: the main port mounts every API under its prefix, a
// dedicated port mounts one API at its root (some OpenStack clients assume the root).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { DatabaseFault } from '../db/faults.js';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { APIS, type ApiName } from './apis.js';
import { installCors } from './cors.js';
import type { Services } from './services.js';

export interface Mount {
  api: ApiName;
  prefix: string;
}

export function buildServer(services: Services, mounts: Mount[]): FastifyInstance {
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => `req-${randomUUID()}`,
    bodyLimit: services.config.bodyLimit,
    // Bounded waits on clients: a slow or silent client cannot hold a socket forever.
    connectionTimeout: services.config.httpIdleTimeout,
    keepAliveTimeout: services.config.httpKeepaliveTimeout,
    requestTimeout: services.config.httpRequestTimeout,
    exposeHeadRoutes: false,
    // resource class and trait names (up to 255 characters) travel in the path
    routerOptions: { maxParamLength: 1024 },
    return503OnClosing: true,
    // Malformed HTTP (e.g. a content-length that is not a number) never reaches a route; answer
    // it in the JSON error shape our clients parse rather than Node's bare 400.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      if (!socket.writable) return;
      const detail = err.code === 'HPE_INVALID_CONTENT_LENGTH' ? 'content-length header must be an integer' : 'Malformed HTTP request';
      const body = JSON.stringify({ errors: [{ status: 400, title: 'Bad Request', detail, request_id: `req-${randomUUID()}` }] });
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
  });

  app.server.headersTimeout = services.config.httpHeadersTimeout;
  app.server.maxConnections = services.config.maxConnections;

  // Until the database is migrated and reachable, everything but the health checks answers 503
  // (the APIs in their own formats: the error goes to the API's handler).
  app.addHook('onRequest', async (req) => {
    if (services.readiness.isReady) return;
    const path = req.url.split('?')[0];
    if (path === '/healthz' || path === '/readyz') return;
    throw new DatabaseFault('unavailable', `allot is ${services.readiness.reason}`);
  });

  app.addHook('onResponse', async (req, reply) => {
    const level = reply.statusCode >= 500 ? 'error' : 'debug';
    req.log[level]({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });

  installCors(app, services.config.corsAllowedOrigins);
  for (const mount of mounts) APIS[mount.api].register(app, services, mount.prefix === '/' ? '' : mount.prefix);

  if (!mounts.some((m) => m.prefix === '/' || m.prefix === '')) {
    app.get('/', async () => ({
      name: 'allot',
      apis: Object.fromEntries(mounts.map((m) => [m.api, m.prefix])),
    }));
    // For supervisors: 200 while this process works and reaches its database.
    app.get('/healthz', async (_req, reply) => {
      const answer = await services.health.live();
      if (answer.ok) return { status: 'ok' };
      services.log.warn({ reason: answer.reason }, 'health check failed');
      return reply.code(503).header('retry-after', '2').send({ status: 'unavailable', reason: answer.reason });
    });
    // For load balancers: 200 once started and while a write commits.
    app.get('/readyz', async (_req, reply) => {
      const answer = await services.health.ready();
      if (answer.ok) return { status: 'ready' };
      return reply.code(503).header('retry-after', '2').send({ status: 'not ready', reason: answer.reason });
    });
  }
  return app;
}
