// /v1/nodes and its sub-resources: list (and detail), create, show, JSON-patch, delete; states
// (show, provision, power), maintenance, traits, and the node's allocation.
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { POWER_TARGETS, PROVISION_STATES, VERB_SINCE } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import { ApiError } from '../../http/errors.js';
import { CODES, badRequest, ironicError, notAcceptable } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { deleteNodeAllocation } from '../services/allocations.js';
import {
  addNodeTrait,
  createNode,
  deleteNode,
  patchNode,
  removeAllNodeTraits,
  removeNodeTrait,
  setMaintenance,
  setNodeTraits,
  setPowerState,
  setProvisionState,
} from '../services/nodes.js';
import { lookupAllocation } from '../services/allocation-reads.js';
import { aliveConductorHosts } from '../services/conductors.js';
import { type NodeFilters, type NodeRecord, getNode, listNodePage } from '../services/node-reads.js';
import { type ChassisRecord, getChassis } from '../services/chassis.js';
import { isUuidLike } from '../../core/uuid.js';
import { allocationTarget, authorizedNode, listScope, nodeTarget } from './scope.js';
import { parseBool } from '../core/rules.js';
import { maskInstanceSecrets, maskSecrets } from '../core/secrets.js';
import {
  ALLOCATION_FIELDS,
  NODE_FIELDS,
  NODE_LIST_FIELDS,
  type ViewContext,
  allocationView,
  ironicTime,
  nodeView,
  parseFields,
  provisionStateAt,
} from '../views.js';
import { type ParamVersions, emptyBody, nodeIdent, queryBool, queryUuid, requireParamVersions } from './common.js';
import { type Collection, listPage, listRequest } from './listing.js';
import { PATCHABLE, checkFieldVersions, createFields, patchedFields } from './node-fields.js';
import { baremetalDomainError } from '../core/domain-errors.js';

type E = Endpoint;

const view = (req: IronicRequest, ctx: BaremetalContext): ViewContext => ({ mv: req.mv, base: req.baseUrl, conductor: ctx.conductorId });

/**
 * A node as this caller may see it: secrets in `driver_info` and `instance_info` masked unless
 * `show_password` / `show_instance_secrets` allow them (core/secrets.ts). Below `baremetal:node:get:filter_threshold` (the system
 * readers) Ironic redacts the fields that tell of the infrastructure unless their own rule allows
 * them (by default the owner's readers: not a lessee); the texts are Ironic's.
 */
