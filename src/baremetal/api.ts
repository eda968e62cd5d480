// The Ironic-compatible bare-metal API: its route table and what it tells the request pipeline
// (src/http/). In the order Ironic's own stack runs: routing (404) → version negotiation (406,
// not for the root document) → method (405) → endpoint version gate → handler. Mounted at
// /baremetal on the main port and at / on --baremetal-port.
import type { ApiDefinition } from '../http/pipeline.js';
import type { RouteTable } from '../http/router.js';
import type { BaremetalContext } from './context.js';
import { renderError, translate } from './errors.js';
import { negotiate, versionRangeHeaders } from './microversion.js';
import { baremetalDocument } from './openapi.js';
import { type Endpoint, IronicRequest, type IronicResponse } from './request.js';
import * as allocations from './routes/allocations.js';
import * as conductors from './routes/conductors.js';
import * as nodes from './routes/nodes.js';
import { root, v1 } from './routes/root.js';

/** The resources of v1 (and their policies). */
const v1Routes: RouteTable<Endpoint> = {
  // Until project scoping (owner/lessee) lands, lists and new allocations take the system-wide rules.
  '/v1/nodes': { GET: { ...nodes.list, policy: 'baremetal:node:list_all' }, POST: { ...nodes.create, policy: 'baremetal:node:create' } },
  '/v1/nodes/detail': { GET: { ...nodes.detail, policy: 'baremetal:node:list_all' } },
  '/v1/nodes/:node': {
    GET: { ...nodes.show, policy: 'baremetal:node:get' },
    PATCH: { ...nodes.patch, policy: 'baremetal:node:update' },
    DELETE: { ...nodes.remove, policy: 'baremetal:node:delete' },
  },
  '/v1/nodes/:node/states': { GET: { ...nodes.states, policy: 'baremetal:node:get_states' } },
  '/v1/nodes/:node/states/provision': { PUT: { ...nodes.provision, policy: 'baremetal:node:set_provision_state' } },
  '/v1/nodes/:node/states/power': { PUT: { ...nodes.power, policy: 'baremetal:node:set_power_state' } },
  '/v1/nodes/:node/maintenance': {
    PUT: { ...nodes.maintenanceOn, policy: 'baremetal:node:set_maintenance' },
    DELETE: { ...nodes.maintenanceOff, policy: 'baremetal:node:clear_maintenance' },
  },
  '/v1/nodes/:node/traits': {
    GET: { ...nodes.traits, policy: 'baremetal:node:traits:list' },
    PUT: { ...nodes.setTraits, policy: 'baremetal:node:traits:set' },
    DELETE: { ...nodes.removeTraits, policy: 'baremetal:node:traits:delete' },
  },
  '/v1/nodes/:node/traits/:trait': {
    PUT: { ...nodes.addTrait, policy: 'baremetal:node:traits:set' },
    DELETE: { ...nodes.removeTrait, policy: 'baremetal:node:traits:delete' },
  },
  '/v1/nodes/:node/allocation': {
    GET: { ...nodes.allocation, policy: 'baremetal:allocation:get' },
    DELETE: { ...nodes.removeAllocation, policy: 'baremetal:allocation:delete' },
  },
  '/v1/allocations': {
    GET: { ...allocations.list, policy: 'baremetal:allocation:list_all' },
    POST: { ...allocations.create, policy: 'baremetal:allocation:create_restricted' },
  },
  '/v1/allocations/:allocation': {
    GET: { ...allocations.show, policy: 'baremetal:allocation:get' },
    PATCH: { ...allocations.patch, policy: 'baremetal:allocation:update' },
    DELETE: { ...allocations.remove, policy: 'baremetal:allocation:delete' },
  },
  '/v1/conductors': { GET: { ...conductors.list, policy: 'baremetal:conductor:get' } },
  '/v1/conductors/:hostname': { GET: { ...conductors.show, policy: 'baremetal:conductor:get' } },
};

/**
 * Ironic also serves every v1 resource at the root of the API (`/nodes/…` is `/v1/nodes/…`): its
 * `bookmark` links point there and clients follow them. Same endpoints, same version rules.
 */
const bookmarkRoutes: RouteTable<Endpoint> = Object.fromEntries(Object.entries(v1Routes).map(([path, methods]) => [path.slice('/v1'.length), methods]));

/** What the OpenAPI document describes (openapi.ts, the reference page): the bookmark aliases are left out. */
export const documentedRoutes: RouteTable<Endpoint> = {
  '/': { GET: { ...root, public: true } },
  '/v1': { GET: { ...v1, public: true } },
  // allot's own: the OpenAPI document of this route table (baremetal/openapi.ts)
  '/openapi.json': {
    GET: {
      public: true,
      unversioned: true,
      handle: async (req, ctx) => ({ body: baremetalDocument(documentedRoutes, req.baseUrl, { auth: ctx.config.auth }) }),
    },
  },
  ...v1Routes,
};

export const baremetalRoutes: RouteTable<Endpoint> = { ...documentedRoutes, ...bookmarkRoutes };

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
