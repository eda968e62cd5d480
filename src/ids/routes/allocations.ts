// /v1/allocations (across pools; POST allocates several values all or nothing) and
// /v1/allocations/{id} (read, confirm/extend/annotate with If-Match, release).
import { isUuid, normalizeUuid } from '../../core/uuid.js';
import { idsError } from '../errors.js';
import { type Endpoint, cursorOf, decodeCursor, page, pageLimit } from '../request.js';
import { allocationListQuery, allocationMergePatchSchema, allocationPatchSchema, batchSchema, emptyQuery, releaseQuery } from '../schemas.js';
import { type AllocationPatch, allocate, getAllocation, listAllocations, patchAllocation, releaseAllocation } from '../services/allocations.js';
import type { AllocationRequest } from '../store/allocate.js';
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
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; pool?: string; owner?: string; purpose?: string; state?: string }>(allocationListQuery);
    const after = decodeCursor(q.cursor, cursor);
    const { items, next } = await listAllocations(
      ctx,
      { pool: q.pool, owner: q.owner, purpose: q.purpose, state: q.state, scope: req.poolScope() },
      after ? { poolId: after[0], key: after[1] } : null,
      pageLimit(q),
    );
    return page(req, items.map(allocationView), cursor, next ? [next.poolId, next.key] : null);
  },
};

export const batch: E = {
  async handle(req, ctx) {
    const body = req.json<{ allocations: AllocationRequest[]; dry_run?: boolean }>(batchSchema);
    const results = await allocate(ctx, body.allocations, { dryRun: body.dry_run, scope: req.poolScope() });
    const anyCreated = results.some((r) => r.created);
    return {
      status: !body.dry_run && anyCreated ? 201 : 200,
      body: { allocations: results.map((r) => ({ ...allocationView(r), created: r.created })), dry_run: body.dry_run ?? false },
    };
  },
};

export const show: E = {
  async handle(req, ctx) {
    req.queryObject(emptyQuery);
    const view = allocationView(await getAllocation(ctx, allocationId(req.param('id')), req.poolScope()));
    return { body: view, etag: view.version };
  },
};

export const update: E = {
  async handle(req, ctx) {
    const { patch, merge } = req.patchJson<AllocationPatch>(allocationPatchSchema, allocationMergePatchSchema);
    const view = allocationView(await patchAllocation(ctx, allocationId(req.param('id')), patch, req.ifMatch(), req.poolScope(), merge));
    return { body: view, etag: view.version };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ force?: 'true' | 'false' }>(releaseQuery);
    await releaseAllocation(ctx, allocationId(req.param('id')), req.ifMatch(), req.poolScope(), q.force === 'true');
    return {};
  },
};
