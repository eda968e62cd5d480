// /v1/ports, and the ports of a node (/v1/nodes/{node}/ports) and of a port group
// (/v1/portgroups/{portgroup}/ports): list (and detail), create, show, JSON-patch, delete; and what
// port groups (portgroups.ts) check the same way. A port is scoped by its node: a caller who may
// not see the node does not see it (404), Ironic's `baremetal:port:*` rules get the node's owner
// and lessee as their target.
import { FIELDS_SINCE_1_8 as FIELDS, columnOf, detailQuery, flag, listQuery, showQuery, since, text } from './query.js';
import type { Microversion } from '../../core/microversion.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { isUuidOrName } from '../core/rules.js';
import type { BaremetalContext } from '../context.js';
import { badRequest, notAcceptable } from '../errors.js';
import { type Endpoint, type IronicRequest, answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import {
  type PortFields,
  createPort,
  deletePort,
  type PortColumn,
  type PortFilters,
  getPort,
  listPortPage,
  lookupPortgroup,
  patchPort,
  portNotFound,
  portgroupNotFound,
} from '../services/ports.js';
import type { Edit } from '../services/resource-writes.js';
import { type NodeRecord, lookupNode, nodeNotFound } from '../services/node-reads.js';
import { type FieldVersions, PORT_FIELDS, parseFields, portView } from '../views.js';
import { boolField } from './node-fields.js';
import { nodeIdent, viewContext } from './common.js';
import { type Collection, columnConditions, listPage, listRequest } from './listing.js';
import { canSeeNode, listScope, nodeTarget, partTarget, scoped } from './scope.js';

type E = Endpoint;

/** A MAC address as Ironic takes it: six pairs of hex digits separated by colons, stored in lower case. */
export function macAddress(value: unknown, field: string): string {
  const text = String(value);
  if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(text)) throw badRequest(`Expected valid MAC address for ${field}: ${text}`);
  return text.toLowerCase();
}

export function uuidArg(value: unknown, field: string): string {
  const text = String(value);
  if (!isUuidLike(text)) throw badRequest(`Expected UUID for ${field}: ${text}`);
  return normalizeUuid(text);
}

/** A field newer than the request's version is a 406. */
export function checkVersions(table: FieldVersions, names: string[], mv: Microversion): void {
  for (const name of names) {
    const since = table.find(([n]) => n === name)?.[1];
    if (since !== undefined && !mv.atLeast(since)) throw notAcceptable();
  }
}

/** A port's or port group's fields that are not its sort keys: Ironic refuses to sort by them. */
export const unsortable = (table: FieldVersions, sortKeys: readonly string[]) => table.map(([name]) => name).filter((name) => !sortKeys.includes(name));

/** The node a list is filtered by (or that a path names), if the caller may see it; else not found. */
export async function visibleNode(req: IronicRequest, ctx: BaremetalContext, ident: string): Promise<NodeRecord> {
  const node = await lookupNode(ctx, ident);
  if (!node || !canSeeNode(req, node)) throw nodeNotFound(ident);
  return node;
}

/** The node a create or patch names: one that does not exist is the request's 400, checked after the policy (as Ironic). */
export async function targetNode(req: IronicRequest, ctx: BaremetalContext, nodeUuid: string, rule: string): Promise<void> {
  const node = await lookupNode(ctx, nodeUuid);
  req.authorize(rule, node ? nodeTarget(node) : {});
}

// ---- ports -----------------------------------------------------------------------------------

/** The filters of the port and port group lists (a bare 406 before their version). */
export const SHARD = since('1.82', text);
/** The ports' and port groups' `address` filter: a MAC address (400 otherwise), compared in lower case. */
export const ADDRESS = columnOf<PortColumn>()('address', text, 'equals', (raw) => macAddress(raw, 'address'));
const PORTS_OF = { node: text, node_uuid: text, address: ADDRESS, portgroup: since('1.24', text), shard: SHARD };
/** A node's or port group's own ports and port groups: the same, but the parent. */
export const PARTS_OF = { address: ADDRESS, shard: SHARD };
const PORT_SORT_KEYS = ['id', 'uuid', 'created_at', 'updated_at', 'address', 'pxe_enabled', 'physical_network', 'is_smartnic'];
const PORT_PATCHABLE = ['address', 'extra', 'is_smartnic', 'local_link_connection', 'node_uuid', 'physical_network', 'portgroup_uuid', 'pxe_enabled'];

