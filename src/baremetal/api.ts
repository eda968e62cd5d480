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
import * as ports from './routes/ports.js';
import { root, v1 } from './routes/root.js';
import * as volumes from './routes/volumes.js';

/** A rule the handler checks itself, on what it loads (routes/scope.ts). */
const scoped = (policy: string) => ({ policy, scoped: true });

/**
 * The resources of v1 and their policies. The system's resources (conductors, chassis, drivers, deploy templates) are checked
 * before the handler: every other rule is scoped (routes/scope.ts) — checked against the node (or
 * the node of the port, port group) or allocation the handler loads, or (lists, new nodes and
 * allocations) deciding whose resources the request sees or makes, as Ironic checks them.
 */
const v1Routes: RouteTable<Endpoint> = {
  '/v1/nodes': { GET: { ...nodes.list, ...scoped('baremetal:node:list_all') }, POST: { ...nodes.create, ...scoped('baremetal:node:create') } },
  '/v1/nodes/detail': { GET: { ...nodes.detail, ...scoped('baremetal:node:list_all') } },
  '/v1/nodes/:node': {
    GET: { ...nodes.show, ...scoped('baremetal:node:get') },
    PATCH: { ...nodes.patch, ...scoped('baremetal:node:update') },
    DELETE: { ...nodes.remove, ...scoped('baremetal:node:delete') },
  },
  '/v1/nodes/:node/states': { GET: { ...nodeStates.states, ...scoped('baremetal:node:get_states') } },
  '/v1/nodes/:node/states/provision': { PUT: { ...nodeStates.provision, ...scoped('baremetal:node:set_provision_state') } },
  '/v1/nodes/:node/states/power': { PUT: { ...nodeStates.power, ...scoped('baremetal:node:set_power_state') } },
  '/v1/nodes/:node/maintenance': {
    PUT: { ...nodeStates.maintenanceOn, ...scoped('baremetal:node:set_maintenance') },
    DELETE: { ...nodeStates.maintenanceOff, ...scoped('baremetal:node:clear_maintenance') },
  },
  '/v1/nodes/:node/traits': {
    GET: { ...nodeTraits.traits, ...scoped('baremetal:node:traits:list') },
    PUT: { ...nodeTraits.setTraits, ...scoped('baremetal:node:traits:set') },
    DELETE: { ...nodeTraits.removeTraits, ...scoped('baremetal:node:traits:delete') },
  },
  '/v1/nodes/:node/traits/:trait': {
    PUT: { ...nodeTraits.addTrait, ...scoped('baremetal:node:traits:set') },
    DELETE: { ...nodeTraits.removeTrait, ...scoped('baremetal:node:traits:delete') },
  },
  '/v1/nodes/:node/validate': { GET: { ...hardware.validateNode, ...scoped('baremetal:node:validate') } },
  '/v1/nodes/:node/vifs': {
    GET: { ...hardware.vifs, ...scoped('baremetal:node:vif:list') },
    POST: { ...hardware.attach, ...scoped('baremetal:node:vif:attach') },
  },
  '/v1/nodes/:node/vifs/:vif': { DELETE: { ...hardware.detach, ...scoped('baremetal:node:vif:detach') } },
  '/v1/nodes/:node/management/boot_device': {
    GET: { ...hardware.bootDevice, ...scoped('baremetal:node:get_boot_device') },
    PUT: { ...hardware.setBootDevice, ...scoped('baremetal:node:set_boot_device') },
  },
  '/v1/nodes/:node/management/boot_device/supported': { GET: { ...hardware.supportedBootDevices, ...scoped('baremetal:node:get_boot_device') } },
  '/v1/nodes/:node/states/console': {
    GET: { ...hardware.getConsole, ...scoped('baremetal:node:get_console') },
    PUT: { ...hardware.setConsole, ...scoped('baremetal:node:set_console_state') },
  },
  '/v1/nodes/:node/states/raid': { PUT: { ...hardware.setRaid, ...scoped('baremetal:node:set_raid_state') } },
  '/v1/nodes/:node/ports': { GET: { ...ports.nodePorts, ...scoped('baremetal:port:list') } },
  '/v1/nodes/:node/ports/detail': { GET: { ...ports.nodePortsDetail, ...scoped('baremetal:port:list') } },
  '/v1/nodes/:node/portgroups': { GET: { ...ports.nodePortgroups, ...scoped('baremetal:portgroup:list') } },
  '/v1/nodes/:node/portgroups/detail': { GET: { ...ports.nodePortgroupsDetail, ...scoped('baremetal:portgroup:list') } },
  '/v1/nodes/:node/volume': { GET: { ...volumes.nodeRoot, ...scoped('baremetal:volume:list') } },
  '/v1/nodes/:node/volume/connectors': { GET: { ...volumes.connectorLists.ofNode, ...scoped('baremetal:volume:list') } },
  '/v1/nodes/:node/volume/targets': { GET: { ...volumes.targetLists.ofNode, ...scoped('baremetal:volume:list') } },
  '/v1/nodes/:node/allocation': {
    GET: { ...nodeAllocation.allocation, ...scoped('baremetal:allocation:get') },
    DELETE: { ...nodeAllocation.removeAllocation, ...scoped('baremetal:allocation:delete') },
  },
  '/v1/allocations': {
    GET: { ...allocations.list, ...scoped('baremetal:allocation:list_all') },
    POST: { ...allocations.create, ...scoped('baremetal:allocation:create') },
  },
  '/v1/allocations/:allocation': {
    GET: { ...allocations.show, ...scoped('baremetal:allocation:get') },
    PATCH: { ...allocations.patch, ...scoped('baremetal:allocation:update') },
    DELETE: { ...allocations.remove, ...scoped('baremetal:allocation:delete') },
  },
  '/v1/chassis': {
    GET: { ...chassis.list, policy: 'baremetal:chassis:get' },
    POST: { ...chassis.create, policy: 'baremetal:chassis:create' },
  },
  '/v1/chassis/detail': { GET: { ...chassis.detail, policy: 'baremetal:chassis:get' } },
  '/v1/chassis/:chassis': {
    GET: { ...chassis.show, policy: 'baremetal:chassis:get' },
    PATCH: { ...chassis.patch, policy: 'baremetal:chassis:update' },
    DELETE: { ...chassis.remove, policy: 'baremetal:chassis:delete' },
  },
  // the nodes in a chassis: seen as the node list sees them
  '/v1/chassis/:chassis/nodes': { GET: { ...nodes.inChassis, ...scoped('baremetal:node:list_all') } },
  '/v1/chassis/:chassis/nodes/detail': { GET: { ...nodes.inChassisDetail, ...scoped('baremetal:node:list_all') } },
  '/v1/ports': {
    GET: { ...ports.listPortsEndpoint, ...scoped('baremetal:port:list_all') },
    POST: { ...ports.createPortEndpoint, ...scoped('baremetal:port:create') },
  },
  '/v1/ports/detail': { GET: { ...ports.detailPorts, ...scoped('baremetal:port:list_all') } },
  '/v1/ports/:port': {
    GET: { ...ports.showPort, ...scoped('baremetal:port:get') },
    PATCH: { ...ports.patchPortEndpoint, ...scoped('baremetal:port:update') },
    DELETE: { ...ports.deletePortEndpoint, ...scoped('baremetal:port:delete') },
  },
  '/v1/portgroups': {
    GET: { ...ports.listPortgroupsEndpoint, ...scoped('baremetal:portgroup:list_all') },
    POST: { ...ports.createPortgroupEndpoint, ...scoped('baremetal:portgroup:create') },
  },
  '/v1/portgroups/detail': { GET: { ...ports.detailPortgroups, ...scoped('baremetal:portgroup:list_all') } },
  '/v1/portgroups/:portgroup': {
    GET: { ...ports.showPortgroup, ...scoped('baremetal:portgroup:get') },
    PATCH: { ...ports.patchPortgroupEndpoint, ...scoped('baremetal:portgroup:update') },
    DELETE: { ...ports.deletePortgroupEndpoint, ...scoped('baremetal:portgroup:delete') },
  },
  '/v1/portgroups/:portgroup/ports': { GET: { ...ports.portgroupPorts, ...scoped('baremetal:port:list') } },
  '/v1/portgroups/:portgroup/ports/detail': { GET: { ...ports.portgroupPortsDetail, ...scoped('baremetal:port:list') } },
  '/v1/drivers': { GET: { ...drivers.list, policy: 'baremetal:driver:get' } },
  '/v1/drivers/:driver': { GET: { ...drivers.show, policy: 'baremetal:driver:get' } },
  '/v1/drivers/:driver/properties': { GET: { ...drivers.properties, policy: 'baremetal:driver:get_properties' } },
  '/v1/drivers/:driver/raid/logical_disk_properties': {
    GET: { ...drivers.logicalDiskProperties, policy: 'baremetal:driver:get_raid_logical_disk_properties' },
  },
  '/v1/volume': { GET: { ...volumes.root, ...scoped('baremetal:volume:list') } },
  '/v1/volume/connectors': {
    GET: { ...volumes.connectorLists.list, ...scoped('baremetal:volume:list_all') },
    POST: { ...volumes.connectors.create, ...scoped('baremetal:volume:create') },
  },
  '/v1/volume/connectors/detail': { GET: { ...volumes.connectorLists.detail, ...scoped('baremetal:volume:list_all') } },
  '/v1/volume/connectors/:volume': {
    GET: { ...volumes.connectors.show, ...scoped('baremetal:volume:get') },
    PATCH: { ...volumes.connectors.patch, ...scoped('baremetal:volume:update') },
    DELETE: { ...volumes.connectors.remove, ...scoped('baremetal:volume:delete') },
  },
  '/v1/volume/targets': {
    GET: { ...volumes.targetLists.list, ...scoped('baremetal:volume:list_all') },
    POST: { ...volumes.targets.create, ...scoped('baremetal:volume:create') },
  },
  '/v1/volume/targets/detail': { GET: { ...volumes.targetLists.detail, ...scoped('baremetal:volume:list_all') } },
  '/v1/volume/targets/:volume': {
    GET: { ...volumes.targets.show, ...scoped('baremetal:volume:get') },
    PATCH: { ...volumes.targets.patch, ...scoped('baremetal:volume:update') },
    DELETE: { ...volumes.targets.remove, ...scoped('baremetal:volume:delete') },
  },
  '/v1/deploy_templates': {
    GET: { ...deployTemplates.list, policy: 'baremetal:deploy_template:get' },
    POST: { ...deployTemplates.create, policy: 'baremetal:deploy_template:create' },
  },
  '/v1/deploy_templates/detail': { GET: { ...deployTemplates.detail, policy: 'baremetal:deploy_template:get' } },
  '/v1/deploy_templates/:template': {
    GET: { ...deployTemplates.show, policy: 'baremetal:deploy_template:get' },
    PATCH: { ...deployTemplates.patch, policy: 'baremetal:deploy_template:update' },
    DELETE: { ...deployTemplates.remove, policy: 'baremetal:deploy_template:delete' },
  },
  '/v1/conductors': { GET: { ...conductors.list, policy: 'baremetal:conductor:get' } },
  '/v1/conductors/:hostname': { GET: { ...conductors.show, policy: 'baremetal:conductor:get' } },
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
  '/': { GET: { ...root, public: true } },
  '/v1': { GET: { ...v1, public: true } },
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
