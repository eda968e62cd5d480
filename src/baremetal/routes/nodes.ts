// /v1/nodes: list (and detail, and the nodes of a chassis), create, show, JSON-patch, delete. A
// node's states and state verbs are node-states.ts, its traits node-traits.ts, its allocation
// node-allocation.ts, its fake hardware node-hardware.ts; the fields it is created and patched
// with node-fields.ts.
import type * as Wire from '../../client/baremetal-wire.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { PROVISION_STATES } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import { badRequest, notAcceptable } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import { createNode, deleteNode, patchNode } from '../services/nodes.js';
import { aliveConductorHosts } from '../services/conductors.js';
import { type NodeColumn, type NodeFilters, type NodeRecord, getNode, listNodePage } from '../services/node-reads.js';
import { type ChassisRecord, getChassis } from '../services/chassis.js';
import { isUuidLike } from '../../core/uuid.js';
import { authorizedNode, listScope, nodeTarget, scoped } from './scope.js';
import { parseBool } from '../core/rules.js';
import { maskInstanceSecrets, maskSecrets } from '../core/secrets.js';
import { NODE_FIELDS, NODE_LIST_FIELDS, type ViewContext, nodeView, parseFields } from '../views.js';
import { nodeIdent, queryUuid, viewContext } from './common.js';
import { type Collection, columnConditions, listPage, listRequest } from './listing.js';
import { FIELDS_SINCE_1_8 as FIELDS, columnOf, detailQuery, flag, listQuery, showQuery, since, text } from './query.js';
import { PATCHABLE, checkFieldVersions, createFields, patchedFields } from './node-fields.js';

type E = Endpoint;

/**
 * A node as this caller may see it: secrets in `driver_info` and `instance_info` masked unless
 * `show_password` / `show_instance_secrets` allow them (core/secrets.ts). Below `baremetal:node:get:filter_threshold` (the system
 * readers) Ironic redacts the fields that tell of the infrastructure unless their own rule allows
 * them (by default the owner's readers: not a lessee); the texts are Ironic's.
 */
