// The Ironic-compatible bare-metal API as a Fastify plugin: the route table, and the pipeline of
// http.ts around it. Mounted at /baremetal on the main port and at / on --baremetal-port.
import type { FastifyPluginAsync } from 'fastify';
import { type RouteTable, acceptRawBodies, registerRouteTable } from '../server/http.js';
import { type Endpoint, serveBaremetal } from './http.js';
import * as allocations from './routes/allocations.js';
import type { BaremetalContext } from './routes/common.js';
import * as conductors from './routes/conductors.js';
import * as nodes from './routes/nodes.js';
import { root, v1 } from './routes/root.js';

type Routes = RouteTable<Endpoint<BaremetalContext>>;

export const baremetalRoutes: Routes = {
  '/': { GET: root },
  '/v1': { GET: v1 },
  '/v1/nodes': { GET: nodes.list, POST: nodes.create },
  '/v1/nodes/detail': { GET: nodes.detail },
  '/v1/nodes/:node': { GET: nodes.show, PATCH: nodes.patch, DELETE: nodes.remove },
  '/v1/nodes/:node/states': { GET: nodes.states },
  '/v1/nodes/:node/states/provision': { PUT: nodes.provision },
  '/v1/nodes/:node/states/power': { PUT: nodes.power },
  '/v1/nodes/:node/maintenance': { PUT: nodes.maintenanceOn, DELETE: nodes.maintenanceOff },
  '/v1/nodes/:node/traits': { GET: nodes.traits, PUT: nodes.setTraits, DELETE: nodes.removeTraits },
  '/v1/nodes/:node/traits/:trait': { PUT: nodes.addTrait, DELETE: nodes.removeTrait },
  '/v1/nodes/:node/allocation': { GET: nodes.allocation, DELETE: nodes.removeAllocation },
  '/v1/allocations': { GET: allocations.list, POST: allocations.create },
  '/v1/allocations/:allocation': { GET: allocations.show, PATCH: allocations.patch, DELETE: allocations.remove },
  '/v1/conductors': { GET: conductors.list },
  '/v1/conductors/:hostname': { GET: conductors.show },
};

/** Ironic answers every path with or without a trailing slash (ironicclient lists `/v1/allocations/`). */
function withTrailingSlashes(table: Routes): Routes {
  const out: Routes = {};
  for (const [path, methods] of Object.entries(table)) {
    out[path] = methods;
    if (path !== '/') out[`${path}/`] = methods;
  }
  return out;
}

export const baremetalApi: FastifyPluginAsync<{ ctx: BaremetalContext; prefix: string }> = async (app, { ctx, prefix }) => {
  acceptRawBodies(app);
  registerRouteTable(app, withTrailingSlashes(baremetalRoutes), (req, reply, route) => serveBaremetal(req, reply, ctx, prefix, route));
  app.setNotFoundHandler((req, reply) => serveBaremetal(req, reply, ctx, prefix, null));
  app.setErrorHandler((err, req, reply) => serveBaremetal(req, reply, ctx, prefix, null, err));
};
