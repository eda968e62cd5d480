// /v1/allocations: create (answered `allocating`, as Ironic answers it, or active at once when
// backfilling; with `Prefer: wait=N`, the allocation once finished), list, show, PATCH (1.57: name
// and extra), delete.
import { columnOf, listQuery, showQuery, since, text } from './query.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import { isUuidOrName, isValidName } from '../core/rules.js';
import type { BaremetalContext } from '../context.js';
import { badRequest, frameworkError, ironicError, notAcceptable } from '../errors.js';
import { type Endpoint, type IronicRequest, answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import { awaitAllocation, createAllocation, deleteAllocation, patchAllocation } from '../services/allocations.js';
import {
  ALLOCATION_STATES,
  type AllocationColumn,
  type AllocationFilters,
  type AllocationRecord,
  getAllocation,
  listAllocationPage,
} from '../services/allocation-reads.js';
import { getNode, nodeNotFound } from '../services/node-reads.js';
import { preferredWait } from '../../http/prefer.js';
import { allocationTarget, authorizedAllocation, canSeeNode, listScope, scoped } from './scope.js';
import { ALLOCATION_FIELDS, allocationView, parseFields } from '../views.js';
import { allocationIdent, invalidUuidOrName, viewContext } from './common.js';
import { type Collection, columnConditions, listPage, listRequest } from './listing.js';

type E = Endpoint;

const SINCE = { since: '1.52', tooOld: { status: 404, message: 'The API version does not allow allocations' } } as const;

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
  ...scoped('baremetal:allocation:create'),
  summary: 'request an allocation (asynchronous: answered allocating, then active or error; Prefer: wait=N answers the outcome)',
  body: schemas.allocationCreate,
  ok: [201],
  response: schemaRef('Allocation'),
  headers: [
    {
      name: 'Prefer',
      description:
        'RFC 7240: `wait=N` answers the allocation once active or failed, if that comes within N seconds (at most --max-prefer-wait); without it, the allocation as created (Ironic)',
      example: 'wait=10',
    },
  ],
  responseHeaders: {
    Location: 'the new allocation',
    'Preference-Applied': '`wait=N` when the answer waited for the outcome (N as waited)',
  },
  since: '1.52',
  tooOld: { status: 405, message: 'The API version does not allow allocations', allow: null },
  async handle(req, ctx) {
    req.queryArgs();
    const body = req.json<CreateBody>('allocation');
    if (body.owner !== undefined && !req.mv.atLeast('1.60')) throw notAcceptable();
    if (body.node !== undefined && body.node !== null && !req.mv.atLeast('1.58'))
      throw badRequest('Cannot set node when creating an allocation in this API version');
    if (body.node && !isUuidOrName(body.node)) throw badRequest(invalidUuidOrName(body.node));
    const name = body.name ?? null;
    if (name !== null && !isValidName(name)) throw badRequest(`Cannot create allocation with invalid name '${name}'`);
    if (body.uuid && !isUuidLike(body.uuid)) throw badRequest(`Expected UUID for uuid: ${body.uuid}`);
    const owner = allocationOwner(req, ctx, body.owner ?? null);
    if (body.node) {
      // a backfilled node the caller may not see is, as one that does not exist, the request's fault (400)
      const node = await getNode(ctx, body.node);
      if (!canSeeNode(req, node)) throw nodeNotFound(body.node);
    }
    if (!body.node && !body.resource_class) throw badRequest('The resource_class field is mandatory when not backfilling');
    const allocation = await createAllocation(ctx, {
      uuid: body.uuid ? normalizeUuid(body.uuid) : null,
      name,
      resourceClass: body.resource_class ?? null,
      traits: body.traits ?? [],
      candidateNodes: body.candidate_nodes ?? [],
      // without create_restricted, candidates are only the caller's project's nodes
      ...(req.allows('baremetal:allocation:create_restricted') ? {} : { candidatesOf: req.credentials?.projectId ?? null }),
      extra: body.extra ?? {},
      owner,
      node: body.node || null,
    });
    const answer = (a: AllocationRecord, headers: Record<string, string> = {}) => ({
      status: 201,
      body: allocationView(a, viewContext(req, ctx)),
      location: `${req.baseUrl}/v1/allocations/${allocation.uuid}`,
      headers,
    });
    // a backfill is done in the request, and Ironic answers it so
    if (body.node) return answer(allocation);
    const waitMs = waitFor(req, ctx);
    if (waitMs === null) return answer(asCreated(allocation));
    const connection = req.whileConnected();
    try {
      const settled = allocation.state === 'allocating' ? await awaitAllocation(ctx, allocation.id, waitMs, connection.signal) : allocation;
      return answer(settled ?? asCreated(allocation), { 'preference-applied': `wait=${waitMs / 1000}` });
    } finally {
      connection.release();
    }
  },
};

