// /v1/allocations: create (allocating, or active at once when backfilling), list, show, PATCH
// (1.57: name and extra), delete.
import type { JsonSchema } from '../../core/json-schema.js';
import { type AllocationCreate, createAllocation, deleteAllocation, patchAllocation } from '../allocation-service.js';
import { allocationNotFound, badRequest, notAcceptable } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { PATCH_SCHEMA, type PatchOp } from '../patch.js';
import { ALLOCATION_STATES, type AllocationFilters, findAllocation, listAllocations } from '../store/allocations.js';
import { findNode } from '../store/nodes.js';
import { ALLOCATION_FIELDS, type ViewContext, allocationView, parseFields } from '../views.js';
import { type BaremetalContext, TRAIT_SCHEMA, nextLink, parsePage, requireParamVersions } from './common.js';

type E = Endpoint;

const SINCE = { since: '1.52', tooOld: { status: 404, message: 'The API version does not allow allocations' } } as const;

const view = (req: IronicRequest, ctx: BaremetalContext): ViewContext => ({ mv: req.mv, base: req.baseUrl, conductor: ctx.rt.conductorId });

export const CREATE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    candidate_nodes: { type: ['array', 'null'], items: { type: 'string', maxLength: 255 } },
    extra: { type: ['object', 'null'] },
    name: { type: ['string', 'null'] },
    node: { type: ['string', 'null'] },
    owner: { type: ['string', 'null'], maxLength: 255 },
    resource_class: { type: ['string', 'null'], maxLength: 80 },
    traits: { type: ['array', 'null'], items: TRAIT_SCHEMA },
    uuid: { type: ['string', 'null'] },
  },
  additionalProperties: false,
};

export const create: E = {
  since: '1.52',
  tooOld: { status: 405, message: 'The API version does not allow allocations' },
  async handle(req, ctx) {
    req.queryArgs([]);
    const body = req.json<AllocationCreate>(CREATE_SCHEMA, 'allocation');
    if (body.owner !== undefined && !req.mv.atLeast('1.60')) throw notAcceptable('The field owner needs API version 1.60 or later.');
    if (body.node !== undefined && body.node !== null && !req.mv.atLeast('1.58')) throw badRequest('Cannot set node when creating an allocation in this API version');
    const allocation = await createAllocation(ctx.rt, body);
    return { status: 201, body: allocationView(allocation, view(req, ctx)), location: `${req.baseUrl}/v1/allocations/${allocation.uuid}` };
  },
};

const SORT_KEYS = ['id', 'uuid', 'name', 'created_at', 'updated_at', 'resource_class', 'state', 'last_error', 'owner'];

export const list: E = {
  ...SINCE,
  async handle(req, ctx) {
    const args = req.queryArgs(['node', 'resource_class', 'state', 'owner', 'fields', 'limit', 'marker', 'sort_key', 'sort_dir']);
    requireParamVersions(req, args, { owner: '1.60' });
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    const filters: AllocationFilters = {};
    if (args.state !== undefined) {
      if (!(ALLOCATION_STATES as readonly string[]).includes(args.state)) {
        throw badRequest(`Invalid state ${args.state}: an allocation is ${ALLOCATION_STATES.join(', ')}`);
      }
      filters.state = args.state;
    }
    if (args.resource_class !== undefined) {
      if (args.resource_class.length > 80) throw badRequest(`Invalid resource_class ${args.resource_class}: longer than 80 characters`);
      filters.resourceClass = args.resource_class;
    }
    if (args.node !== undefined) {
      const node = await findNode(ctx.rt.database, args.node);
      if (!node) throw badRequest(`Node ${args.node} could not be found.`);
      filters.nodeId = node.id;
    }
    if (args.owner !== undefined) filters.owner = args.owner;
    const page = parsePage(args, SORT_KEYS);
    let after: { value: unknown; id: number } | undefined;
    if (page.marker) {
      const marker = await findAllocation(ctx.rt.database, page.marker);
      if (!marker) throw allocationNotFound(page.marker);
      after = { value: (marker as unknown as Record<string, unknown>)[page.sortKey], id: marker.id };
    }
    const allocations = await listAllocations(ctx.rt.database, filters, { ...page, ...(after ? { after } : {}) });
    const body: Record<string, unknown> = { allocations: allocations.map((a) => allocationView(a, view(req, ctx), fields)) };
    const next = nextLink(req, 'allocations', page, allocations.length, allocations[allocations.length - 1]?.uuid);
    if (next) body.next = next;
    return { body };
  },
};

export const show: E = {
  ...SINCE,
  async handle(req, ctx) {
    const args = req.queryArgs(['fields']);
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    const allocation = await findAllocation(ctx.rt.database, req.param('allocation'));
    if (!allocation) throw allocationNotFound(req.param('allocation'));
    return { body: allocationView(allocation, view(req, ctx), fields) };
  },
};

export const patch: E = {
  since: '1.57',
  tooOld: { status: 405, message: 'The API version does not allow updating allocations' },
  async handle(req, ctx) {
    req.queryArgs([]);
    const ops = req.json<PatchOp[]>(PATCH_SCHEMA, 'patch');
    const allocation = await patchAllocation(ctx.rt, req.param('allocation'), ops);
    return { body: allocationView(allocation, view(req, ctx)) };
  },
};

export const remove: E = {
  ...SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    await deleteAllocation(ctx.rt, req.param('allocation'));
    return {};
  },
};

