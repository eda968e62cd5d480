// Assembling HTTP servers from the APIs: the main port mounts every API under its prefix, a
// dedicated port mounts one API at its root (some OpenStack clients assume the root).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { sql } from 'kysely';
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
    // For load balancers and orchestrators: 200 while this process can reach its database.
    app.get('/healthz', async (_req, reply) => {
      try {
        await sql`select 1`.execute(services.database.db);
        return { status: 'ok' };
      } catch (err) {
        services.log.warn({ err }, 'health check: database unreachable');
        return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
      }
    });
  }
  return app;
}