/**
 * A new allocation as Ironic answers its POST: `allocating`, no node yet, never updated — even
 * when the node was picked in the request's own transaction (to the client, a conductor that
 * finished before its first GET). Clients that want the outcome in the answer ask for it with
 * `Prefer: wait=N`.
 */
function asCreated(a: AllocationRecord): AllocationRecord {
  return { ...a, state: 'allocating', node_id: null, node_uuid: null, last_error: null, updated_at: null };
}

/**
 * How long the request may wait for its allocation to finish, ms: the client's `Prefer: wait=N`
 * (RFC 7240), bounded by --max-prefer-wait; null when it asks for no wait or the operator turned
 * waiting off (0), and Ironic's answer is given.
 */
function waitFor(req: IronicRequest, ctx: BaremetalContext): number | null {
  const seconds = preferredWait(req.raw.headers.prefer);
  if (seconds === null || ctx.config.maxPreferWait === 0) return null;
  return Math.min(seconds * 1000, ctx.config.maxPreferWait);
}

/**
 * Who may create an allocation, and whose it is (Ironic's allocation controller): with
 * `baremetal:allocation:create` as asked; otherwise with `create_restricted`, the caller's own
 * project's (naming another project is refused). With the new defaults, a project-scoped caller's
 * allocation is its project's unless it names an owner — another project's only with
 * `create_restricted`. The legacy defaults also ask `create_pre_rbac` of allocations without owner.
 */
function allocationOwner(req: IronicRequest, ctx: BaremetalContext, requested: string | null): string | null {
  const credentials = req.credentials;
  const project = credentials?.projectId ?? null;
  const legacy = !ctx.config.enforceNewDefaults;
  let owner = requested;
  if (!(req.allows('baremetal:allocation:create') && (!legacy || owner || req.allows('baremetal:allocation:create_pre_rbac')))) {
    if (project && owner && owner !== project) req.authorize('baremetal:allocation:create');
    if (owner && legacy) req.authorize('baremetal:allocation:create_pre_rbac');
    req.authorize('baremetal:allocation:create_restricted');
    owner = project;
  }
  if (!legacy && credentials && credentials.systemScope !== 'all') {
    if (!owner) owner = project;
    else if (owner !== project && !req.allows('baremetal:allocation:create_restricted'))
      throw ironicError(
        403,
        `Cannot create allocation with an owner Project ID value ${owner} not matching the requester Project ID ${project}. Policy baremetal:allocation:create_restricted is required for this capability.`,
      );
  }
  return owner;
}

const column = columnOf<AllocationColumn>();

/** The allocation collection (no `detail`): Ironic's invalid_sort_key_list are its documents and lists. */
const ALLOCATIONS: Collection<'allocations'> = {
  key: 'allocations',
  table: ALLOCATION_FIELDS,
  sortKeys: ['id', 'uuid', 'name', 'created_at', 'updated_at', 'resource_class', 'state', 'last_error', 'owner'],
  unsortable: ['extra', 'candidate_nodes', 'traits'],
  detail: 'none',
};

