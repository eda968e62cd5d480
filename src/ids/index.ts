// The identifier API as a Fastify plugin: the route table and the pipeline of http.ts around it.
import type { FastifyPluginAsync } from 'fastify';
import { type RouteTable, acceptRawBodies, registerRouteTable } from '../server/http.js';
import type { IdsContext } from './context.js';
import { type IdsEndpoint, serveIds } from './http.js';
import * as allocations from './routes/allocations.js';
import * as meta from './routes/meta.js';
import * as pools from './routes/pools.js';
import * as instances from './routes/service-instances.js';
import * as specs from './routes/specs.js';

export const idsRoutes: RouteTable<IdsEndpoint<IdsContext>> = {
  '/v1': { GET: meta.root },
  '/v1/openapi.json': { GET: meta.openapi },
  '/v1/pools': { GET: pools.list, POST: pools.create },
  '/v1/pools/:pool': { GET: pools.show, PATCH: pools.update, DELETE: pools.remove },
  '/v1/pools/:pool/allocations': { GET: pools.listAllocationsOfPool, POST: pools.allocateInPool },
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

export const idsApi: FastifyPluginAsync<{ ctx: IdsContext }> = async (app, { ctx }) => {
  acceptRawBodies(app);
  registerRouteTable(app, idsRoutes, (req, reply, route) => serveIds(req, reply, ctx, ctx.prefix, route));
  app.setNotFoundHandler((req, reply) => serveIds(req, reply, ctx, ctx.prefix, null));
  app.setErrorHandler((err, req, reply) => serveIds(req, reply, ctx, ctx.prefix, null, err));
};
