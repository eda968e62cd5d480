// /v1/portgroups (1.23), and the port groups of a node (/v1/nodes/{node}/portgroups): list (and
// detail), create, show, JSON-patch, delete. A port group is scoped by its node as a port is
// (ports.ts): a caller who may not see the node does not see it (404), Ironic's
// `baremetal:portgroup:*` rules get the node's owner and lessee as their target.
import { FIELDS_SINCE_1_8 as FIELDS, detailQuery, flag, listQuery, showQuery, text } from './query.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { isUuidOrName, isValidName } from '../core/rules.js';
import type { BaremetalContext } from '../context.js';
import { badRequest } from '../errors.js';
import { type Endpoint, type IronicRequest, answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import {
  type PortgroupFields,
  createPortgroup,
  deletePortgroup,
  type PortFilters,
  type PortgroupRecord,
  getPortgroup,
  listPortgroupPage,
  patchPortgroup,
  portgroupNotFound,
} from '../services/ports.js';
import type { Edit } from '../services/resource-writes.js';
import { PORTGROUP_FIELDS, parseFields, portgroupView } from '../views.js';
import { boolField } from './node-fields.js';
import { nodeIdent, viewContext } from './common.js';
import { type Collection, columnConditions, listPage, listRequest } from './listing.js';
import { listScope, partTarget, scoped } from './scope.js';

import { ADDRESS, PARTS_OF, SHARD, changedIn, checkVersions, macAddress, targetNode, unsortable, uuidArg, visibleNode } from './ports.js';

type E = Endpoint;

const PORTGROUPS_OF = { node: text, address: ADDRESS, shard: SHARD };
const PORTGROUPS_SINCE = { since: '1.23' } as const;
const PORTGROUP_SORT_KEYS = ['id', 'uuid', 'created_at', 'updated_at', 'address', 'name', 'mode', 'standalone_ports_supported'];
const PORTGROUP_PATCHABLE = ['address', 'extra', 'mode', 'name', 'node_uuid', 'properties', 'standalone_ports_supported'];
/** Ironic's [DEFAULT]default_portgroup_mode */
const DEFAULT_PORTGROUP_MODE = 'active-backup';

/** The port group collection: as ports. */
const PORTGROUPS: Collection<'portgroups'> = {
  key: 'portgroups',
  table: PORTGROUP_FIELDS,
  defaults: ['uuid', 'address', 'name'],
  sortKeys: PORTGROUP_SORT_KEYS,
  unsortable: unsortable(PORTGROUP_FIELDS, PORTGROUP_SORT_KEYS),
  detail: 'common',
  sortKeyVersions: PORTGROUP_FIELDS,
};

async function portgroupListing<D extends boolean>(req: IronicRequest, ctx: BaremetalContext, parentNode: string | undefined, detailPath: D) {
  const project = listScope(req, 'portgroup', undefined);
  const path = parentNode ? `nodes/${parentNode}/portgroups` : 'portgroups';
  const list = listRequest(req, PORTGROUPS, path, detailPath);
  const { args } = list;
  const f: PortFilters = {};
  if (project !== undefined) f.project = project;
  const nodeArg = parentNode ?? args.node;
  if (nodeArg !== undefined) {
    if (!isUuidOrName(nodeArg)) throw badRequest(`Expected UUID or name for node: ${nodeArg}`);
    f.nodeId = (await visibleNode(req, ctx, nodeArg)).id;
  }
  f.columns = columnConditions(req, list);
  if (args.shard !== undefined) f.shards = args.shard.split(',').map((s) => s.trim());
  return listPage(req, PORTGROUPS, list, viewContext(req, ctx), {
    marker: (uuid) => getPortgroup(ctx, uuid),
    find: (page) => listPortgroupPage(ctx, f, page),
    view: portgroupView,
  });
}

export const listPortgroupsEndpoint: E = {
  ...scoped('baremetal:portgroup:list_all'),
  summary: 'list port groups (1.23)',
  query: listQuery({ ...PORTGROUPS_OF, detail: flag }, FIELDS),
  ok: [200],
  ...PORTGROUPS_SINCE,
  ...answers('PortgroupList', (req, ctx) => portgroupListing(req, ctx, undefined, false)),
};
export const detailPortgroups: E = {
  ...scoped('baremetal:portgroup:list_all'),
  summary: 'list port groups with every field (1.23)',
  query: detailQuery(PORTGROUPS_OF),
  ok: [200],
  ...PORTGROUPS_SINCE,
  ...answers('PortgroupDetailList', (req, ctx) => portgroupListing(req, ctx, undefined, true)),
};
export const nodePortgroups: E = {
  ...scoped('baremetal:portgroup:list'),
  summary: "a node's port groups (1.24)",
  query: listQuery({ ...PARTS_OF, detail: flag }, FIELDS),
  ok: [200],
  since: '1.24',
  ...answers('PortgroupList', (req, ctx) => portgroupListing(req, ctx, nodeIdent(req, 'node'), false)),
};
export const nodePortgroupsDetail: E = {
  ...scoped('baremetal:portgroup:list'),
  summary: "a node's port groups with every field (1.24)",
  query: detailQuery(PARTS_OF),
  ok: [200],
  since: '1.24',
  ...answers('PortgroupDetailList', (req, ctx) => portgroupListing(req, ctx, nodeIdent(req, 'node'), true)),
};

function portgroupFields(doc: Record<string, unknown>): PortgroupFields {
  const name = (doc.name as string | null | undefined) ?? null;
  return {
    node_uuid: uuidArg(doc.node_uuid, 'node_uuid'),
    address: doc.address === undefined || doc.address === null ? null : macAddress(doc.address, 'address'),
    name,
    mode: (doc.mode as string | null | undefined) || DEFAULT_PORTGROUP_MODE,
    standalone_ports_supported: boolField(doc, 'standalone_ports_supported') ?? true,
    properties: doc.properties ?? {},
    extra: doc.extra ?? {},
  };
}

function portgroupIdent(req: IronicRequest): string {
  const ident = req.param('portgroup');
  if (!isUuidOrName(ident)) throw badRequest(`Expected UUID or name for portgroup_ident: ${ident}`);
  return ident;
}

async function authorizedPortgroup(req: IronicRequest, ctx: BaremetalContext, ident: string, rule: string): Promise<PortgroupRecord> {
  const pg = await getPortgroup(ctx, ident);
  if (!req.allows('baremetal:portgroup:get', partTarget(pg))) throw portgroupNotFound(ident);
  req.authorize(rule, partTarget(pg));
  return pg;
}

export const showPortgroup: E = {
  ...scoped('baremetal:portgroup:get'),
  summary: 'a port group (by uuid or name)',
  query: showQuery(FIELDS),
  ok: [200],
  response: schemaRef('Portgroup'),
  ...PORTGROUPS_SINCE,
  async handle(req, ctx) {
    const ident = portgroupIdent(req);
    const args = req.queryArgs();
    const fields = parseFields(args.fields, PORTGROUP_FIELDS, req.mv);
    return { body: portgroupView(await authorizedPortgroup(req, ctx, ident, req.endpointRule), viewContext(req, ctx), fields) };
  },
};

export const createPortgroupEndpoint: E = {
  ...scoped('baremetal:portgroup:create'),
  summary: 'create a port group on a node (1.23)',
  body: schemas.portgroup,
  ok: [201],
  response: schemaRef('Portgroup'),
  ...PORTGROUPS_SINCE,
  async handle(req, ctx) {
    req.queryArgs();
    const body = req.json<Record<string, unknown>>('portgroup');
    checkVersions(PORTGROUP_FIELDS, Object.keys(body), req.mv);
    const fields = portgroupFields(body);
    if (fields.name !== null && !isValidName(fields.name)) throw badRequest(`Cannot create portgroup with invalid name '${fields.name}'`);
    await targetNode(req, ctx, fields.node_uuid, req.endpointRule);
    const pg = await createPortgroup(ctx, body.uuid ? uuidArg(body.uuid, 'uuid') : null, fields);
    return { status: 201, body: portgroupView(pg, viewContext(req, ctx)), location: `${req.baseUrl}/v1/portgroups/${pg.uuid}` };
  },
};

export const patchPortgroupEndpoint: E = {
  ...scoped('baremetal:portgroup:update'),
  summary: 'change a port group (JSON Patch)',
  body: schemas.patch,
  ok: [200],
  response: schemaRef('Portgroup'),
  ...PORTGROUPS_SINCE,
  async handle(req, ctx) {
    const ident = portgroupIdent(req);
    req.queryArgs();
    await authorizedPortgroup(req, ctx, ident, req.endpointRule);
    const ops = req.json<PatchOp[]>('patch');
    for (const op of ops) {
      const field = rootField(op);
      if (!PORTGROUP_PATCHABLE.includes(field))
        throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PORTGROUP_PATCHABLE.join(', ')}`);
      if (field === 'mode' && op.op === 'remove') throw badRequest("'mode' is a mandatory attribute and can not be removed");
    }
    // `mode` and `properties` need 1.26 — in the first operation: Ironic's check
    // (api_utils.is_path_updated) reads no further, and its own tests patch `extra` then
    // `properties` at 1.23
    checkVersions(PORTGROUP_FIELDS, ops.slice(0, 1).map(rootField), req.mv);
    const moved = ops.find((op) => rootField(op) === 'node_uuid' && typeof op.value === 'string');
    if (moved) await targetNode(req, ctx, uuidArg(moved.value, 'node_uuid'), req.endpointRule);
    const pg = await patchPortgroup(ctx, ident, (before): Edit<PortgroupFields> => {
      const patched = applyPatch(before, ops);
      checkSchema(schemas.portgroup, patched, 'patch');
      const fields = portgroupFields(patched);
      const changed = changedIn<PortgroupFields>(before, patched);
      if (changed('name') && fields.name !== null && !isValidName(fields.name))
        throw badRequest(`Portgroup ${ident}: Cannot change name to invalid name '${fields.name}'`);
      return { fields, changed };
    });
    return { body: portgroupView(pg, viewContext(req, ctx)) };
  },
};

export const deletePortgroupEndpoint: E = {
  ...scoped('baremetal:portgroup:delete'),
  summary: 'delete a port group (one without ports)',
  ok: [204],
  ...PORTGROUPS_SINCE,
  async handle(req, ctx) {
    const ident = portgroupIdent(req);
    req.queryArgs();
    await authorizedPortgroup(req, ctx, ident, req.endpointRule);
    await deletePortgroup(ctx, ident);
    return {};
  },
};
