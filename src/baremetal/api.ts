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
import * as chassis from './routes/chassis.js';
import * as conductors from './routes/conductors.js';
import * as deployTemplates from './routes/deploy-templates.js';
import * as drivers from './routes/drivers.js';
import * as hardware from './routes/node-hardware.js';
import * as nodes from './routes/nodes.js';
import * as nodeStates from './routes/node-states.js';
import * as nodeTraits from './routes/node-traits.js';
import * as nodeAllocation from './routes/node-allocation.js';
import * as portgroups from './routes/portgroups.js';
import * as ports from './routes/ports.js';
import { root, v1 } from './routes/root.js';
import * as volumes from './routes/volumes.js';

/**
 * The resources of v1. Each endpoint names its policy rule (routes/): the system's resources
 * (conductors, chassis, drivers, deploy templates) are checked before the handler; every other
 * rule is `scoped` (routes/scope.ts) — checked against the node (or the node of the port, port
 * group) or allocation the handler loads, or (lists, new nodes and allocations) deciding whose
 * resources the request sees or makes, as Ironic checks them.
 */
const v1Routes: RouteTable<Endpoint> = {
  '/v1/nodes': { GET: nodes.list, POST: nodes.create },
  '/v1/nodes/detail': { GET: nodes.detail },
  '/v1/nodes/:node': { GET: nodes.show, PATCH: nodes.patch, DELETE: nodes.remove },
  '/v1/nodes/:node/states': { GET: nodeStates.states },
  '/v1/nodes/:node/states/provision': { PUT: nodeStates.provision },
  '/v1/nodes/:node/states/power': { PUT: nodeStates.power },
  '/v1/nodes/:node/maintenance': { PUT: nodeStates.maintenanceOn, DELETE: nodeStates.maintenanceOff },
  '/v1/nodes/:node/traits': { GET: nodeTraits.traits, PUT: nodeTraits.setTraits, DELETE: nodeTraits.removeTraits },
  '/v1/nodes/:node/traits/:trait': { PUT: nodeTraits.addTrait, DELETE: nodeTraits.removeTrait },
  '/v1/nodes/:node/validate': { GET: hardware.validateNode },
  '/v1/nodes/:node/vifs': { GET: hardware.vifs, POST: hardware.attach },
  '/v1/nodes/:node/vifs/:vif': { DELETE: hardware.detach },
  '/v1/nodes/:node/management/boot_device': { GET: hardware.bootDevice, PUT: hardware.setBootDevice },
  '/v1/nodes/:node/management/boot_device/supported': { GET: hardware.supportedBootDevices },
  '/v1/nodes/:node/states/console': { GET: hardware.getConsole, PUT: hardware.setConsole },
  '/v1/nodes/:node/states/raid': { PUT: hardware.setRaid },
  '/v1/nodes/:node/ports': { GET: ports.nodePorts },
  '/v1/nodes/:node/ports/detail': { GET: ports.nodePortsDetail },
  '/v1/nodes/:node/portgroups': { GET: portgroups.nodePortgroups },
  '/v1/nodes/:node/portgroups/detail': { GET: portgroups.nodePortgroupsDetail },
  '/v1/nodes/:node/volume': { GET: volumes.nodeRoot },
  '/v1/nodes/:node/volume/connectors': { GET: volumes.connectorLists.ofNode },
  '/v1/nodes/:node/volume/targets': { GET: volumes.targetLists.ofNode },
  '/v1/nodes/:node/allocation': { GET: nodeAllocation.allocation, DELETE: nodeAllocation.removeAllocation },
  '/v1/allocations': { GET: allocations.list, POST: allocations.create },
  '/v1/allocations/:allocation': { GET: allocations.show, PATCH: allocations.patch, DELETE: allocations.remove },
  '/v1/chassis': { GET: chassis.list, POST: chassis.create },
  '/v1/chassis/detail': { GET: chassis.detail },
  '/v1/chassis/:chassis': { GET: chassis.show, PATCH: chassis.patch, DELETE: chassis.remove },
  // the nodes in a chassis: seen as the node list sees them
  '/v1/chassis/:chassis/nodes': { GET: nodes.inChassis },
  '/v1/chassis/:chassis/nodes/detail': { GET: nodes.inChassisDetail },
  '/v1/ports': { GET: ports.listPortsEndpoint, POST: ports.createPortEndpoint },
  '/v1/ports/detail': { GET: ports.detailPorts },
  '/v1/ports/:port': { GET: ports.showPort, PATCH: ports.patchPortEndpoint, DELETE: ports.deletePortEndpoint },
  '/v1/portgroups': { GET: portgroups.listPortgroupsEndpoint, POST: portgroups.createPortgroupEndpoint },
  '/v1/portgroups/detail': { GET: portgroups.detailPortgroups },
  '/v1/portgroups/:portgroup': { GET: portgroups.showPortgroup, PATCH: portgroups.patchPortgroupEndpoint, DELETE: portgroups.deletePortgroupEndpoint },
  '/v1/portgroups/:portgroup/ports': { GET: ports.portgroupPorts },
  '/v1/portgroups/:portgroup/ports/detail': { GET: ports.portgroupPortsDetail },
  '/v1/drivers': { GET: drivers.list },
  '/v1/drivers/:driver': { GET: drivers.show },
  '/v1/drivers/:driver/properties': { GET: drivers.properties },
  '/v1/drivers/:driver/raid/logical_disk_properties': { GET: drivers.logicalDiskProperties },
  '/v1/volume': { GET: volumes.root },
  '/v1/volume/connectors': { GET: volumes.connectorLists.list, POST: volumes.connectors.create },
  '/v1/volume/connectors/:volume': { GET: volumes.connectors.show, PATCH: volumes.connectors.patch, DELETE: volumes.connectors.remove },
  '/v1/volume/targets': { GET: volumes.targetLists.list, POST: volumes.targets.create },
  '/v1/volume/targets/:volume': { GET: volumes.targets.show, PATCH: volumes.targets.patch, DELETE: volumes.targets.remove },
  '/v1/deploy_templates': { GET: deployTemplates.list, POST: deployTemplates.create },
  '/v1/deploy_templates/:template': { GET: deployTemplates.show, PATCH: deployTemplates.patch, DELETE: deployTemplates.remove },
  '/v1/conductors': { GET: conductors.list },
  '/v1/conductors/:hostname': { GET: conductors.show },
};