function shownNode(req: IronicRequest, ctx: BaremetalContext, node: NodeRecord): Wire.Node;
function shownNode(req: IronicRequest, ctx: BaremetalContext, node: NodeRecord, fields?: readonly string[]): Wire.NodeSelection;
function shownNode(req: IronicRequest, ctx: BaremetalContext, node: NodeRecord, fields?: readonly string[]): Wire.NodeSelection {
  const body = nodeView(node, viewContext(req, ctx), fields);
  const target = nodeTarget(node);
  // secrets are masked for everyone the policy does not name (by default: everyone)
  if (body.driver_info && !req.allows('show_password', target)) body.driver_info = maskSecrets(body.driver_info) as Record<string, unknown>;
  if (body.instance_info && !req.allows('show_instance_secrets', target))
    body.instance_info = maskInstanceSecrets(body.instance_info) as Record<string, unknown>;
  if (req.allows('baremetal:node:get:filter_threshold', target)) return body;
  const hidden = (field: string) => field in body && !req.allows(`baremetal:node:get:${field}`, target);
  if (hidden('last_error')) body.last_error = '** Value Redacted - Requires baremetal:node:get:last_error permission. **';
  if (hidden('reservation')) body.reservation = '** Redacted - requires baremetal:node:get:reservation permission. **';
  if (hidden('driver_internal_info')) body.driver_internal_info = { content: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **' };
  if (hidden('driver_info')) body.driver_info = { content: '** Redacted - requires baremetal:node:get:driver_info permission. **' };
  return body;
}

const column = columnOf<NodeColumn>();

/**
 * The node list's filters, with the versions Ironic checks them against (api/controllers/v1/utils.py):
 * most name their version in the 406. Ironic does not check `description_contains` (1.51) or
 * `retired` (1.61) against the version, nor does allot; `detail` (1.43) is a 400 (listing.ts).
 * A `column` filter is all declared here — the store compares the column as it says — so a new
 * one is one line; the others the route reads (`listing` below).
 */
const NODE_FILTERS = {
  instance_uuid: column('instance_uuid', text, 'equals', (raw) => queryUuid({ instance_uuid: raw }, 'instance_uuid')!),
  maintenance: column('maintenance', flag),
  associated: column('instance_uuid', flag, 'present'),
  retired: column('retired', flag),
  sharded: column('shard', since('1.82', flag, 'named'), 'present'),
  provision_state: column('provision_state', since('1.9', text)),
  driver: column('driver', since('1.16', text, 'named')),
  resource_class: column('resource_class', since('1.21', text, 'named')),
  conductor_group: column('conductor_group', since('1.46', text, 'named'), 'lower'),
  conductor: since('1.49', text, 'named'),
  fault: column('fault', since('1.42', text, 'named')),
  owner: column('owner', since('1.50', text, 'named')),
  lessee: column('lessee', since('1.65', text, 'named')),
  description_contains: column('description', text, 'contains'),
  shard: since('1.82', text, 'named'),
  /** owned or leased by this project (scope.ts listScope) */
  project: text,
};

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
const NODES: Collection<'nodes'> = {
  key: 'nodes',
  table: NODE_FIELDS,
  defaults: NODE_LIST_FIELDS,
  sortKeys: SORT_KEYS,
  unsortable: UNSORTABLE,
  detail: 'common',
  sortKeyVersions: NODE_FIELDS,
};

/** `inChassis`: the nodes of /v1/chassis/{chassis}/nodes (the chassis already checked). */
async function listing<D extends boolean>(req: IronicRequest, ctx: BaremetalContext, detailPath: D, inChassis?: ChassisRecord) {
  // Whose nodes first, as Ironic checks: a project without list_all sees its own (owned or leased).
  const project = listScope(req, 'node', req.query.get('project') ?? undefined);
  const path = inChassis ? `chassis/${inChassis.uuid}/nodes` : 'nodes';
  const list = listRequest(req, NODES, path, detailPath);
  const { args } = list;
  if (args.provision_state !== undefined && !(PROVISION_STATES as readonly string[]).includes(args.provision_state)) {
    throw badRequest(`Provision state "${args.provision_state}" is not valid`);
  }
  if (args.fault !== undefined && !FAULTS.includes(args.fault)) {
    throw badRequest(`Unrecognized fault "${args.fault}" is specified, allowed faults are (${FAULTS.map((f) => `'${f}'`).join(', ')})`);
  }
  const chassisUuid = queryUuid(args, 'chassis_uuid');
  const chassis = inChassis ?? (chassisUuid === undefined ? undefined : await getChassis(ctx, chassisUuid));
  // the column filters go to the store as declared (booleans read as Ironic reads them)
  const filters: NodeFilters = { columns: columnConditions(req, list) };
  if (chassis) filters.chassisId = chassis.id;
  if (project !== undefined) filters.project = project;
  if (args.shard !== undefined) filters.shards = args.shard.split(',').map((s) => s.trim());
  if (args.conductor !== undefined) {
    // every live conductor services every node in allot; a dead or unknown one services none
    const alive = await aliveConductorHosts(ctx);
    if (!alive.includes(args.conductor) && args.conductor !== ctx.conductorId) filters.none = true;
  }
  function view(node: NodeRecord, _context: ViewContext): Wire.Node;
  function view(node: NodeRecord, _context: ViewContext, fields?: readonly string[]): Wire.NodeSelection;
  function view(node: NodeRecord, _context: ViewContext, fields?: readonly string[]) {
    return shownNode(req, ctx, node, fields);
  }
  return listPage(req, NODES, list, viewContext(req, ctx), { marker: (uuid) => getNode(ctx, uuid), find: (page) => listNodePage(ctx, filters, page), view });
}

export const list: E = {
  ...scoped('baremetal:node:list_all'),
  summary: 'list nodes',
  query: listQuery({ ...NODE_FILTERS, chassis_uuid: text, detail: flag }, FIELDS),
  ok: [200],
  ...answers('NodeList', (req, ctx) => listing(req, ctx, false)),
};
export const detail: E = {
  ...scoped('baremetal:node:list_all'),
  summary: 'list nodes with every field',
  query: detailQuery({ ...NODE_FILTERS, chassis_uuid: text }),
  ok: [200],
  ...answers('NodeDetailList', (req, ctx) => listing(req, ctx, true)),
};

/** The chassis of /v1/chassis/{chassis}/nodes: anything but a uuid is Ironic's 400, an unknown one its 404. */
async function pathChassis(req: IronicRequest, ctx: BaremetalContext): Promise<ChassisRecord> {
  const ident = req.param('chassis');
  if (!isUuidLike(ident)) throw badRequest(`Expected UUID for chassis_uuid: ${ident}`);
  return getChassis(ctx, ident);
}
export const inChassis: E = {
  ...scoped('baremetal:node:list_all'),
  summary: 'the nodes in a chassis',
  query: listQuery({ ...NODE_FILTERS, detail: flag }, FIELDS),
  ok: [200],
  ...answers('NodeList', async (req, ctx) => listing(req, ctx, false, await pathChassis(req, ctx))),
};
export const inChassisDetail: E = {
  ...scoped('baremetal:node:list_all'),
  summary: 'the nodes in a chassis with every field',
  query: detailQuery(NODE_FILTERS),
  ok: [200],
  ...answers('NodeDetailList', async (req, ctx) => listing(req, ctx, true, await pathChassis(req, ctx))),
};

export const create: E = {
  ...scoped('baremetal:node:create'),
  summary: 'enroll a node (fake-hardware)',
  body: schemas.nodeCreate,
  ok: [201],
  response: schemaRef('Node'),
  async handle(req, ctx) {
    // A project admin (or service) creates nodes for its own project (Ironic's
    // project_admin_can_manage_own_nodes, on by default); anyone else needs node:create.
    const selfOwned = req.allows('baremetal:node:create:self_owned_node');
    if (!selfOwned) req.authorize(req.endpointRule);
    req.queryArgs();
    const body = req.json<Record<string, unknown>>('node');
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
  ...scoped('baremetal:node:get'),
  summary: 'a node (by uuid or name)',
  query: showQuery(FIELDS),
  ok: [200],
  response: schemaRef('Node'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    const args = req.queryArgs();
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
  ...scoped('baremetal:node:update'),
  summary: 'change a node (JSON Patch)',
  body: schemas.patch,
  ok: [200],
  response: schemaRef('Node'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    req.queryArgs();
    const ops = req.json<PatchOp[]>('patch');
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
  ...scoped('baremetal:node:delete'),
  summary: 'delete a node',
  ok: [204],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    req.queryArgs();
    // a project admin may delete its own project's nodes (Ironic's project_admin_can_manage_own_nodes, on by default)
    const node = await authorizedNode(req, ctx, ident);
    if (!req.allows(req.endpointRule, nodeTarget(node))) req.authorize('baremetal:node:delete:self_owned_node', nodeTarget(node));
    await deleteNode(ctx, ident);
    return {};
  },
};