function shownNode(req: IronicRequest, ctx: BaremetalContext, node: NodeRecord, fields?: readonly string[]): Record<string, unknown> {
  const body = nodeView(node, view(req, ctx), fields);
  const target = nodeTarget(node);
  // secrets are masked for everyone the policy does not name (by default: everyone)
  if (body.driver_info && !req.allows('show_password', target)) body.driver_info = maskSecrets(body.driver_info);
  if (body.instance_info && !req.allows('show_instance_secrets', target)) body.instance_info = maskInstanceSecrets(body.instance_info);
  if (req.allows('baremetal:node:get:filter_threshold', target)) return body;
  const hidden = (field: string) => field in body && !req.allows(`baremetal:node:get:${field}`, target);
  if (hidden('last_error')) body.last_error = '** Value Redacted - Requires baremetal:node:get:last_error permission. **';
  if (hidden('reservation')) body.reservation = '** Redacted - requires baremetal:node:get:reservation permission. **';
  if (hidden('driver_internal_info')) body.driver_internal_info = { content: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **' };
  if (hidden('driver_info')) body.driver_info = { content: '** Redacted - requires baremetal:node:get:driver_info permission. **' };
  return body;
}

/**
 * The node list's versioned parameters as Ironic checks them (api/controllers/v1/utils.py):
 * most filters name their version in the 406. Ironic does not check `description_contains`
 * (1.51) or `retired` (1.61) against the version, nor does allot; `detail` (1.43) is a 400.
 */
const PARAM_VERSIONS: ParamVersions = {
  fields: { since: '1.8' },
  provision_state: { since: '1.9' },
  driver: { since: '1.16', named: true },
  resource_class: { since: '1.21', named: true },
  fault: { since: '1.42', named: true },
  conductor_group: { since: '1.46', named: true },
  conductor: { since: '1.49', named: true },
  owner: { since: '1.50', named: true },
  lessee: { since: '1.65', named: true },
  shard: { since: '1.82', named: true },
  sharded: { since: '1.82', named: true },
};
const FILTERS = [
  'instance_uuid',
  'chassis_uuid',
  'maintenance',
  'associated',
  'description_contains',
  'retired',
  'project',
  ...Object.keys(PARAM_VERSIONS).filter((k) => k !== 'fields'),
];
/** Ironic's node faults (ironic/common/faults.py), in its order. */
const FAULTS = ['power failure', 'clean failure', 'rescue abort failure'];

/** Fields a node list may not be sorted by (Ironic's invalid_sort_key_list). */
const UNSORTABLE = [
  'properties',
  'driver_info',
  'extra',
  'instance_info',
  'driver_internal_info',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
  'traits',
  'network_data',
];

/** Columns a node list may be sorted by (not documents, not traits). */
const SORT_KEYS = [
  'id',
  'uuid',
  'name',
  'created_at',
  'updated_at',
  'provision_updated_at',
  'inspection_started_at',
  'inspection_finished_at',
  'driver',
  'resource_class',
  'provision_state',
  'target_provision_state',
  'power_state',
  'target_power_state',
  'maintenance',
  'maintenance_reason',
  'fault',
  'instance_uuid',
  'owner',
  'lessee',
  'conductor_group',
  'description',
  'reservation',
  'last_error',
  'protected',
  'retired',
  'shard',
  'automated_clean',
];

/** The node collection: sorted by columns (not documents, not traits); the list shows uuid, name and a few states. */
const NODES: Collection = {
  key: 'nodes',
  table: NODE_FIELDS,
  defaults: NODE_LIST_FIELDS,
  sortKeys: SORT_KEYS,
  unsortable: UNSORTABLE,
  detail: 'common',
  sortKeyVersions: NODE_FIELDS,
};

/** `inChassis`: the nodes of /v1/chassis/{chassis}/nodes (the chassis already checked). */
async function listing(req: IronicRequest, ctx: BaremetalContext, detailPath: boolean, inChassis?: ChassisRecord) {
  // Whose nodes first, as Ironic checks: a project without list_all sees its own (owned or leased).
  const project = listScope(req, 'node', req.query.get('project') ?? undefined);
  const names = inChassis ? FILTERS.filter((f) => f !== 'chassis_uuid') : FILTERS;
  const path = inChassis ? `chassis/${inChassis.uuid}/nodes` : 'nodes';
  const list = listRequest(req, NODES, path, detailPath, names, PARAM_VERSIONS);
  const { args } = list;
  if (args.provision_state !== undefined && !(PROVISION_STATES as readonly string[]).includes(args.provision_state)) {
    throw badRequest(`Provision state "${args.provision_state}" is not valid`);
  }
  if (args.fault !== undefined && !FAULTS.includes(args.fault)) {
    throw badRequest(`Unrecognized fault "${args.fault}" is specified, allowed faults are (${FAULTS.map((f) => `'${f}'`).join(', ')})`);
  }
  const chassisUuid = queryUuid(args, 'chassis_uuid');
  const chassis = inChassis ?? (chassisUuid === undefined ? undefined : await getChassis(ctx, chassisUuid));
  const filters: NodeFilters = {};
  if (chassis) filters.chassisId = chassis.id;
  const instanceUuid = queryUuid(args, 'instance_uuid');
  if (instanceUuid !== undefined) filters.instanceUuid = instanceUuid;
  for (const [key, name] of [
    ['maintenance', 'maintenance'],
    ['associated', 'associated'],
    ['retired', 'retired'],
    ['sharded', 'sharded'],
  ] as const) {
    const b = queryBool(args, name);
    if (b !== undefined) filters[key] = b;
  }
  if (args.provision_state !== undefined) filters.provisionState = args.provision_state;
  if (args.driver !== undefined) filters.driver = args.driver;
  if (args.resource_class !== undefined) filters.resourceClass = args.resource_class;
  if (args.conductor_group !== undefined) filters.conductorGroup = args.conductor_group;
  if (args.fault !== undefined) filters.fault = args.fault;
  if (args.owner !== undefined) filters.owner = args.owner;
  if (args.lessee !== undefined) filters.lessee = args.lessee;
  if (project !== undefined) filters.project = project;
  if (args.description_contains !== undefined) filters.descriptionContains = args.description_contains;
  if (args.shard !== undefined) filters.shards = args.shard.split(',').map((s) => s.trim());
  if (args.conductor !== undefined) {
    // every live conductor services every node in allot; a dead or unknown one services none
    const alive = await aliveConductorHosts(ctx);
    if (!alive.includes(args.conductor) && args.conductor !== ctx.conductorId) filters.none = true;
  }
  return listPage(req, NODES, list, view(req, ctx), {
    marker: (uuid) => getNode(ctx, uuid),
    find: (page) => listNodePage(ctx, filters, page),
    view: (node, _context, fields) => shownNode(req, ctx, node, fields),
  });
}

export const list: E = { handle: (req, ctx) => listing(req, ctx, false) };
export const detail: E = { handle: (req, ctx) => listing(req, ctx, true) };

/** The chassis of /v1/chassis/{chassis}/nodes: anything but a uuid is Ironic's 400, an unknown one its 404. */
async function pathChassis(req: IronicRequest, ctx: BaremetalContext): Promise<ChassisRecord> {
  const ident = req.param('chassis');
  if (!isUuidLike(ident)) throw badRequest(`Expected UUID for chassis_uuid: ${ident}`);
  return getChassis(ctx, ident);
}
export const inChassis: E = { handle: async (req, ctx) => listing(req, ctx, false, await pathChassis(req, ctx)) };
export const inChassisDetail: E = { handle: async (req, ctx) => listing(req, ctx, true, await pathChassis(req, ctx)) };

export const create: E = {
  async handle(req, ctx) {
    // A project admin (or service) creates nodes for its own project (Ironic's
    // project_admin_can_manage_own_nodes, on by default); anyone else needs node:create.
    const selfOwned = req.allows('baremetal:node:create:self_owned_node');
    if (!selfOwned) req.authorize('baremetal:node:create');
    req.queryArgs([]);
    const body = req.json<Record<string, unknown>>(schemas.nodeCreate, 'node');
    const { uuid, fields } = createFields(body, req.mv);
    if (selfOwned && req.credentials && req.credentials.systemScope !== 'all') {
      const project = req.credentials.projectId;
      if (fields.owner && fields.owner !== project)
        throw badRequest('Cannot create a node as a project scoped admin with an owner other than your own project.');
      fields.owner = project;
    }
    // before 1.11 nodes were born available (and, with no power state, still unallocatable)
    const node = await createNode(ctx, { uuid, fields, provisionState: req.mv.atLeast('1.11') ? 'enroll' : 'available' });
    return { status: 201, body: shownNode(req, ctx, node), location: `${req.baseUrl}/v1/nodes/${node.uuid}` };
  },
};

export const show: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    const args = req.queryArgs(['fields']);
    requireParamVersions(req, args, PARAM_VERSIONS);
    const fields = parseFields(args.fields, NODE_FIELDS, req.mv);
    return { body: shownNode(req, ctx, await authorizedNode(req, ctx, ident), fields) };
  },
};

