// /v1/allocations (across pools; POST allocates several values all or nothing) and
// /v1/allocations/{id} (read, confirm/extend/annotate with If-Match, release).
import type * as Wire from '../../client/ids-wire.js';
import { isUuid, normalizeUuid } from '../../core/uuid.js';
import { idsError } from '../errors.js';
import { type Endpoint, cursorOf, decodeCursor, page, pageLimit, answers, WITH_ETAG, IF_MATCH } from '../request.js';
import { allocationListQuery, allocationMergePatchSchema, allocationPatchSchema, batchSchema, releaseQuery } from '../schemas.js';
import {
  type AllocationPatch,
  type AllocationRequest,
  allocate,
  getAllocation,
  listAllocations,
  patchAllocation,
  releaseAllocation,
} from '../services/allocations.js';
import { allocationView } from './views.js';

type E = Endpoint;

/** A page position: [pool id, first value's key]. */
/** A position in a list of allocations: a pool id and a value's key. */
export const isAllocationPosition = (v: unknown): v is [number, string] =>
  Array.isArray(v) && v.length === 2 && Number.isInteger(v[0]) && typeof v[1] === 'string' && /^[0-9a-f]{32}$/.test(v[1]);

const cursor = cursorOf('allocations', isAllocationPosition);

function allocationId(raw: string): string {
  if (!isUuid(raw)) throw idsError(404, 'ids.not_found', `allocation ${JSON.stringify(raw)} not found (allocation ids are UUIDs)`);
  return normalizeUuid(raw);
}

export const list: E = {
  policy: 'ids:allocations:list',
  summary: 'list allocations across pools',
  query: allocationListQuery,
  ok: [200],
  ...answers('AllocationPage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string; pool?: string; owner?: string; purpose?: string; state?: string }>();
    const after = decodeCursor(q.cursor, cursor);
    const { items, next } = await listAllocations(
      ctx,
      { pool: q.pool, owner: q.owner, purpose: q.purpose, state: q.state, scope: req.poolScope() },
      after ? { poolId: after[0], key: after[1] } : null,
      pageLimit(q),
    );
    return page(req, items.map(allocationView), cursor, next ? [next.poolId, next.key] : null);
  }),
};

export const batch: E = {
  policy: 'ids:allocations:create',
  summary: 'allocate several values from several pools, all or nothing',
  body: batchSchema,
  ok: [201, 200],
  errors: [400, 404, 409, 422],
  ...answers('Batch', async (req, ctx) => {
    const body = req.json<{ allocations: AllocationRequest[]; dry_run?: boolean }>();
    const results = await allocate(ctx, body.allocations, { dryRun: body.dry_run, scope: req.poolScope() });
    const anyCreated = results.some((r) => r.created);
    return {
      status: !body.dry_run && anyCreated ? 201 : 200,
      body: { allocations: results.map((r): Wire.BatchAllocation => ({ ...allocationView(r), created: r.created })), dry_run: body.dry_run ?? false },
    };
  }),
};

export const show: E = {
  policy: 'ids:allocations:show',
  summary: 'an allocation',
  ok: [200],
  errors: [404],
  ...WITH_ETAG,
  ...answers('Allocation', async (req, ctx) => {
    req.queryObject();
    const view = allocationView(await getAllocation(ctx, allocationId(req.param('id')), req.poolScope()));
    return { body: view, etag: view.version };
  }),
};

export const update: E = {
  policy: 'ids:allocations:update',
  summary: 'confirm a reservation, extend its lease, replace metadata (a merge patch merges it)',
  body: allocationPatchSchema,
  mergeBody: allocationMergePatchSchema,
  ok: [200],
  ...IF_MATCH,
  errors: [400, 404, 409, 412],
  ...answers('Allocation', async (req, ctx) => {
    const { patch, merge } = req.patchJson<AllocationPatch>();
    const view = allocationView(await patchAllocation(ctx, allocationId(req.param('id')), patch, req.ifMatch(), req.poolScope(), merge));
    return { body: view, etag: view.version };
  }),
};

export const remove: E = {
  policy: 'ids:allocations:delete',
  summary: 'release (the value is free again at once); a value a live service instance refers to is 409 ids.value_held_by_instance unless ?force=true',
  query: releaseQuery,
  ok: [204],
  ...IF_MATCH,
  errors: [400, 404, 409, 412],
  async handle(req, ctx) {
    const q = req.queryObject<{ force?: 'true' | 'false' }>();
    await releaseAllocation(ctx, allocationId(req.param('id')), req.ifMatch(), req.poolScope(), q.force === 'true');
    return {};
  },
};