/** The port collection: every field but the sort keys is unsortable; a sort key newer than the request is a 406. */
const PORTS: Collection<'ports'> = {
  key: 'ports',
  table: PORT_FIELDS,
  defaults: ['uuid', 'address'],
  sortKeys: PORT_SORT_KEYS,
  unsortable: unsortable(PORT_FIELDS, PORT_SORT_KEYS),
  detail: 'common',
  sortKeyVersions: PORT_FIELDS,
};

async function portListing<D extends boolean>(req: IronicRequest, ctx: BaremetalContext, parent: { node?: string; portgroup?: string }, detailPath: D) {
  const project = listScope(req, 'port', undefined);
  const path = parent.node ? `nodes/${parent.node}/ports` : parent.portgroup ? `portgroups/${parent.portgroup}/ports` : 'ports';
  const list = listRequest(req, PORTS, path, detailPath);
  const { args } = list;
  const f: PortFilters = {};
  if (project !== undefined) f.project = project;
  const nodeArg = parent.node ?? (args.node_uuid !== undefined ? uuidArg(args.node_uuid, 'node_uuid') : args.node);
  if (nodeArg !== undefined) {
    if (!isUuidOrName(nodeArg)) throw badRequest(`Expected UUID or name for node: ${nodeArg}`);
    f.nodeId = (await visibleNode(req, ctx, nodeArg)).id;
  }
  const pgArg = parent.portgroup ?? args.portgroup;
  if (pgArg !== undefined) {
    const pg = await lookupPortgroup(ctx, pgArg);
    if (!pg || !req.allows('baremetal:portgroup:get', partTarget(pg))) throw portgroupNotFound(pgArg);
    f.portgroupId = pg.id;
  }
  f.columns = columnConditions(req, list);
  if (args.shard !== undefined) f.shards = args.shard.split(',').map((s) => s.trim());
  return listPage(req, PORTS, list, viewContext(req, ctx), {
    marker: (uuid) => getPort(ctx, uuid),
    find: (page) => listPortPage(ctx, f, page),
    view: portView,
  });
}

export const listPortsEndpoint: E = {
  ...scoped('baremetal:port:list_all'),
  summary: 'list ports',
  query: listQuery({ ...PORTS_OF, detail: flag }, FIELDS),
  ok: [200],
  ...answers('PortList', (req, ctx) => portListing(req, ctx, {}, false)),
};
export const detailPorts: E = {
  ...scoped('baremetal:port:list_all'),
  summary: 'list ports with every field',
  query: detailQuery(PORTS_OF),
  ok: [200],
  ...answers('PortDetailList', (req, ctx) => portListing(req, ctx, {}, true)),
};
export const nodePorts: E = {
  ...scoped('baremetal:port:list'),
  summary: "a node's ports",
  query: listQuery({ ...PARTS_OF, detail: flag }, FIELDS),
  ok: [200],
  ...answers('PortList', (req, ctx) => portListing(req, ctx, { node: nodeIdent(req, 'node') }, false)),
};
export const nodePortsDetail: E = {
  ...scoped('baremetal:port:list'),
  summary: "a node's ports with every field",
  query: detailQuery(PARTS_OF),
  ok: [200],
  ...answers('PortDetailList', (req, ctx) => portListing(req, ctx, { node: nodeIdent(req, 'node') }, true)),
};
export const portgroupPorts: E = {
  ...scoped('baremetal:port:list'),
  summary: "a port group's ports (1.24)",
  query: listQuery({ ...PARTS_OF, detail: flag }, FIELDS),
  ok: [200],
  since: '1.24',
  ...answers('PortList', (req, ctx) => portListing(req, ctx, { portgroup: req.param('portgroup') }, false)),
};
export const portgroupPortsDetail: E = {
  ...scoped('baremetal:port:list'),
  summary: "a port group's ports with every field (1.24)",
  query: detailQuery(PARTS_OF),
  ok: [200],
  since: '1.24',
  ...answers('PortDetailList', (req, ctx) => portListing(req, ctx, { portgroup: req.param('portgroup') }, true)),
};

