// The Ironic-compatible bare-metal API: its route table and what it tells the request pipeline
// (src/http/). In the order Ironic's own stack runs: routing (404) → version negotiation (406,
// not for the root document) → method (405) → endpoint version gate → handler. Mounted at
// /baremetal on the main port and at / on --baremetal-port.
import type { ApiDefinition } from '../http/pipeline.js';
import type { RouteTable } from '../http/router.js';
import type { BaremetalContext } from './context.js';
import { renderError, translate } from './errors.js';
import { negotiate, versionRangeHeaders } from './microversion.js';
import { type Endpoint, IronicRequest, type IronicResponse } from './request.js';
import * as allocations from './routes/allocations.js';
import * as conductors from './routes/conductors.js';
import * as nodes from './routes/nodes.js';
import { root, v1 } from './routes/root.js';

export const baremetalRoutes: RouteTable<Endpoint> = {
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

export const baremetalApi: ApiDefinition<BaremetalContext, IronicRequest, IronicResponse> = {
  name: 'baremetal',
  routes: baremetalRoutes,
  // Ironic answers every path with or without a trailing slash (ironicclient lists `/v1/allocations/`).
  trailingSlash: true,
  steps: ['authenticate', 'route', 'negotiate', 'method', 'gate', 'authorize'],
  requestIdHeaders: ['openstack-request-id', 'x-openstack-request-id'],
  negotiate(headers, reply, endpoint) {
    if (endpoint?.unversioned) return negotiate({});
    for (const [k, v] of Object.entries(versionRangeHeaders())) reply.header(k, v);
    const mv = negotiate(headers);
    reply.header('x-openstack-ironic-api-version', String(mv));
    return mv;
  },
  request: (parts) => new IronicRequest(parts),
  translate,
  render: renderError,
};
