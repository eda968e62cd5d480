// /v1/allocations: create (allocating, or active at once when backfilling), list, show, PATCH
// (1.57: name and extra), delete.
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { isUuidOrName, isValidName } from '../core/rules.js';
import type { BaremetalContext } from '../context.js';
import { badRequest, frameworkError, ironicError, notAcceptable } from '../errors.js';
import { type Endpoint, type IronicRequest, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { createAllocation, deleteAllocation, patchAllocation } from '../services/allocations.js';
import { ALLOCATION_STATES, type AllocationFilters, listAllocations, requireAllocation } from '../store/allocations.js';
import { requireNode } from '../store/nodes.js';
import { ALLOCATION_FIELDS, type ViewContext, allocationView, parseFields } from '../views.js';
import { allocationIdent, invalidUuidOrName, nextLink, parsePage, requireParamVersions } from './common.js';

type E = Endpoint;

const SINCE = { since: '1.52', tooOld: { status: 404, message: 'The API version does not allow allocations' } } as const;

const view = (req: IronicRequest, ctx: BaremetalContext): ViewContext => ({ mv: req.mv, base: req.baseUrl, conductor: ctx.conductorId });

interface CreateBody {
  resource_class?: string | null;
  traits?: string[] | null;
  candidate_nodes?: string[] | null;
  name?: string | null;
  uuid?: string | null;
  extra?: Record<string, unknown> | null;
  node?: string | null;
  owner?: string | null;
}

/** What PATCH may change (1.57). */
const PATCHABLE = ['name', 'extra'];

export const create: E = {
  since: '1.52',
  tooOld: { status: 405, message: 'The API version does not allow allocations', allow: null },
  async handle(req, ctx) {
    req.queryArgs([]);
    const body = req.json<CreateBody>(schemas.allocationCreate, 'allocation');
    if (body.owner !== undefined && !req.mv.atLeast('1.60')) throw notAcceptable();
    if (body.node !== undefined && body.node !== null && !req.mv.atLeast('1.58'))
      throw badRequest('Cannot set node when creating an allocation in this API version');
    if (body.node && !isUuidOrName(body.node)) throw badRequest(invalidUuidOrName(body.node));
    const name = body.name ?? null;
    if (name !== null && !isValidName(name)) throw badRequest(`Cannot create allocation with invalid name '${name}'`);
    if (body.uuid && !isUuidLike(body.uuid)) throw badRequest(`Expected UUID for uuid: ${body.uuid}`);
    if (!body.node && !body.resource_class) throw badRequest('The resource_class field is mandatory when not backfilling');
    const allocation = await createAllocation(ctx, {
      uuid: body.uuid ? normalizeUuid(body.uuid) : null,
      name,
      resourceClass: body.resource_class ?? null,
      traits: body.traits ?? [],
      candidateNodes: body.candidate_nodes ?? [],
      extra: body.extra ?? {},
      owner: body.owner ?? null,
      node: body.node || null,
    });
    return { status: 201, body: allocationView(allocation, view(req, ctx)), location: `${req.baseUrl}/v1/allocations/${allocation.uuid}` };
  },
};

/** Fields an allocation list may not be sorted by (Ironic's invalid_sort_key_list). */
const UNSORTABLE = ['extra', 'candidate_nodes', 'traits'];
const SORT_KEYS = ['id', 'uuid', 'name', 'created_at', 'updated_at', 'resource_class', 'state', 'last_error', 'owner'];

export const list: E = {
  ...SINCE,
  async handle(req, ctx) {
    const args = req.queryArgs(['node', 'resource_class', 'state', 'owner', 'fields', 'limit', 'marker', 'sort_key', 'sort_dir']);
    requireParamVersions(req, args, { owner: { since: '1.60' } });
    if (args.sort_key !== undefined && UNSORTABLE.includes(args.sort_key))
      throw badRequest(`The sort_key value ${args.sort_key} is an invalid field for sorting`);
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
    // a node that does not exist is the request's fault here (errors.ts words it as a 400)
    if (args.node !== undefined && !isUuidOrName(args.node)) throw badRequest(`Expected UUID or name for node: ${args.node}`);
    if (args.node !== undefined) filters.nodeId = (await requireNode(ctx.database, args.node)).id;
    if (args.owner !== undefined) filters.owner = args.owner;
    const page = parsePage(args, SORT_KEYS);
    let after: { value: unknown; id: number } | undefined;
    if (page.marker) {
      const marker = await requireAllocation(ctx.database, page.marker);
      after = { value: (marker as unknown as Record<string, unknown>)[page.sortKey], id: marker.id };
    }
    const allocations = await listAllocations(ctx.database, filters, { ...page, ...(after ? { after } : {}) });
    const body: Record<string, unknown> = { allocations: allocations.map((a) => allocationView(a, view(req, ctx), fields)) };
    const next = nextLink(req, 'allocations', page, allocations.length, allocations[allocations.length - 1]?.uuid);
    if (next) body.next = next;
    return { body };
  },
};

export const show: E = {
  ...SINCE,
  async handle(req, ctx) {
    const ident = allocationIdent(req);
    const args = req.queryArgs(['fields']);
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    const allocation = await requireAllocation(ctx.database, ident);
    return { body: allocationView(allocation, view(req, ctx), fields) };
  },
};

export const patch: E = {
  since: '1.57',
  // before allocations existed the framework's 405, after that Ironic's own
  tooOld: (mv) =>
    mv.atLeast('1.52')
      ? ironicError(405, 'The API version does not allow updating allocations')
      : frameworkError(405, 'The API version does not allow allocations'),
  async handle(req, ctx) {
    const ident = allocationIdent(req, true);
    req.queryArgs([]);
    const ops = req.json<PatchOp[]>(schemas.patch, 'patch');
    for (const op of ops) {
      if (!PATCHABLE.includes(rootField(op))) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
    }
    const allocation = await patchAllocation(ctx, ident, (before) => {
      const after = applyPatch(before, ops);
      checkSchema(schemas.allocationPatched, after, 'allocation');
      const name = (after.name as string | null | undefined) ?? null;
      if (name !== before.name && name !== null && !isValidName(name)) throw badRequest(`Cannot update allocation with invalid name '${name}'`);
      return { name, extra: after.extra };
    });
    return { body: allocationView(allocation, view(req, ctx)) };
  },
};

export const remove: E = {
  since: '1.52',
  tooOld: { status: 405, message: 'The API version does not allow allocations', allow: null },
  async handle(req, ctx) {
    const ident = allocationIdent(req);
    req.queryArgs([]);
    await deleteAllocation(ctx, ident);
    return {};
  },
};