/** A port's fields from a create body or a patched document (schema-checked), checked as Ironic checks them. */
function portFields(doc: Record<string, unknown>): PortFields {
  const link = doc.local_link_connection ?? {};
  checkSchema(schemas.localLinkConnection, link, 'local_link_connection');
  const isSmartnic = boolField(doc, 'is_smartnic') ?? false;
  if (isSmartnic) {
    try {
      checkSchema(schemas.smartNicLink, link, 'local_link_connection');
    } catch {
      throw badRequest('Smart NIC port must have port_id and hostname in local_link_connection');
    }
  }
  const physnet = (doc.physical_network as string | null | undefined) ?? null;
  if (physnet === '') throw badRequest('A non-empty value is required when setting physical_network');
  return {
    address: macAddress(doc.address, 'address'),
    node_uuid: uuidArg(doc.node_uuid, 'node_uuid'),
    portgroup_uuid: doc.portgroup_uuid === undefined || doc.portgroup_uuid === null ? null : uuidArg(doc.portgroup_uuid, 'portgroup_uuid'),
    local_link_connection: link,
    pxe_enabled: boolField(doc, 'pxe_enabled') ?? true,
    physical_network: physnet,
    is_smartnic: isSmartnic,
    extra: doc.extra ?? {},
  };
}

export const changedIn =
  <T>(before: Record<string, unknown>, after: Record<string, unknown>) =>
  (k: keyof T & string) =>
    JSON.stringify(after[k] ?? null) !== JSON.stringify(before[k] ?? null);

function portIdent(req: IronicRequest): string {
  return uuidArg(req.param('port'), 'port_uuid');
}

/** The port a path names, if the caller may see it (else 404) and `rule` allows the caller on it (else 403). */
async function authorizedPort(req: IronicRequest, ctx: BaremetalContext, uuid: string, rule: string) {
  const port = await getPort(ctx, uuid);
  if (!req.allows('baremetal:port:get', partTarget(port))) throw portNotFound(uuid);
  req.authorize(rule, partTarget(port));
  return port;
}

export const showPort: E = {
  ...scoped('baremetal:port:get'),
  summary: 'a port',
  query: showQuery(FIELDS),
  ok: [200],
  response: schemaRef('Port'),
  async handle(req, ctx) {
    const uuid = portIdent(req);
    const args = req.queryArgs();
    const fields = parseFields(args.fields, PORT_FIELDS, req.mv);
    return { body: portView(await authorizedPort(req, ctx, uuid, req.endpointRule), viewContext(req, ctx), fields) };
  },
};

export const createPortEndpoint: E = {
  ...scoped('baremetal:port:create'),
  summary: 'create a port on a node',
  body: schemas.port,
  ok: [201],
  response: schemaRef('Port'),
  async handle(req, ctx) {
    req.queryArgs();
    const body = req.json<Record<string, unknown>>('port');
    checkVersions(PORT_FIELDS, Object.keys(body), req.mv);
    const fields = portFields(body);
    await targetNode(req, ctx, fields.node_uuid, req.endpointRule);
    const port = await createPort(ctx, body.uuid ? uuidArg(body.uuid, 'uuid') : null, fields);
    return { status: 201, body: portView(port, viewContext(req, ctx)), location: `${req.baseUrl}/v1/ports/${port.uuid}` };
  },
};

export const patchPortEndpoint: E = {
  ...scoped('baremetal:port:update'),
  summary: 'change a port (JSON Patch)',
  body: schemas.patch,
  ok: [200],
  response: schemaRef('Port'),
  async handle(req, ctx) {
    const uuid = portIdent(req);
    req.queryArgs();
    await authorizedPort(req, ctx, uuid, req.endpointRule);
    const ops = req.json<PatchOp[]>('patch');
    for (const op of ops) {
      if (!PORT_PATCHABLE.includes(rootField(op))) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PORT_PATCHABLE.join(', ')}`);
    }
    checkVersions(PORT_FIELDS, ops.map(rootField), req.mv);
    const moved = ops.find((op) => rootField(op) === 'node_uuid' && typeof op.value === 'string');
    if (moved) await targetNode(req, ctx, uuidArg(moved.value, 'node_uuid'), req.endpointRule);
    const port = await patchPort(ctx, uuid, (before): Edit<PortFields> => {
      const patched = applyPatch(before, ops);
      checkSchema(schemas.port, patched, 'patch');
      return { fields: portFields(patched), changed: changedIn<PortFields>(before, patched) };
    });
    return { body: portView(port, viewContext(req, ctx)) };
  },
};

export const deletePortEndpoint: E = {
  ...scoped('baremetal:port:delete'),
  summary: 'delete a port',
  ok: [204],
  async handle(req, ctx) {
    const uuid = portIdent(req);
    req.queryArgs();
    await authorizedPort(req, ctx, uuid, req.endpointRule);
    await deletePort(ctx, uuid);
    return {};
  },
};