/** The rules a node patch needs besides seeing the node: one per field it changes (Ironic's list), else `update`. */
const FIELD_RULES: Record<string, string> = {
  instance_info: 'baremetal:node:update_instance_info',
  extra: 'baremetal:node:update_extra',
  driver_info: 'baremetal:node:update:driver_info',
  properties: 'baremetal:node:update:properties',
  chassis_uuid: 'baremetal:node:update:chassis_uuid',
  instance_uuid: 'baremetal:node:update:instance_uuid',
  lessee: 'baremetal:node:update:lessee',
  owner: 'baremetal:node:update:owner',
  driver: 'baremetal:node:update:driver_interfaces',
  network_data: 'baremetal:node:update:network_data',
  conductor_group: 'baremetal:node:update:conductor_group',
  name: 'baremetal:node:update:name',
  retired: 'baremetal:node:update:retired',
  retired_reason: 'baremetal:node:update:retired',
  shard: 'baremetal:node:update:shard',
  parent_node: 'baremetal:node:update:parent_node',
};

function patchRules(ops: readonly PatchOp[]): string[] {
  const rules = new Set<string>();
  let generic = false;
  for (const op of ops) {
    const field = rootField(op);
    const rule =
      FIELD_RULES[field] ??
      (field.endsWith('_interface') ? 'baremetal:node:update:driver_interfaces' : undefined) ??
      (field === 'automated_clean' && parseBool(op.value) === false ? 'baremetal:node:disable_cleaning' : undefined);
    if (rule) rules.add(rule);
    else generic = true;
  }
  if (generic || rules.size === 0) rules.add('baremetal:node:update');
  return [...rules];
}

