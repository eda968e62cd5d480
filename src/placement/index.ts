// The Placement API as a Fastify plugin: the route table, and the pipeline of http.ts around it.
import type { FastifyPluginAsync } from 'fastify';
import { type RouteTable, acceptRawBodies, registerRouteTable } from '../server/http.js';
import type { PlacementContext } from './context.js';
import { type Endpoint, servePlacement } from './http.js';
import * as aggregates from './routes/aggregates.js';
import * as candidates from './routes/allocation-candidates.js';
import * as allocations from './routes/allocations.js';
import * as inventories from './routes/inventories.js';
import * as reshaper from './routes/reshaper.js';
import * as classes from './routes/resource-classes.js';
import * as providers from './routes/resource-providers.js';
import { root } from './routes/root.js';
import * as traits from './routes/traits.js';
import * as usages from './routes/usages.js';

type Routes = RouteTable<Endpoint<PlacementContext>>;

export const placementRoutes: Routes = {
  '/': { GET: root },
  '/resource_providers': { GET: providers.list, POST: providers.create },
  '/resource_providers/:uuid': { GET: providers.show, PUT: providers.update, DELETE: providers.remove },
  '/resource_providers/:uuid/inventories': { GET: inventories.list, POST: inventories.create, PUT: inventories.replaceAll, DELETE: inventories.removeAll },
  '/resource_providers/:uuid/inventories/:resource_class': { GET: inventories.show, PUT: inventories.update, DELETE: inventories.remove },
  '/resource_providers/:uuid/usages': { GET: usages.forProvider },
  '/resource_providers/:uuid/aggregates': { GET: aggregates.list, PUT: aggregates.put },
  '/resource_providers/:uuid/traits': { GET: traits.listForProvider, PUT: traits.setForProvider, DELETE: traits.removeForProvider },
  '/resource_providers/:uuid/allocations': { GET: allocations.listForProvider },
  '/resource_classes': { GET: classes.list, POST: classes.create },
  '/resource_classes/:name': { GET: classes.show, PUT: classes.update, DELETE: classes.remove },
  '/traits': { GET: traits.list },
  '/traits/:name': { GET: traits.show, PUT: traits.put, DELETE: traits.remove },
  '/allocations': { POST: allocations.post },
  '/allocations/:consumer_uuid': { GET: allocations.show, PUT: allocations.put, DELETE: allocations.remove },
  '/usages': { GET: usages.total },
  '/allocation_candidates': { GET: candidates.list },
  '/reshaper': { POST: reshaper.post },
};

export const placementApi: FastifyPluginAsync<{ ctx: PlacementContext }> = async (app, { ctx }) => {
  acceptRawBodies(app);
  registerRouteTable(app, placementRoutes, (req, reply, route) => servePlacement(req, reply, ctx, route));
  app.setNotFoundHandler((req, reply) => servePlacement(req, reply, ctx, null));
  app.setErrorHandler((err, req, reply) => servePlacement(req, reply, ctx, null, err));
};
