// CORS for browser clients (Horizon-style dashboards), as OpenStack services configure it: only the
// configured origins get CORS headers; a preflight from any origin is answered here, before
// routing, so an OPTIONS request never reaches an API (which would answer 405).
import type { FastifyInstance } from 'fastify';
import { appendVary } from '../http/pipeline.js';

const ALLOW_METHODS = 'GET, PUT, POST, DELETE, PATCH';
const ALLOW_HEADERS = [
  'x-auth-token',
  'x-openstack-request-id',
  'x-roles',
  'openstack-api-version',
  'x-openstack-ironic-api-version',
  'content-type',
  'if-match',
  'if-none-match',
  'idempotency-key',
  // RFC 7240: POST /v1/allocations answers its outcome with `Prefer: wait=N`
  'prefer',
];
const EXPOSE_HEADERS = 'x-openstack-request-id, openstack-api-version, x-openstack-ironic-api-version, location, etag, preference-applied';

/**
 * `allowedOrigins` as the configuration keeps them: `new URL(v).origin`, lower case. Browsers send
 * `Origin` that way too; the header is lower-cased before the comparison all the same, and echoed
 * as it came (a browser compares Access-Control-Allow-Origin with its own spelling).
 */
export function installCors(app: FastifyInstance, allowedOrigins: readonly string[]): void {
  if (allowedOrigins.length === 0) return;
  const allowed = new Set(allowedOrigins);
  const isAllowed = (origin: string | undefined): origin is string => origin !== undefined && allowed.has(origin.toLowerCase());
  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (preflight) {
      appendVary(reply, 'origin');
      if (isAllowed(origin)) {
        const requested = String(req.headers['access-control-request-headers'] ?? '')
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean);
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-allow-methods', ALLOW_METHODS);
        if (requested.length && requested.every((h) => ALLOW_HEADERS.includes(h))) reply.header('access-control-allow-headers', requested.join(', '));
        reply.header('access-control-max-age', '3600');
      }
      return reply.code(200).send();
    }
    if (isAllowed(origin)) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', EXPOSE_HEADERS);
      appendVary(reply, 'origin');
    }
  });
}
