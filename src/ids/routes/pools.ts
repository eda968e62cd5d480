// /v1/pools, /v1/pools/{pool}, its allocations, free ranges and imports.
import { conflictView } from '../errors.js';
import { type Endpoint, type IdsRequest, cursorOf, decodeCursor, page, pageLimit } from '../request.js';
import {
  allocateSchema,
  freeRangeQuery,
  importBodyAccepted,
  importSchema,
  poolAllocationListQuery,
  poolCreateSchema,
  poolListQuery,
  poolMergePatchSchema,
  poolPatchSchema,
  poolReleaseQuery,
} from '../schemas.js';
import { type ImportItem, allocate, importAllocations, listAllocations, releaseAllocationByValue } from '../services/allocations.js';
import {
  type PoolInput,
  type PoolPatch,
  createPool,
  deletePool,
  freeRanges as freeRangesOf,
  getPool,
  getPoolRow,
  listPools,
  updatePool,
} from '../services/pools.js';
import type { AllocationRequest } from '../store/allocate.js';
import { formatPoint } from '../core/pool-space.js';
import type { Band } from '../core/ranges.js';
import { fromKey, keyOf } from '../core/values.js';
import { isAllocationPosition } from './allocations.js';
import { allocationView, poolView } from './views.js';

type E = Endpoint;

const poolCursor = cursorOf('pools', (v): v is string => typeof v === 'string');
const poolAllocationCursor = cursorOf('pool allocations', isAllocationPosition);
const freeRangeCursor = cursorOf('free ranges', (v): v is string => typeof v === 'string' && /^[0-9a-f]{32}$/.test(v));

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; kind?: string }>(poolListQuery);
    const { items, next } = await listPools(ctx, decodeCursor(q.cursor, poolCursor), pageLimit(q), req.poolScope(), q.kind);
    return page(req, items.map(poolView), poolCursor, next);
  },
};

export const create: E = {
  async handle(req, ctx) {
    const input = req.json<PoolInput>(poolCreateSchema);
    const pool = await createPool(ctx, input);
    return {
      status: pool.created ? 201 : 200,
      body: poolView(pool),
      etag: pool.row.generation,
      location: req.url(`/v1/pools/${encodeURIComponent(pool.row.name)}`),
    };
  },
};

export const show: E = {
  async handle(req, ctx) {
    const pool = await getPool(ctx, req.param('pool'), req.poolScope());
    return { body: poolView(pool), etag: pool.row.generation };
  },
};

export const update: E = {
  async handle(req, ctx) {
    const { patch, merge } = req.patchJson<PoolPatch>(poolPatchSchema, poolMergePatchSchema);
    await getPoolRow(ctx, req.param('pool'), req.poolScope());
    const pool = await updatePool(ctx, req.param('pool'), patch, req.ifMatch(), merge);
    return { body: poolView(pool), etag: pool.row.generation };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    await getPoolRow(ctx, req.param('pool'), req.poolScope());
    await deletePool(ctx, req.param('pool'), req.ifMatch());
    return {};
  },
};

export const listAllocationsOfPool: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; owner?: string; purpose?: string; state?: string; value?: string }>(poolAllocationListQuery);
    const after = decodeCursor(q.cursor, poolAllocationCursor);
    const { items, next } = await listAllocations(
      ctx,
      { pool: req.param('pool'), owner: q.owner, purpose: q.purpose, state: q.state, value: q.value, scope: req.poolScope() },
      after ? { poolId: after[0], key: after[1] } : null,
      pageLimit(q),
    );
    return page(req, items.map(allocationView), poolAllocationCursor, next ? [next.poolId, next.key] : null);
  },
};

/**
 * Release by value: DELETE on the pool's allocations with `?value=` (required). Not a path
 * segment: a prefix pool's value holds a "/", which a segment could only carry as %2F, and proxies
 * decode or refuse that.
 */
export const releaseByValue: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ value: string; force?: 'true' | 'false' }>(poolReleaseQuery);
    await releaseAllocationByValue(ctx, req.param('pool'), q.value, req.ifMatch(), req.poolScope(), q.force === 'true');
    return {};
  },
};

export const allocateInPool: E = {
  async handle(req: IdsRequest, ctx) {
    const body = req.json<Omit<AllocationRequest, 'pool'> & { dry_run?: boolean }>(allocateSchema);
    const { dry_run: dryRun, ...rest } = body;
    const [result] = await allocate(ctx, [{ ...rest, pool: req.param('pool') }], { dryRun, scope: req.poolScope() });
    const allocation = allocationView(result!);
    if (dryRun) return { body: { ...allocation, dry_run: true } };
    return {
      status: result!.created ? 201 : 200,
      body: allocation,
      etag: allocation.version,
      location: req.url(`/v1/allocations/${allocation.id}`),
    };
  },
};

export const freeRanges: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; band?: Band }>(freeRangeQuery);
    const after = decodeCursor(q.cursor, freeRangeCursor);
    const { space, items, next } = await freeRangesOf(
      ctx,
      req.param('pool'),
      q.band ?? null,
      after === null ? null : fromKey(after),
      pageLimit(q),
      req.poolScope(),
    );
    const view = items.map((r) => ({
      first: formatPoint(space, r.first),
      last: formatPoint(space, r.last),
      size: (r.last - r.first + 1n).toString(),
      band: r.band,
    }));
    return page(req, view, freeRangeCursor, next === null ? null : keyOf(next));
  },
};

export const imports: E = {
  async handle(req, ctx) {
    const body = req.json<{ items: ImportItem[]; on_conflict?: 'abort' | 'skip' }>(importSchema, importBodyAccepted);
    await getPoolRow(ctx, req.param('pool'), req.poolScope());
    const outcome = await importAllocations(ctx, req.param('pool'), body.items, body.on_conflict ?? 'abort');
    return { body: { ...outcome, conflicts: outcome.conflicts.map(conflictView) } };
  },
};