export const patch: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    req.queryArgs([]);
    const ops = req.json<PatchOp[]>(schemas.patch, 'patch');
    for (const op of ops) {
      const field = rootField(op);
      if (!PATCHABLE.includes(field)) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
    }
    checkFieldVersions([...new Set(ops.map(rootField))], req.mv);
    const before = await authorizedNode(req, ctx, ident, ...patchRules(ops));
    // a node left its chassis only from 1.25 on
    if (before.chassis_uuid !== null && !req.mv.atLeast('1.25') && ops.some((op) => op.path === '/chassis_uuid' && (op.op === 'remove' || op.value === null)))
      throw notAcceptable();
    // a class the patch sets is made known to the backend before the patch's transaction (for the
    // placement backend: created in Placement); one longer than a node's resource_class may be
    // (Ironic's 80 characters, schemas.node) is refused by the patch itself, so not created
    const newClass = ops.filter((op) => rootField(op) === 'resource_class').pop()?.value;
    const node = await patchNode(ctx, ident, {
      edit(before) {
        const after = applyPatch(before, ops);
        checkSchema(schemas.node, after, 'patch');
        return patchedFields(before, after, ident);
      },
      resourceClass: typeof newClass === 'string' && newClass.length <= schemas.RESOURCE_CLASS_MAX_LENGTH ? newClass : null,
      ...(ops.some((op) => op.path === '/owner' && op.op !== 'remove')
        ? { setsOwner: { allowedWhileActive: (locked: NodeRecord) => req.allows('baremetal:node:update_owner_provisioned', nodeTarget(locked)) } }
        : {}),
    });
    return { body: shownNode(req, ctx, node) };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    req.queryArgs([]);
    // a project admin may delete its own project's nodes (Ironic's project_admin_can_manage_own_nodes, on by default)
    const node = await authorizedNode(req, ctx, ident);
    if (!req.allows('baremetal:node:delete', nodeTarget(node))) req.authorize('baremetal:node:delete:self_owned_node', nodeTarget(node));
    await deleteNode(ctx, ident);
    return {};
  },
};

// ---- states ----------------------------------------------------------------------------------

