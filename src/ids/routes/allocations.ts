// /v1/allocations (across pools; POST allocates several values all or nothing) and
// /v1/allocations/{id} (read, confirm/extend/annotate with If-Match, release).
import { idsError } from '../errors.js';
import { type Endpoint, decodeCursor, page, pageLimit } from '../request.js';
import { allocationListQuery, allocationPatchSchema, batchSchema, emptyQuery, UUID_PATTERN } from '../schemas.js';
import type { AllocationRequest } from '../store/allocate.js';
import { type AllocationPatch, allocate, getAllocation, listAllocations, patchAllocation, releaseAllocation } from '../store/allocations.js';

type E = Endpoint;

const isAllocCursor = (v: unknown): v is [number, string] => Array.isArray(v) && v.length === 2 && Number.isInteger(v[0]) && typeof v[1] === 'string' && /^[0-9a-f]{32}$/.test(v[1]);
const uuidRe = new RegExp(UUID_PATTERN);

function allocationId(raw: string): string {
  if (!uuidRe.test(raw)) throw idsError(404, 'ids.not_found', `allocation ${JSON.stringify(raw)} not found (allocation ids are UUIDs)`);
  return raw.toLowerCase();
}

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; pool?: string; owner?: string; purpose?: string; state?: string }>(allocationListQuery);
    const after = decodeCursor(q.cursor, isAllocCursor);
    const { items, next } = await listAllocations(
      ctx.database,
      { pool: q.pool, owner: q.owner, purpose: q.purpose, state: q.state },
      after ? { poolId: after[0], key: after[1] } : null,
      pageLimit(q),
    );
    return page(req, items, next ? [next.poolId, next.key] : null);
  },
};

export const batch: E = {
  async handle(req, ctx) {
    const body = req.json<{ allocations: AllocationRequest[]; dry_run?: boolean }>(batchSchema);
    const results = await allocate(ctx.database, body.allocations, { dryRun: body.dry_run });
    const anyCreated = results.some((r) => r.created);
    return {
      status: !body.dry_run && anyCreated ? 201 : 200,
      body: { allocations: results.map((r) => ({ ...r.allocation, created: r.created })), dry_run: body.dry_run ?? false },
    };
  },
};

export const show: E = {
  async handle(req, ctx) {
    req.queryObject(emptyQuery);
    const view = await getAllocation(ctx.database, allocationId(req.param('id')));
    return { body: view, etag: view.version };
  },
};

export const update: E = {
  async handle(req, ctx) {
    const patch = req.json<AllocationPatch>(allocationPatchSchema);
    const view = await patchAllocation(ctx.database, allocationId(req.param('id')), patch, req.ifMatch());
    return { body: view, etag: view.version };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    await releaseAllocation(ctx.database, allocationId(req.param('id')), req.ifMatch());
    return {};
  },
};
