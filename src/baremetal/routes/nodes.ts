// /v1/nodes and its sub-resources: list (and detail), create, show, JSON-patch, delete; states
// (show, provision, power), maintenance, traits, and the node's allocation.
import type { JsonSchema } from '../../core/json-schema.js';
import { PROVISION_STATES } from '../core.js';
import { badRequest, nodeNotFound, notFound } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { checkSchema } from '../request.js';
import {
  NODE_CREATE_SCHEMA,
  type NodeCreate,
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
  type ProvisionRequest,
} from '../node-service.js';
import { PATCH_SCHEMA, type PatchOp } from '../patch.js';
import { aliveConductors } from '../store/conductors.js';
import { type NodeFilters, type NodeRecord, findNode, listNodes } from '../store/nodes.js';
import { findAllocation } from '../store/allocations.js';
import { ALLOCATION_FIELDS, NODE_FIELDS, NODE_LIST_FIELDS, type ViewContext, allocationView, ironicTime, nodeView, parseFields } from '../views.js';
import { type BaremetalContext, TRAIT_SCHEMA, emptyBody, nextLink, parsePage, queryBool, queryUuid, requireParamVersions } from './common.js';
import { deleteNodeAllocation } from '../allocation-service.js';

type E = Endpoint;

const view = (req: IronicRequest, ctx: BaremetalContext): ViewContext => ({ mv: req.mv, base: req.baseUrl, conductor: ctx.rt.conductorId });

async function requireNode(req: IronicRequest, ctx: BaremetalContext): Promise<NodeRecord> {
  const ident = req.param('node');
  const node = await findNode(ctx.rt.database, ident);
  if (!node) throw nodeNotFound(ident);
  return node;
}

const FILTER_SINCE: Record<string, string> = {
  fields: '1.8',
  provision_state: '1.9',
  driver: '1.16',
  resource_class: '1.21',
  fault: '1.42',
  detail: '1.43',
  conductor_group: '1.46',
  conductor: '1.49',
  owner: '1.50',
  description_contains: '1.51',
  retired: '1.61',
  lessee: '1.65',
  shard: '1.82',
  sharded: '1.82',
};
const FILTERS = ['instance_uuid', 'maintenance', 'associated', ...Object.keys(FILTER_SINCE).filter((k) => k !== 'fields' && k !== 'detail')];
const PAGING = ['limit', 'marker', 'sort_key', 'sort_dir'];

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

async function listing(req: IronicRequest, ctx: BaremetalContext, detailPath: boolean) {
  const allowed = detailPath ? [...FILTERS, ...PAGING] : [...FILTERS, ...PAGING, 'fields', 'detail'];
  const args = req.queryArgs(allowed);
  requireParamVersions(req, args, FILTER_SINCE);
  const detail = detailPath || queryBool(args, 'detail') === true;
  if (!detailPath && args.detail !== undefined && args.fields !== undefined && detail) throw badRequest('Can not specify ?detail=True and fields in the same request.');
  const fields = parseFields(args.fields, NODE_FIELDS, req.mv);
  if (args.provision_state !== undefined && !(PROVISION_STATES as readonly string[]).includes(args.provision_state)) {
    throw badRequest(`Provision state "${args.provision_state}" is not valid`);
  }
  const filters: NodeFilters = {};
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
  if (args.description_contains !== undefined) filters.descriptionContains = args.description_contains;
  if (args.shard !== undefined) filters.shards = args.shard.split(',').map((s) => s.trim());
  if (args.conductor !== undefined) {
    // every live conductor services every node in allot; a dead or unknown one services none
    const alive = await aliveConductors(ctx.rt.database, ctx.rt.config.heartbeatTimeout);
    if (!alive.includes(args.conductor) && args.conductor !== ctx.rt.conductorId) filters.none = true;
  }
  const page = parsePage(args, SORT_KEYS);
  let after: { value: unknown; id: number } | undefined;
  if (page.marker) {
    const marker = await findNode(ctx.rt.database, page.marker);
    if (!marker) throw nodeNotFound(page.marker);
    after = { value: (marker as unknown as Record<string, unknown>)[page.sortKey], id: marker.id };
  }
  const nodes = await listNodes(ctx.rt.database, filters, { ...page, ...(after ? { after } : {}) });
  const shown = fields ?? (detail ? undefined : NODE_LIST_FIELDS);
  const body: Record<string, unknown> = { nodes: nodes.map((n) => nodeView(n, view(req, ctx), shown)) };
  const next = nextLink(req, detailPath ? 'nodes/detail' : 'nodes', page, nodes.length, nodes[nodes.length - 1]?.uuid);
  if (next) body.next = next;
  return { body };
}