export const states: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs([]);
    const n = await authorizedNode(req, ctx, ident, 'baremetal:node:get_states');
    const body: Record<string, unknown> = {
      console_enabled: n.console_enabled === 1,
      last_error: n.last_error,
      power_state: n.power_state,
      provision_state: provisionStateAt(n.provision_state, req.mv),
      target_power_state: n.target_power_state,
      target_provision_state: n.target_provision_state,
      provision_updated_at: ironicTime(n.provision_updated_at),
    };
    if (req.mv.atLeast('1.12')) Object.assign(body, { raid_config: JSON.parse(n.raid_config), target_raid_config: JSON.parse(n.target_raid_config) });
    if (req.mv.atLeast('1.75')) Object.assign(body, { boot_mode: null, secure_boot: null });
    return { body };
  },
};

/** Ironic reads the state verbs' bodies as keyword arguments: unknown ones are "Unexpected arguments". */
function verbArgs(req: IronicRequest, allowed: string[]): Record<string, unknown> {
  req.queryArgs([]);
  const body = req.jsonBody();
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw badRequest(`Unexpected arguments: ${unknown.join(', ')}`);
  return body as Record<string, unknown>;
}

export const provision: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, 'baremetal:node:set_provision_state');
    const args = verbArgs(req, Object.keys(schemas.provision.properties!));
    if (args.target === undefined || args.target === null) throw badRequest('Missing mandatory parameter: target');
    checkSchema(schemas.provision, args, 'body');
    const given = (k: string) => args[k] !== undefined && args[k] !== null;
    const target = args.target as string;
    const since = VERB_SINCE[target];
    if (since && !req.mv.atLeast(since)) throw notAcceptable();
    if (given('clean_steps') && target !== 'clean') throw badRequest('"clean_steps" is only valid when setting target provision state to clean');
    if (target === 'clean' && !args.clean_steps) throw badRequest('"clean_steps" is required when setting target provision state to clean');
    if (given('deploy_steps') && !['active', 'deploy', 'rebuild'].includes(target)) {
      throw badRequest(`"deploy_steps" is only valid when setting target provision state to active or rebuild`);
    }
    if (given('configdrive') && !['active', 'deploy', 'rebuild'].includes(target)) {
      throw badRequest(`Adding a config drive is only supported when setting provision state to active or rebuild`);
    }
    if (given('rescue_password') && target !== 'rescue') throw badRequest('"rescue_password" is only valid when setting target provision state to rescue');
    if (target === 'rescue' && !args.rescue_password)
      throw badRequest('A non-empty "rescue_password" is required when setting target provision state to rescue');
    if (given('disable_ramdisk') && target !== 'clean') throw badRequest('"disable_ramdisk" is only valid when setting target provision state to clean');
    await setProvisionState(ctx, ident, target);
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${ident}/states` };
  },
};

export const power: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, 'baremetal:node:set_power_state');
    const args = verbArgs(req, ['target', 'timeout']);
    if (args.target === undefined || args.target === null) throw badRequest('Missing mandatory parameter: target');
    checkSchema(schemas.power, args, 'body');
    const target = args.target as string;
    const timeout = (args.timeout as number | null | undefined) ?? undefined;
    if (timeout !== undefined && !req.mv.atLeast('1.27')) throw notAcceptable();
    if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1)) throw badRequest('timeout has to be positive integer');
    const spec = POWER_TARGETS[target];
    await setPowerState(ctx, ident, target, spec === undefined || req.mv.atLeast(spec.since));
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${ident}/states` };
  },
};

export const maintenanceOn: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, 'baremetal:node:set_maintenance');
    const args = verbArgs(req, ['reason']);
    checkSchema(schemas.maintenance, args, 'body');
    await setMaintenance(ctx, ident, true, (args.reason as string | null | undefined) ?? null);
    return { status: 202 };
  },
};

export const maintenanceOff: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, 'baremetal:node:clear_maintenance');
    req.queryArgs([]);
    await setMaintenance(ctx, ident, false, null);
    return { status: 202 };
  },
};

// ---- traits ----------------------------------------------------------------------------------

