// The identifier API: its route table and what it tells the request pipeline (src/http/): route
// (404/405 with Allow) → Accept (406) → handler (content type 415, JSON syntax and schema 400,
// If-Match 400, a stale version 412) → response with ETag/Location/Link. Every failure leaves as
// RFC 9457 problem+json via errors.ts, domain errors through its `translate`.
import type { ApiDefinition } from '../http/pipeline.js';
import type { RouteTable } from '../http/router.js';
import { accepts } from '../http/accept.js';
import type { IdsContext } from './context.js';
import { idsError, renderProblem, translate } from './errors.js';
import { type Endpoint, IdsRequest, type IdsResponse } from './request.js';
import * as allocations from './routes/allocations.js';
import * as meta from './routes/meta.js';
import * as pools from './routes/pools.js';
import * as instances from './routes/service-instances.js';
import * as specs from './routes/specs.js';

export const idsRoutes: RouteTable<Endpoint> = {
  '/v1': { GET: { ...meta.root, public: true } },
  '/v1/openapi.json': { GET: { ...meta.openapi, public: true } },
  '/v1/pools': { GET: { ...pools.list, policy: 'ids:pools:list' }, POST: { ...pools.create, policy: 'ids:pools:create' } },
  '/v1/pools/:pool': {
    GET: { ...pools.show, policy: 'ids:pools:show' },
    PATCH: { ...pools.update, policy: 'ids:pools:update' },
    DELETE: { ...pools.remove, policy: 'ids:pools:delete' },
  },
  '/v1/pools/:pool/allocations': {
    GET: { ...pools.listAllocationsOfPool, policy: 'ids:allocations:list' },
    POST: { ...pools.allocateInPool, policy: 'ids:allocations:create' },
    DELETE: { ...pools.releaseByValue, policy: 'ids:allocations:delete' },
  },
  '/v1/pools/:pool/free-ranges': { GET: { ...pools.freeRanges, policy: 'ids:pools:show' } },
  '/v1/pools/:pool/imports': { POST: { ...pools.imports, policy: 'ids:pools:import' } },
  '/v1/allocations': { GET: { ...allocations.list, policy: 'ids:allocations:list' }, POST: { ...allocations.batch, policy: 'ids:allocations:create' } },
  '/v1/allocations/:id': {
    GET: { ...allocations.show, policy: 'ids:allocations:show' },
    PATCH: { ...allocations.update, policy: 'ids:allocations:update' },
    DELETE: { ...allocations.remove, policy: 'ids:allocations:delete' },
  },
  '/v1/allocation-specs': { GET: { ...specs.list, policy: 'ids:allocation_specs:list' }, POST: { ...specs.create, policy: 'ids:allocation_specs:create' } },
  '/v1/allocation-specs/:name': {
    GET: { ...specs.show, policy: 'ids:allocation_specs:show' },
    DELETE: { ...specs.remove, policy: 'ids:allocation_specs:delete' },
  },
  '/v1/service-instances': {
    GET: { ...instances.list, policy: 'ids:service_instances:list' },
    POST: { ...instances.create, policy: 'ids:service_instances:create' },
  },
  '/v1/service-instances/:id': {
    GET: { ...instances.show, policy: 'ids:service_instances:show' },
    PATCH: { ...instances.update, policy: 'ids:service_instances:update' },
    DELETE: { ...instances.terminate, policy: 'ids:service_instances:delete' },
  },
  '/v1/service-instances/:id/validate': { POST: { ...instances.validate, policy: 'ids:service_instances:update' } },
  '/v1/service-instances/:id/promote': { POST: { ...instances.promote, policy: 'ids:service_instances:update' } },
  '/v1/service-instances/:id/rollback': { POST: { ...instances.rollback, policy: 'ids:service_instances:update' } },
  '/v1/service-instances/:id/attribute-sets/:set': { DELETE: { ...instances.clearSet, policy: 'ids:service_instances:update' } },
  '/v1/inventories': { GET: { ...meta.inventories, policy: 'ids:inventories:list' } },
  '/v1/outbox': { GET: { ...meta.outbox, policy: 'ids:outbox:list' } },
  '/v1/outbox/:id': { GET: { ...meta.outboxEntry, policy: 'ids:outbox:list' } },
  '/v1/outbox/:id/retry': { POST: { ...meta.retryOutboxEntry, policy: 'ids:outbox:retry' } },
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
