// /v1/pools, /v1/pools/{pool}, its allocations, free ranges and imports.
import { type Endpoint, type IdsRequest, decodeCursor, page, pageLimit } from '../request.js';
import {
  allocateSchema,
  freeRangeQuery,
  importSchema,
  poolAllocationListQuery,
  poolCreateSchema,
  poolListQuery,
  poolPatchSchema,
} from '../schemas.js';
import type { AllocationRequest } from '../store/allocate.js';
import { type ImportItem, allocate, importAllocations, listAllocations } from '../store/allocations.js';
import { listFree } from '../store/free-ranges.js';
import { type PoolInput, type PoolPatch, createPool, deletePool, getPoolRow, listPools, poolView, updatePool } from '../store/pools.js';
import { deserializeSpace, formatPoint } from '../core/pool-space.js';
import { fromKey, keyOf } from '../core/values.js';
import type { Band } from '../core/ranges.js';

type E = Endpoint;

const isString = (v: unknown): v is string => typeof v === 'string';
const isAllocCursor = (v: unknown): v is [number, string] => Array.isArray(v) && v.length === 2 && Number.isInteger(v[0]) && typeof v[1] === 'string' && /^[0-9a-f]{32}$/.test(v[1]);

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; kind?: string }>(poolListQuery);
    const limit = pageLimit(q);
    const rows = await listPools(ctx.database, decodeCursor(q.cursor, isString), limit + 1, q.kind);
    const items = [];
    for (const r of rows.slice(0, limit)) items.push(await poolView(ctx.database, r));
    return page(req, items, rows.length > limit ? rows[limit - 1]!.name : null);
  },
};

export const create: E = {
  async handle(req, ctx) {
    const input = req.json<PoolInput>(poolCreateSchema);
    const { row, created } = await createPool(ctx.database, input);
    return {
      status: created ? 201 : 200,
      body: await poolView(ctx.database, row),
      etag: row.generation,
      location: req.url(`/v1/pools/${encodeURIComponent(row.name)}`),
    };
  },
};

export const show: E = {
  async handle(req, ctx) {
    const row = await getPoolRow(ctx.database, req.param('pool'));
    return { body: await poolView(ctx.database, row), etag: row.generation };
  },
};

export const update: E = {
  async handle(req, ctx) {
    const patch = req.json<PoolPatch>(poolPatchSchema);
    const row = await updatePool(ctx.database, req.param('pool'), patch, req.ifMatch());
    return { body: await poolView(ctx.database, row), etag: row.generation };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    await deletePool(ctx.database, req.param('pool'), req.ifMatch());
    return {};
  },
};

export const listAllocationsOfPool: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; owner?: string; purpose?: string; state?: string }>(poolAllocationListQuery);
    const after = decodeCursor(q.cursor, isAllocCursor);
    const { items, next } = await listAllocations(
      ctx.database,
      { pool: req.param('pool'), owner: q.owner, purpose: q.purpose, state: q.state },
      after ? { poolId: after[0], key: after[1] } : null,
      pageLimit(q),
    );
    return page(req, items, next ? [next.poolId, next.key] : null);
  },
};

export const allocateInPool: E = {
  async handle(req: IdsRequest, ctx) {
    const body = req.json<Omit<AllocationRequest, 'pool'> & { dry_run?: boolean }>(allocateSchema);
    const { dry_run: dryRun, ...rest } = body;
    const [result] = await allocate(ctx.database, [{ ...rest, pool: req.param('pool') }], { dryRun });
    const { allocation, created } = result!;
    if (dryRun) return { body: { ...allocation, dry_run: true } };
    return {
      status: created ? 201 : 200,
      body: allocation,
      etag: allocation.version,
      location: req.url(`/v1/allocations/${allocation.id}`),
    };
  },
};

export const freeRanges: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; band?: Band }>(freeRangeQuery);
    const row = await getPoolRow(ctx.database, req.param('pool'));
    const space = deserializeSpace(row.definition);
    const after = decodeCursor(q.cursor, (v): v is string => typeof v === 'string' && /^[0-9a-f]{32}$/.test(v));
    const limit = pageLimit(q);
    const rows = await listFree(ctx.database, row.id, q.band ?? null, after === null ? null : fromKey(after), limit + 1);
    const items = rows.slice(0, limit).map((r) => ({
      first: formatPoint(space, r.first),
      last: formatPoint(space, r.last),
      size: (r.last - r.first + 1n).toString(),
      band: r.band,
    }));
    return page(req, items, rows.length > limit ? keyOf(rows[limit - 1]!.first) : null);
  },
};

export const imports: E = {
  async handle(req, ctx) {
    const body = req.json<{ items: ImportItem[]; on_conflict?: 'abort' | 'skip' }>(importSchema);
    const outcome = await importAllocations(ctx.database, req.param('pool'), body.items, body.on_conflict ?? 'abort');
    return { body: outcome };
  },
};