export const list: E = {
  ...scoped('baremetal:allocation:list_all'),
  summary: 'list allocations',
  query: listQuery({ node: text, resource_class: column('resource_class', text), state: column('state', text), owner: since('1.60', text) }),
  ok: [200],
  ...SINCE,
  ...answers('AllocationList', async (req, ctx) => {
    // Whose allocations first, as Ironic checks: a project without list_all sees its own.
    const owner = listScope(req, 'allocation', req.query.get('owner') ?? undefined);
    const list = listRequest(req, ALLOCATIONS, 'allocations', false);
    const { args } = list;
    if (args.state !== undefined && !(ALLOCATION_STATES as readonly string[]).includes(args.state))
      throw badRequest(`Invalid state ${args.state}: an allocation is ${ALLOCATION_STATES.join(', ')}`);
    if (args.resource_class !== undefined && args.resource_class.length > schemas.RESOURCE_CLASS_MAX_LENGTH)
      throw badRequest(`Invalid resource_class ${args.resource_class}: longer than ${schemas.RESOURCE_CLASS_MAX_LENGTH} characters`);
    // the column filters go to the store as declared
    const filters: AllocationFilters = { columns: columnConditions(req, list) };
    // a node that does not exist is the request's fault here (errors.ts words it as a 400)
    if (args.node !== undefined && !isUuidOrName(args.node)) throw badRequest(`Expected UUID or name for node: ${args.node}`);
    if (args.node !== undefined) {
      const node = await getNode(ctx, args.node);
      if (!canSeeNode(req, node)) throw ironicError(404, 'Resource could not be found.');
      filters.nodeId = node.id;
    }
    if (owner !== undefined) filters.owner = owner;
    return listPage(req, ALLOCATIONS, list, viewContext(req, ctx), {
      marker: (uuid) => getAllocation(ctx, uuid),
      async find(page) {
        const allocations = await listAllocationPage(ctx, filters, page);
        for (const a of allocations) req.authorize('baremetal:allocation:get', allocationTarget(a));
        return allocations;
      },
      view: allocationView,
    });
  }),
};

export const show: E = {
  ...scoped('baremetal:allocation:get'),
  summary: 'an allocation (by uuid or name)',
  query: showQuery(),
  ok: [200],
  response: schemaRef('Allocation'),
  ...SINCE,
  async handle(req, ctx) {
    const ident = allocationIdent(req);
    const args = req.queryArgs();
    const allocation = await authorizedAllocation(req, ctx, ident, req.endpointRule);
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    return { body: allocationView(allocation, viewContext(req, ctx), fields) };
  },
};

export const patch: E = {
  ...scoped('baremetal:allocation:update'),
  summary: "change an allocation's name or extra (JSON Patch)",
  body: schemas.patch,
  ok: [200],
  response: schemaRef('Allocation'),
  since: '1.57',
  // before allocations existed the framework's 405, after that Ironic's own
  tooOld: (mv) =>
    mv.atLeast('1.52')
      ? ironicError(405, 'The API version does not allow updating allocations')
      : frameworkError(405, 'The API version does not allow allocations'),
  async handle(req, ctx) {
    const ident = allocationIdent(req, true);
    await authorizedAllocation(req, ctx, ident, req.endpointRule);
    req.queryArgs();
    const ops = req.json<PatchOp[]>('patch');
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
    return { body: allocationView(allocation, viewContext(req, ctx)) };
  },
};

export const remove: E = {
  ...scoped('baremetal:allocation:delete'),
  summary: 'delete an allocation (frees its node)',
  ok: [204],
  since: '1.52',
  tooOld: { status: 405, message: 'The API version does not allow allocations', allow: null },
  async handle(req, ctx) {
    const ident = allocationIdent(req);
    await authorizedAllocation(req, ctx, ident, req.endpointRule);
    req.queryArgs();
    await deleteAllocation(ctx, ident);
    return {};
  },
};
