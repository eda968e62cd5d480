// /v1/pools, /v1/pools/{pool}, its allocations, free ranges and imports.
import { conflictView } from '../errors.js';
import { type Endpoint, type IdsRequest, cursorOf, decodeCursor, page, pageLimit, answers, WITH_ETAG, IF_MATCH } from '../request.js';
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
import { type AllocationRequest, type ImportItem, allocate, importAllocations, listAllocations, releaseAllocationByValue } from '../services/allocations.js';
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
  policy: 'ids:pools:list',
  summary: 'list pools (by name)',
  query: poolListQuery,
  ok: [200],
  ...answers('PoolPage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string; kind?: string }>();
    const { items, next } = await listPools(ctx, decodeCursor(q.cursor, poolCursor), pageLimit(q), req.poolScope(), q.kind);
    return page(req, items.map(poolView), poolCursor, next);
  }),
};

export const create: E = {
  policy: 'ids:pools:create',
  summary: 'create a pool (same name and definition again: 200 with the existing pool)',
  body: poolCreateSchema,
  ok: [201, 200],
  errors: [400, 409, 415, 422],
  ...WITH_ETAG,
  ...answers('Pool', async (req, ctx) => {
    const input = req.json<PoolInput>();
    const pool = await createPool(ctx, input);
    return {
      status: pool.created ? 201 : 200,
      body: poolView(pool),
      etag: pool.row.generation,
      location: req.url(`/v1/pools/${encodeURIComponent(pool.row.name)}`),
    };
  }),
};

export const show: E = {
  policy: 'ids:pools:show',
  summary: 'a pool with its utilization',
  ok: [200],
  errors: [404],
  ...WITH_ETAG,
  ...answers('Pool', async (req, ctx) => {
    const pool = await getPool(ctx, req.param('pool'), req.poolScope());
    return { body: poolView(pool), etag: pool.row.generation };
  }),
};

export const update: E = {
  policy: 'ids:pools:update',
  summary: 'change strategy, description, metadata, ranges, exclusions, static band (a merge patch merges metadata)',
  body: poolPatchSchema,
  mergeBody: poolMergePatchSchema,
  ok: [200],
  ...IF_MATCH,
  errors: [400, 404, 409, 412, 422],
  ...answers('Pool', async (req, ctx) => {
    const { patch, merge } = req.patchJson<PoolPatch>();
    await getPoolRow(ctx, req.param('pool'), req.poolScope());
    const pool = await updatePool(ctx, req.param('pool'), patch, req.ifMatch(), merge);
    return { body: poolView(pool), etag: pool.row.generation };
  }),
};

export const remove: E = {
  policy: 'ids:pools:delete',
  summary: 'delete an empty pool',
  ok: [204],
  ...IF_MATCH,
  errors: [404, 409, 412],
  async handle(req, ctx) {
    await getPoolRow(ctx, req.param('pool'), req.poolScope());
    await deletePool(ctx, req.param('pool'), req.ifMatch());
    return {};
  },
};

export const listAllocationsOfPool: E = {
  policy: 'ids:allocations:list',
  summary: "list a pool's allocations in value order; ?value= finds the one holding a value",
  query: poolAllocationListQuery,
  ok: [200],
  errors: [400, 404],
  ...answers('AllocationPage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string; owner?: string; purpose?: string; state?: string; value?: string }>();
    const after = decodeCursor(q.cursor, poolAllocationCursor);
    const { items, next } = await listAllocations(
      ctx,
      { pool: req.param('pool'), owner: q.owner, purpose: q.purpose, state: q.state, value: q.value, scope: req.poolScope() },
      after ? { poolId: after[0], key: after[1] } : null,
      pageLimit(q),
    );
    return page(req, items.map(allocationView), poolAllocationCursor, next ? [next.poolId, next.key] : null);
  }),
};

/**
 * Release by value: DELETE on the pool's allocations with `?value=` (required). Not a path
 * segment: a prefix pool's value holds a "/", which a segment could only carry as %2F, and proxies
 * decode or refuse that.
 */
export const releaseByValue: E = {
  policy: 'ids:allocations:delete',
  summary:
    'release the allocation whose value is ?value= (as the allocation writes it), with the rules of a release by id (?force=true, If-Match); a value inside a larger block is 404 naming that block',
  query: poolReleaseQuery,
  ok: [204],
  ...IF_MATCH,
  errors: [400, 404, 409, 412],
  async handle(req, ctx) {
    const q = req.queryObject<{ value: string; force?: 'true' | 'false' }>();
    await releaseAllocationByValue(ctx, req.param('pool'), q.value, req.ifMatch(), req.poolScope(), q.force === 'true');
    return {};
  },
};

export const allocateInPool: E = {
  policy: 'ids:allocations:create',
  summary: 'allocate for owner+purpose (idempotent: 200 with what the owner already holds); dry_run previews',
  body: allocateSchema,
  ok: [201, 200],
  errors: [400, 404, 409, 422],
  ...WITH_ETAG,
  ...answers('Allocation', async (req: IdsRequest, ctx) => {
    const body = req.json<Omit<AllocationRequest, 'pool'> & { dry_run?: boolean }>();
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
  }),
};

export const freeRanges: E = {
  policy: 'ids:pools:show',
  summary: 'free spans in value order',
  query: freeRangeQuery,
  ok: [200],
  errors: [404],
  ...answers('FreeRangePage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string; band?: Band }>();
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
  }),
};

export const imports: E = {
  policy: 'ids:pools:import',
  summary: 'import values already in use, conflicts reported per item',
  body: importSchema,
  ok: [200],
  errors: [400, 404, 409],
  ...answers('ImportOutcome', async (req, ctx) => {
    const body = req.json<{ items: ImportItem[]; on_conflict?: 'abort' | 'skip' }>(importBodyAccepted);
    await getPoolRow(ctx, req.param('pool'), req.poolScope());
    const outcome = await importAllocations(ctx, req.param('pool'), body.items, body.on_conflict ?? 'abort');
    return { body: { ...outcome, conflicts: outcome.conflicts.map(conflictView) } };
  }),
};