export const list: E = { handle: (req, ctx) => listing(req, ctx, false) };
export const detail: E = { handle: (req, ctx) => listing(req, ctx, true) };

export const create: E = {
  async handle(req, ctx) {
    req.queryArgs([]);
    const body = req.json<NodeCreate>(NODE_CREATE_SCHEMA, 'node');
    const node = await createNode(ctx.rt, body, req.mv);
    return { status: 201, body: nodeView(node, view(req, ctx)), location: `${req.baseUrl}/v1/nodes/${node.uuid}` };
  },
};

export const show: E = {
  async handle(req, ctx) {
    const args = req.queryArgs(['fields']);
    requireParamVersions(req, args, FILTER_SINCE);
    const fields = parseFields(args.fields, NODE_FIELDS, req.mv);
    return { body: nodeView(await requireNode(req, ctx), view(req, ctx), fields) };
  },
};

export const patch: E = {
  async handle(req, ctx) {
    req.queryArgs([]);
    const ops = req.json<PatchOp[]>(PATCH_SCHEMA, 'patch');
    const node = await patchNode(ctx.rt, req.param('node'), ops, req.mv);
    return { body: nodeView(node, view(req, ctx)) };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    req.queryArgs([]);
    await deleteNode(ctx.rt, req.param('node'));
    return {};
  },
};

// ---- states ----------------------------------------------------------------------------------

export const states: E = {
  async handle(req, ctx) {
    req.queryArgs([]);
    const n = await requireNode(req, ctx);
    const body: Record<string, unknown> = {
      console_enabled: false,
      last_error: n.last_error,
      power_state: n.power_state,
      provision_state: n.provision_state,
      target_power_state: n.target_power_state,
      target_provision_state: n.target_provision_state,
      provision_updated_at: ironicTime(n.provision_updated_at),
    };
    if (req.mv.atLeast('1.12')) Object.assign(body, { raid_config: {}, target_raid_config: {} });
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

export const PROVISION_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    target: { type: 'string' },
    configdrive: { type: ['string', 'object', 'null'] },
    clean_steps: { type: ['array', 'null'], items: { type: 'object' } },
    deploy_steps: { type: ['array', 'null'], items: { type: 'object' } },
    rescue_password: { type: ['string', 'null'] },
    disable_ramdisk: { type: ['boolean', 'null'] },
  },
};

export const provision: E = {
  async handle(req, ctx) {
    const args = verbArgs(req, Object.keys(PROVISION_SCHEMA.properties!));
    if (args.target === undefined || args.target === null) throw badRequest('Missing mandatory parameter: target');
    checkSchema(PROVISION_SCHEMA, args, 'body');
    const request: ProvisionRequest = { target: args.target as string };
    for (const k of ['configdrive', 'clean_steps', 'deploy_steps', 'rescue_password', 'disable_ramdisk'] as const) {
      if (args[k] !== undefined && args[k] !== null) (request as unknown as Record<string, unknown>)[k] = args[k];
    }
    await setProvisionState(ctx.rt, req.param('node'), request, req.mv);
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${req.param('node')}/states` };
  },
};

export const POWER_SCHEMA: JsonSchema = { type: 'object', properties: { target: { type: 'string' }, timeout: { type: ['integer', 'null'] } } };

export const power: E = {
  async handle(req, ctx) {
    const args = verbArgs(req, ['target', 'timeout']);
    if (args.target === undefined || args.target === null) throw badRequest('Missing mandatory parameter: target');
    checkSchema(POWER_SCHEMA, args, 'body');
    await setPowerState(ctx.rt, req.param('node'), args.target as string, (args.timeout as number | null | undefined) ?? undefined, req.mv);
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${req.param('node')}/states` };
  },
};

