// The Placement API: its route table and what it tells the request pipeline (src/http/). In the
// order Placement's own middleware runs: auth (401, except at `/`) → microversion (400/406) →
// route (404/405, `since` → 404) → policy (403) → handler.
import { type ApiDefinition, appendVary } from '../http/pipeline.js';
import type { RouteTable } from '../http/router.js';
import type { PlacementContext } from './context.js';
import { renderError, translate } from './errors.js';
import { negotiate } from './microversion.js';
import { placementDocument } from './openapi.js';
import { type Endpoint, PlacementRequest, type PlacementResponse } from './request.js';
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

export const placementRoutes: RouteTable<Endpoint> = {
  '/': { GET: root },
  // allot's own: the OpenAPI document of this route table (placement/openapi.ts)
  '/openapi.json': {
    GET: {
      public: true,
      summary: 'this document',
      ok: [200],
      handle: async (req, ctx) => ({ body: placementDocument(placementRoutes, req.baseUrl, { auth: ctx.config.auth }) }),
    },
  },
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

export const placementApi: ApiDefinition<PlacementContext, PlacementRequest, PlacementResponse> = {
  name: 'placement',
  routes: placementRoutes,
  steps: ['authenticate', 'negotiate', 'route', 'method', 'gate', 'authorize'],
  requestIdHeaders: ['x-openstack-request-id'],
  negotiate(headers, reply) {
    const mv = negotiate(headers['openstack-api-version']);
    reply.header('openstack-api-version', `placement ${mv}`);
    appendVary(reply, 'openstack-api-version');
    return mv;
  },
  request: (parts) => new PlacementRequest(parts),
  decorate(req, response, reply) {
    // 1.15+: reads, and writes that return a representation, say when it last changed.
    if (req.mv.atLeast('1.15') && (response.lastModified !== undefined || (req.method === 'GET' && response.body !== undefined))) {
      reply.header('cache-control', 'no-cache');
      reply.header('last-modified', new Date(response.lastModified ?? Date.now()).toUTCString());
    }
  },
  translate,
  render: renderError,
};