/**
 * Ironic's router (pecan) also reaches a node's states, management and maintenance controllers
 * with the node's identifier last: `/v1/nodes/states/console/{node}` is
 * `/v1/nodes/{node}/states/console` (ironic-tempest-plugin reads the console so). Same endpoints.
 */
const NODE_LAST = ['states', 'states/console', 'states/power', 'states/provision', 'states/raid', 'management/boot_device', 'maintenance'];
const nodeLastRoutes: RouteTable<Endpoint> = Object.fromEntries(NODE_LAST.map((sub) => [`/v1/nodes/${sub}/:node`, v1Routes[`/v1/nodes/:node/${sub}`]!]));

/**
 * Ironic also serves every v1 resource at the root of the API (`/nodes/…` is `/v1/nodes/…`): its
 * `bookmark` links point there and clients follow them. Same endpoints, same version rules.
 */
const bookmarkRoutes: RouteTable<Endpoint> = Object.fromEntries(
  Object.entries({ ...v1Routes, ...nodeLastRoutes }).map(([path, methods]) => [path.slice('/v1'.length), methods]),
);

/** What the OpenAPI document describes (openapi.ts, the reference page): the aliases are left out. */
export const documentedRoutes: RouteTable<Endpoint> = {
  '/': { GET: root },
  '/v1': { GET: v1 },
  // allot's own: the OpenAPI document of this route table (baremetal/openapi.ts)
  '/openapi.json': {
    GET: {
      public: true,
      unversioned: true,
      summary: 'this document',
      ok: [200],
      handle: async (req, ctx) => ({ body: baremetalDocument(documentedRoutes, req.baseUrl, { auth: ctx.config.auth }) }),
    },
  },
  ...v1Routes,
};

export const baremetalRoutes: RouteTable<Endpoint> = { ...documentedRoutes, ...nodeLastRoutes, ...bookmarkRoutes };

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