export const MAINTENANCE_SCHEMA: JsonSchema = { type: 'object', properties: { reason: { type: ['string', 'null'] } } };

export const maintenanceOn: E = {
  async handle(req, ctx) {
    const args = verbArgs(req, ['reason']);
    checkSchema(MAINTENANCE_SCHEMA, args, 'body');
    await setMaintenance(ctx.rt, req.param('node'), true, (args.reason as string | null | undefined) ?? null);
    return { status: 202 };
  },
};

export const maintenanceOff: E = {
  async handle(req, ctx) {
    req.queryArgs([]);
    await setMaintenance(ctx.rt, req.param('node'), false, null);
    return { status: 202 };
  },
};

// ---- traits ----------------------------------------------------------------------------------

const TRAITS_SINCE = { since: '1.37' } as const;

export const traits: E = {
  ...TRAITS_SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    return { body: { traits: (await requireNode(req, ctx)).traits } };
  },
};

export const NODE_TRAITS_SCHEMA: JsonSchema = { type: 'object', properties: { traits: { type: 'array', items: TRAIT_SCHEMA } }, required: ['traits'], additionalProperties: false };

export const setTraits: E = {
  ...TRAITS_SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    const body = req.json<{ traits: string[] }>(NODE_TRAITS_SCHEMA, 'body');
    await setNodeTraits(ctx.rt, req.param('node'), body.traits);
    return { status: 204 };
  },
};

export const removeTraits: E = {
  ...TRAITS_SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    await removeAllNodeTraits(ctx.rt, req.param('node'));
    return { status: 204 };
  },
};

export const addTrait: E = {
  ...TRAITS_SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    emptyBody(req);
    const trait = req.param('trait');
    checkSchema(TRAIT_SCHEMA, trait, 'trait');
    await addNodeTrait(ctx.rt, req.param('node'), trait);
    return { status: 204, location: `${req.baseUrl}/v1/nodes/${req.param('node')}/traits/${trait}` };
  },
};

export const removeTrait: E = {
  ...TRAITS_SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    await removeNodeTrait(ctx.rt, req.param('node'), req.param('trait'));
    return { status: 204 };
  },
};

// ---- the node's allocation -------------------------------------------------------------------

const ALLOCATIONS_SINCE = { since: '1.52', tooOld: { status: 404, message: 'The API version does not allow allocations' } } as const;

export const allocation: E = {
  ...ALLOCATIONS_SINCE,
  async handle(req, ctx) {
    const args = req.queryArgs(['fields']);
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    const node = await requireNode(req, ctx);
    if (node.allocation_uuid === null) {
      // an instance_uuid set directly (without an allocation) is the spec's 400
      if (node.instance_uuid !== null && !(await findAllocation(ctx.rt.database, node.instance_uuid))) {
        throw badRequest(`Node ${node.uuid} has instance_uuid ${node.instance_uuid}, which does not correspond to any allocation`);
      }
      throw notFound(`Allocation for node ${req.param('node')} was not found`);
    }
    const found = await findAllocation(ctx.rt.database, node.allocation_uuid);
    if (!found) throw notFound(`Allocation for node ${req.param('node')} was not found`);
    return { body: allocationView(found, view(req, ctx), fields) };
  },
};

export const removeAllocation: E = {
  ...ALLOCATIONS_SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    await deleteNodeAllocation(ctx.rt, req.param('node'));
    return {};
  },
};
