// The identifier API: its route table and what it tells the request pipeline (src/http/): route
// (404/405 with Allow) → Accept (406) → handler (content type 415, JSON syntax and schema 400,
// If-Match 400, a stale version 412) → response with ETag/Location/Link. Every failure leaves as
// RFC 9457 problem+json via errors.ts, domain errors through its `translate`.
import type { ApiDefinition } from '../http/pipeline.js';
import type { RouteTable } from '../http/router.js';
import { accepts } from '../http/accept.js';
import type { IdsContext } from './context.js';
import { idsError, renderProblem, translate } from './errors.js';
import { idsDocument } from './openapi.js';
import { type Endpoint, IdsRequest, type IdsResponse } from './request.js';
import * as allocations from './routes/allocations.js';
import * as meta from './routes/meta.js';
import * as pools from './routes/pools.js';
import * as instances from './routes/service-instances.js';
import * as specs from './routes/specs.js';

export const idsRoutes: RouteTable<Endpoint> = {
  '/v1': { GET: meta.root },
  '/v1/openapi.json': {
    GET: { public: true, summary: 'this document', ok: [200], handle: async (req, ctx) => ({ body: idsDocument(idsRoutes, req.url(''), { auth: ctx.auth }) }) },
  },
  '/v1/pools': { GET: pools.list, POST: pools.create },
  '/v1/pools/:pool': { GET: pools.show, PATCH: pools.update, DELETE: pools.remove },
  '/v1/pools/:pool/allocations': { GET: pools.listAllocationsOfPool, POST: pools.allocateInPool, DELETE: pools.releaseByValue },
  '/v1/pools/:pool/free-ranges': { GET: pools.freeRanges },
  '/v1/pools/:pool/imports': { POST: pools.imports },
  '/v1/allocations': { GET: allocations.list, POST: allocations.batch },
  '/v1/allocations/:id': { GET: allocations.show, PATCH: allocations.update, DELETE: allocations.remove },
  '/v1/allocation-specs': { GET: specs.list, POST: specs.create },
  '/v1/allocation-specs/:name': { GET: specs.show, DELETE: specs.remove },
  '/v1/service-instances': { GET: instances.list, POST: instances.create },
  '/v1/service-instances/:id': { GET: instances.show, PATCH: instances.update, DELETE: instances.terminate },
  '/v1/service-instances/:id/validate': { POST: instances.validate },
  '/v1/service-instances/:id/promote': { POST: instances.promote },
  '/v1/service-instances/:id/rollback': { POST: instances.rollback },
  '/v1/service-instances/:id/attribute-sets/:set': { DELETE: instances.clearSet },
  '/v1/inventories': { GET: meta.inventories },
  '/v1/outbox': { GET: meta.outbox },
  '/v1/outbox/:id': { GET: meta.outboxEntry },
  '/v1/outbox/:id/retry': { POST: meta.retryOutboxEntry },
};

export const idsApi: ApiDefinition<IdsContext, IdsRequest, IdsResponse> = {
  name: 'ids',
  routes: idsRoutes,
  steps: ['authenticate', 'route', 'method', 'authorize'],
  headAsGet: true,
  requestIdHeaders: ['x-request-id'],
  request(parts) {
    const accept = parts.raw.headers.accept;
    if (accept && !accepts(accept, 'application/json') && !accepts(accept, 'application/problem+json')) {
      throw idsError(406, 'ids.not_acceptable', 'This API answers application/json');
    }
    return new IdsRequest(parts);
  },
  decorate(_req, response, reply) {
    if (response.etag !== undefined) reply.header('etag', `"${response.etag}"`);
  },
  translate,
  render: renderProblem,
};
