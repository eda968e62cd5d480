// /v1/volume (1.32): volume connectors and targets (boot from volume) and their views from a node
// (/v1/nodes/{node}/volume/…): list (`?detail=True`: every field; Ironic 21.4 has no `/detail` path
// here), create, show, JSON-patch, delete. Records only:
// no storage is attached. Scoped by the node, with Ironic's `baremetal:volume:*` rules.
import type * as Wire from '../../client/baremetal-wire.js';
import { flag, listQuery, showQuery, text } from './query.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { isUuidOrName } from '../core/rules.js';
import type { BaremetalContext } from '../context.js';
import { badRequest } from '../errors.js';
import type { Page } from '../core/paging.js';
import { type Endpoint, type IronicRequest, answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import {
  type ConnectorFields,
  type ConnectorRecord,
  type TargetRecord,
  type TargetFields,
  type VolumeFilters,
  type VolumeKind,
  createConnector,
  createTarget,
  deleteVolume,
  getVolume,
  listVolumePage,
  patchConnector,
  patchTarget,
  volumeNotFound,
} from '../services/volumes.js';
import { lookupNode, nodeNotFound } from '../services/node-reads.js';
import { CONNECTOR_FIELDS, TARGET_FIELDS, type ViewContext, connectorView, parseFields, targetView } from '../views.js';
import { nodeIdent, viewContext } from './common.js';
import { type Collection, listPage, listRequest } from './listing.js';
import { canSeeNode, listScope, nodeTarget, partTarget, scoped } from './scope.js';

type E = Endpoint;

const SINCE = { since: '1.32' } as const;
const links = (base: string, path: string) => [
  { href: `${base}/v1/${path}`, rel: 'self' },
  { href: `${base}/${path}`, rel: 'bookmark' },
];

/** GET /v1/volume and /v1/nodes/{node}/volume: links to the connectors and targets. */
async function volumeRoot(req: IronicRequest, ctx: BaremetalContext, node?: string) {
  req.queryArgs();
  const base = node ? `nodes/${node}/volume` : 'volume';
  if (node) {
    const found = await lookupNode(ctx, node);
    if (!found || !canSeeNode(req, found)) throw nodeNotFound(node);
  }
  const body: Wire.VolumeLinks = {
    links: links(req.baseUrl, `${base}/`),
    connectors: links(req.baseUrl, `${base}/connectors`),
    targets: links(req.baseUrl, `${base}/targets`),
  };
  return { body };
}
export const root: E = {
  ...scoped('baremetal:volume:list'),
  summary: 'links to volume connectors and targets (1.32)',
  ok: [200],
  response: schemaRef('VolumeLinks'),
  ...SINCE,
  handle: (req, ctx) => volumeRoot(req, ctx),
};
export const nodeRoot: E = {
  ...scoped('baremetal:volume:list'),
  summary: "links to a node's volume connectors and targets (1.32)",
  ok: [200],
  response: schemaRef('VolumeLinks'),
  ...SINCE,
  handle: (req, ctx) => volumeRoot(req, ctx, nodeIdent(req, 'node')),
};

const SPEC = {
  connector: {
    key: 'connectors',
    noun: 'volume connector',
    schemas: { one: 'VolumeConnector', list: 'VolumeConnectorList' },
    table: CONNECTOR_FIELDS,
    defaults: ['uuid', 'node_uuid', 'type', 'connector_id'],
    sortKeys: ['id', 'uuid', 'created_at', 'updated_at', 'type', 'connector_id'],
    unsortable: ['extra'],
    patchable: ['connector_id', 'extra', 'node_uuid', 'type'],
  },
  target: {
    key: 'targets',
    noun: 'volume target',
    schemas: { one: 'VolumeTarget', list: 'VolumeTargetList' },
    table: TARGET_FIELDS,
    defaults: ['uuid', 'node_uuid', 'volume_type', 'boot_index', 'volume_id'],
    sortKeys: ['id', 'uuid', 'created_at', 'updated_at', 'boot_index', 'volume_id', 'volume_type'],
    unsortable: ['extra', 'properties'],
    patchable: ['boot_index', 'extra', 'node_uuid', 'properties', 'volume_id', 'volume_type'],
  },
} as const;

/** A connector or target as its answers show it, typed by its own wire type: whole, or (with `fields`) the fields asked for. */
function shown(found: ConnectorRecord | TargetRecord, c: ViewContext): Wire.VolumeConnector | Wire.VolumeTarget;
function shown(found: ConnectorRecord | TargetRecord, c: ViewContext, fields?: readonly string[]): Wire.VolumeConnectorSelection | Wire.VolumeTargetSelection;
function shown(found: ConnectorRecord | TargetRecord, c: ViewContext, fields?: readonly string[]) {
  return 'connector_id' in found ? connectorView(found, c, fields) : targetView(found, c, fields);
}

/** The connector and target collections, as Ironic's volume controllers take their lists (their own `detail`). */
const COLLECTIONS = {
  connector: { ...SPEC.connector, detail: 'volume' } satisfies Collection<'connectors'>,
  target: { ...SPEC.target, detail: 'volume' } satisfies Collection<'targets'>,
};

async function listing(req: IronicRequest, ctx: BaremetalContext, kind: VolumeKind, parentNode: string | undefined) {
  const project = listScope(req, 'volume', undefined);
  const collection = COLLECTIONS[kind];
  const path = parentNode ? `nodes/${parentNode}/volume/${collection.key}` : `volume/${collection.key}`;
  const list = listRequest(req, collection, path, false);
  const f: VolumeFilters = {};
  if (project !== undefined) f.project = project;
  const nodeArg = parentNode ?? list.args.node;
  if (nodeArg !== undefined) {
    if (!isUuidOrName(nodeArg)) throw badRequest(`Expected UUID or name for node: ${nodeArg}`);
    const node = await lookupNode(ctx, nodeArg);
    if (!node || !canSeeNode(req, node)) throw nodeNotFound(nodeArg);
    f.nodeId = node.id;
  }
  const context = viewContext(req, ctx);
  const rows = <K extends VolumeKind>(k: K) => ({ marker: (uuid: string) => getVolume(ctx, k, uuid), find: (page: Page) => listVolumePage(ctx, k, f, page) });
  return kind === 'connector'
    ? listPage(req, COLLECTIONS.connector, list, context, { ...rows('connector'), view: connectorView })
    : listPage(req, COLLECTIONS.target, list, context, { ...rows('target'), view: targetView });
}

const lists = (kind: VolumeKind): Record<'list' | 'ofNode', E> => {
  const { noun } = SPEC[kind];
  return {
    list: {
      ...SINCE,
      ...scoped('baremetal:volume:list_all'),
      summary: `list ${noun}s`,
      query: listQuery({ node: text, detail: flag }),
      ok: [200],
      ...answers(SPEC[kind].schemas.list, (req, ctx) => listing(req, ctx, kind, undefined)),
    },
    ofNode: {
      ...SINCE,
      ...scoped('baremetal:volume:list'),
      summary: `a node's ${noun}s`,
      query: listQuery({ detail: flag }),
      ok: [200],
      ...answers(SPEC[kind].schemas.list, (req, ctx) => listing(req, ctx, kind, nodeIdent(req, 'node'))),
    },
  };
};
export const connectorLists = lists('connector');
export const targetLists = lists('target');

function uuidArg(value: unknown, field: string): string {
  const text = String(value);
  if (!isUuidLike(text)) throw badRequest(`Expected UUID for ${field}: ${text}`);
  return normalizeUuid(text);
}

/** The resource a path names, if the caller may see it (else 404) and `rule` allows the caller on it (else 403). */
async function authorized(req: IronicRequest, ctx: BaremetalContext, kind: VolumeKind, rule: string) {
  const uuid = uuidArg(req.param('volume'), `${kind}_uuid`);
  const found = await getVolume(ctx, kind, uuid);
  if (!req.allows('baremetal:volume:get', partTarget(found))) throw volumeNotFound(kind, uuid);
  req.authorize(rule, partTarget(found));
  return found;
}

/** The node a create or patch names: the policy on it first, then (service) one that does not exist is the request's 400. */
async function targetNode(req: IronicRequest, ctx: BaremetalContext, nodeUuid: string, rule: string): Promise<void> {
  const node = await lookupNode(ctx, nodeUuid);
  req.authorize(rule, node ? nodeTarget(node) : {});
}

const connectorFields = (doc: Record<string, unknown>): ConnectorFields => ({
  node_uuid: uuidArg(doc.node_uuid, 'node_uuid'),
  type: doc.type as string,
  connector_id: doc.connector_id as string,
  extra: doc.extra ?? {},
});

const targetFields = (doc: Record<string, unknown>): TargetFields => ({
  node_uuid: uuidArg(doc.node_uuid, 'node_uuid'),
  volume_type: doc.volume_type as string,
  volume_id: doc.volume_id as string,
  boot_index: doc.boot_index as number,
  properties: doc.properties ?? {},
  extra: doc.extra ?? {},
});

function crud(kind: VolumeKind) {
  const spec = SPEC[kind];
  const schema = kind === 'connector' ? schemas.volumeConnector : schemas.volumeTarget;
  const show: E = {
    ...SINCE,
    ...scoped('baremetal:volume:get'),
    summary: `a ${spec.noun}`,
    query: showQuery(),
    ok: [200],
    response: schemaRef(spec.schemas.one),
    async handle(req, ctx) {
      const args = req.queryArgs();
      const fields = parseFields(args.fields, spec.table, req.mv);
      return { body: shown(await authorized(req, ctx, kind, req.endpointRule), viewContext(req, ctx), fields) };
    },
  };
  const create: E = {
    ...SINCE,
    ...scoped('baremetal:volume:create'),
    summary: `create a ${spec.noun}`,
    body: schema,
    ok: [201],
    ...answers(spec.schemas.one, async (req, ctx) => {
      req.queryArgs();
      const body = req.json<Record<string, unknown>>(kind === 'connector' ? 'connector' : 'target');
      const nodeUuid = uuidArg(body.node_uuid, 'node_uuid');
      await targetNode(req, ctx, nodeUuid, req.endpointRule);
      const uuid = body.uuid ? uuidArg(body.uuid, 'uuid') : null;
      const made = kind === 'connector' ? await createConnector(ctx, uuid, connectorFields(body)) : await createTarget(ctx, uuid, targetFields(body));
      return { status: 201, body: shown(made, viewContext(req, ctx)), location: `${req.baseUrl}/v1/volume/${spec.key}/${made.uuid}` };
    }),
  };
  const patch: E = {
    ...SINCE,
    ...scoped('baremetal:volume:update'),
    summary: `change a ${spec.noun} (node powered off)`,
    body: schemas.patch,
    ok: [200],
    ...answers(spec.schemas.one, async (req, ctx) => {
      req.queryArgs();
      const found = await authorized(req, ctx, kind, req.endpointRule);
      const ops = req.json<PatchOp[]>('patch');
      for (const op of ops) {
        if (!(spec.patchable as readonly string[]).includes(rootField(op)))
          throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${spec.patchable.join(', ')}`);
      }
      const moved = ops.find((op) => rootField(op) === 'node_uuid' && typeof op.value === 'string');
      if (moved) await targetNode(req, ctx, uuidArg(moved.value, 'node_uuid'), req.endpointRule);
      const edit = (before: Record<string, unknown>) => {
        const after = applyPatch(before, ops);
        checkSchema(schema, after, 'patch');
        return after;
      };
      const changed =
        kind === 'connector'
          ? await patchConnector(ctx, found.uuid, (doc) => connectorFields(edit(doc)))
          : await patchTarget(ctx, found.uuid, (doc) => targetFields(edit(doc)));
      return { body: shown(changed, viewContext(req, ctx)) };
    }),
  };
  const remove: E = {
    ...SINCE,
    ...scoped('baremetal:volume:delete'),
    summary: `delete a ${spec.noun} (node powered off)`,
    ok: [204],
    async handle(req, ctx) {
      req.queryArgs();
      const found = await authorized(req, ctx, kind, req.endpointRule);
      await deleteVolume(ctx, kind, found.uuid);
      return {};
    },
  };
  return { show, create, patch, remove };
}
export const connectors = crud('connector');
export const targets = crud('target');