/**
 * Before 1.37 Ironic has no traits controller and the path falls through to the node's, which
 * checks the identifier first and then answers GET with a 406 (once the node is found), PUT with
 * its 405 and DELETE with "Resource could not be found.".
 */
async function requireTraitsVersion(req: IronicRequest, ctx: BaremetalContext, ident: string): Promise<void> {
  if (req.mv.atLeast('1.37')) return;
  if (req.method === 'GET') {
    await authorizedNode(req, ctx, ident);
    throw notAcceptable();
  }
  if (req.method === 'PUT') throw new ApiError(405, CODES.framework, '', {}, { allow: 'DELETE, GET, PATCH, POST' });
  throw ironicError(404, 'Resource could not be found.');
}

export const traits: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    await requireTraitsVersion(req, ctx, ident);
    req.queryArgs([]);
    return { body: { traits: (await authorizedNode(req, ctx, ident, 'baremetal:node:traits:list')).traits } };
  },
};

export const setTraits: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    await requireTraitsVersion(req, ctx, ident);
    await authorizedNode(req, ctx, ident, 'baremetal:node:traits:set');
    req.queryArgs([]);
    const body = req.json<{ traits: string[] }>(schemas.nodeTraits, 'body');
    await setNodeTraits(ctx, ident, body.traits);
    return { status: 204 };
  },
};

export const removeTraits: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    await requireTraitsVersion(req, ctx, ident);
    await authorizedNode(req, ctx, ident, 'baremetal:node:traits:delete');
    req.queryArgs([]);
    await removeAllNodeTraits(ctx, ident);
    return { status: 204 };
  },
};

export const addTrait: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    await requireTraitsVersion(req, ctx, ident);
    await authorizedNode(req, ctx, ident, 'baremetal:node:traits:set');
    req.queryArgs([]);
    emptyBody(req);
    const trait = req.param('trait');
    checkSchema(schemas.trait, trait, 'trait');
    await addNodeTrait(ctx, ident, trait);
    return { status: 204, location: `${req.baseUrl}/v1/nodes/${ident}/traits/${trait}` };
  },
};

export const removeTrait: E = {
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    await requireTraitsVersion(req, ctx, ident);
    await authorizedNode(req, ctx, ident, 'baremetal:node:traits:delete');
    req.queryArgs([]);
    await removeNodeTrait(ctx, ident, req.param('trait'));
    return { status: 204 };
  },
};

// ---- the node's allocation -------------------------------------------------------------------

const noAllocation = (ident: string) => baremetalDomainError('node_allocation_not_found', { ident }, `node ${ident} has no allocation`);

/** Before 1.52 the node has no allocation sub-resource: the framework's bare 404. */
const ALLOCATIONS_SINCE = { since: '1.52' } as const;

export const allocation: E = {
  ...ALLOCATIONS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    const args = req.queryArgs(['fields']);
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    const node = await authorizedNode(req, ctx, ident);
    if (node.allocation_uuid === null) {
      // an instance_uuid set directly (without an allocation) is the spec's 400
      if (node.instance_uuid !== null && !(await lookupAllocation(ctx, node.instance_uuid))) {
        throw badRequest(`Node ${node.uuid} has instance_uuid ${node.instance_uuid}, which does not correspond to any allocation`);
      }
      throw noAllocation(ident);
    }
    const found = await lookupAllocation(ctx, node.allocation_uuid);
    if (!found) throw noAllocation(ident);
    req.authorize('baremetal:allocation:get', allocationTarget(found));
    return { body: allocationView(found, view(req, ctx), fields) };
  },
};

export const removeAllocation: E = {
  ...ALLOCATIONS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    req.queryArgs([]);
    const node = await authorizedNode(req, ctx, ident);
    const found = node.allocation_uuid === null ? undefined : await lookupAllocation(ctx, node.allocation_uuid);
    if (found) req.authorize('baremetal:allocation:delete', allocationTarget(found));
    await deleteNodeAllocation(ctx, ident);
    return {};
  },
};
