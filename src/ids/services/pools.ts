// Pools: creating, reading, changing and deleting them, and reading their free spans. Writes are
// one transaction each, with the pool's row locked.
import type { Db } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import { patchedMetadata } from '../core/metadata.js';
import { type IfMatch, requireMatch } from '../core/if-match.js';
import { type PoolScope, inScope } from '../core/scope.js';
import {
  type PoolDefinitionInput,
  type PoolSpace,
  type Strategy,
  deserializeSpace,
  formatPoint,
  initialFreeSpans,
  parsePoolDefinition,
  serializeSpace,
  usable,
} from '../core/pool-space.js';
import { type Band, covers, normalize, splitByBand, subtract, totalSize } from '../core/ranges.js';
import { type PoolCounts, countUnit, poolCounts } from '../core/utilization.js';
import { type Span, fromKey, log2Exact } from '../core/values.js';
import { allocationsOfPool, blocksSmallerThan } from '../store/allocations.js';
import { type FreeRow, insertFree, largestFree, listFree, replaceAllFree } from '../store/free-ranges.js';
import * as store from '../store/pools.js';

export interface PoolInput extends PoolDefinitionInput {
  name: string;
  /** the owning project; absent or null: shared */
  project_id?: string | null;
  strategy?: Strategy;
  description?: string;
  metadata?: Record<string, unknown>;
}

/** A pool as its view shows it: the row and its utilization's counts. */
export interface PoolDetails {
  row: store.PoolRow;
  counts: PoolCounts;
}

/**
 * A pool's utilization in its unit (core/utilization.ts): values, or a prefix pool's child
 * prefixes — which also reads the pool's allocations smaller than a child. Without
 * `largestFreeBlock` (a scrape's gauges), integer and address pools need no query.
 */
export async function countsOfPool(db: Db, row: store.PoolRow, { largestFreeBlock = true } = {}): Promise<PoolCounts> {
  const space = deserializeSpace(row.definition);
  const unitLog2 = log2Exact(countUnit(space));
  const smaller = unitLog2 > 0 ? await blocksSmallerThan(db, row.id, unitLog2) : [];
  return poolCounts(space, BigInt(row.used_count), smaller, largestFreeBlock ? await largestFree(db, row.id, 'auto') : null);
}

const details = async (ctx: IdsContext, row: store.PoolRow): Promise<PoolDetails> => ({ row, counts: await countsOfPool(ctx.database, row) });

/** The pool of this name, if the scope reaches it (else `pool_not_found`, as for a pool that does not exist). */
export async function getPoolRow(ctx: IdsContext, name: string, scope: PoolScope): Promise<store.PoolRow> {
  const row = await store.getPoolRow(ctx.database, name);
  if (!inScope(scope, row.project_id)) throw idsDomainError('pool_not_found', { pool: name });
  return row;
}

export async function getPool(ctx: IdsContext, name: string, scope: PoolScope): Promise<PoolDetails> {
  return details(ctx, await getPoolRow(ctx, name, scope));
}

/** Up to `limit` pools after `after` (by name); `next` is set when more follow. */
export async function listPools(
  ctx: IdsContext,
  after: string | null,
  limit: number,
  scope: PoolScope,
  kind?: string,
): Promise<{ items: PoolDetails[]; next: string | null }> {
  const rows = await store.listPools(ctx.database, after, limit + 1, scope, kind);
  const items: PoolDetails[] = [];
  for (const r of rows.slice(0, limit)) items.push(await details(ctx, r));
  return { items, next: rows.length > limit ? rows[limit - 1]!.name : null };
}

/** Definition fingerprint: what makes two creations of one name "the same pool". */
const fingerprint = (space: PoolSpace, strategy: string, project: string | null) => `${serializeSpace(space)}|${strategy}|${project ?? ''}`;

/** Create a pool. Creating the same name with the same definition again answers the existing one. */
export async function createPool(ctx: IdsContext, input: PoolInput): Promise<PoolDetails & { created: boolean }> {
  const space = parsePoolDefinition(input);
  const strategy = input.strategy ?? 'lowest';
  const { row, created } = await transaction(ctx.database, async (tx) => {
    const existing = await store.findPoolRow(tx, input.name);
    if (existing) {
      if (fingerprint(deserializeSpace(existing.definition), existing.strategy, existing.project_id) === fingerprint(space, strategy, input.project_id ?? null))
        return { row: existing, created: false };
      throw idsDomainError('pool_exists', { pool: input.name });
    }
    const id = await store.insertPool(tx, {
      name: input.name,
      kind: space.kind,
      definition: serializeSpace(space),
      strategy,
      description: input.description ?? '',
      metadata: JSON.stringify(input.metadata ?? {}),
      total_count: totalSize(usable(space)).toString(),
      project_id: input.project_id ?? null,
    });
    await insertFree(tx, id, initialFreeSpans(space));
    return { row: await store.poolRowById(tx, id), created: true };
  });
  return { ...(await details(ctx, row)), created };
}

export interface PoolPatch {
  strategy?: Strategy;
  /** null: cleared (merge patches only) */
  description?: string | null;
  /** null: every label removed (merge patches only) */
  metadata?: Record<string, unknown> | null;
  ranges?: PoolInput['ranges'];
  excluded?: PoolInput['excluded'];
  static?: PoolInput['static'];
  prefix_length?: number;
}

/**
 * Change a pool. New ranges, exclusions or static band are checked against every allocation (an
 * allocation left outside the new usable set is refused, naming it) and the free spans are
 * rebuilt: an administrative operation whose cost grows with the number of allocations.
 */
export async function updatePool(ctx: IdsContext, name: string, patch: PoolPatch, ifMatch: IfMatch, merge = false): Promise<PoolDetails> {
  const row = await transaction(ctx.database, async (tx) => {
    const pool = await store.lockPool(tx, name);
    requireMatch(ifMatch, pool.generation);
    const changes: Parameters<typeof store.updatePoolRow>[2] = {};
    if (patch.strategy !== undefined) changes.strategy = patch.strategy;
    if (patch.description !== undefined) changes.description = patch.description ?? '';
    if (patch.metadata !== undefined) changes.metadata = patchedMetadata((await store.poolRowById(tx, pool.id)).metadata, patch.metadata, merge);
    const spaceChanged = patch.ranges !== undefined || patch.excluded !== undefined || patch.static !== undefined || patch.prefix_length !== undefined;
    if (spaceChanged) {
      const old = pool.space;
      const asItems = (spans: Span[]) => spans.map((s) => ({ lower: formatPoint(old, s.first), upper: formatPoint(old, s.last) }));
      const space = parsePoolDefinition({
        kind: old.kind,
        ranges: patch.ranges ?? asItems(old.ranges),
        excluded: patch.excluded ?? asItems(old.excluded),
        static: patch.static ?? asItems(old.staticBand),
        exclude_network_and_broadcast: false,
        ...(old.kind === 'prefix' ? { prefix_length: patch.prefix_length ?? old.prefixLength! } : {}),
        ...(old.kind !== 'prefix' && patch.prefix_length !== undefined ? { prefix_length: patch.prefix_length } : {}),
      });
      const allocations = await allocationsOfPool(tx, pool.id);
      const usableSpans = usable(space);
      const outside = allocations.filter((a) => !covers(usableSpans, { first: fromKey(a.first_key), last: fromKey(a.last_key) }));
      if (outside.length) {
        throw idsDomainError('pool_change_strands_allocations', {
          count: outside.length,
          allocations: outside.slice(0, 100).map((a) => ({ id: a.id, owner: a.owner, purpose: a.purpose, value: formatPoint(old, fromKey(a.first_key)) })),
        });
      }
      const taken = normalize(allocations.map((a) => ({ first: fromKey(a.first_key), last: fromKey(a.last_key) })));
      await replaceAllFree(
        tx,
        pool.id,
        subtract(usableSpans, taken).flatMap((s) => splitByBand(s, space.staticBand)),
      );
      changes.definition = serializeSpace(space);
      changes.total_count = totalSize(usableSpans).toString();
    }
    await store.updatePoolRow(tx, pool, changes);
    return store.poolRowById(tx, pool.id);
  });
  return details(ctx, row);
}

export async function deletePool(ctx: IdsContext, name: string, ifMatch: IfMatch): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const pool = await store.lockPool(tx, name);
    requireMatch(ifMatch, pool.generation);
    if (pool.allocationCount > 0) throw idsDomainError('pool_not_empty', { pool: name, allocations: pool.allocationCount });
    await store.deletePoolRows(tx, pool.id);
  });
}

/** A page of a pool's free spans in value order, with the pool's value space to write them. */
export async function freeRanges(
  ctx: IdsContext,
  name: string,
  band: Band | null,
  after: bigint | null,
  limit: number,
  scope: PoolScope,
): Promise<{ space: PoolSpace; items: FreeRow[]; next: bigint | null }> {
  const row = await getPoolRow(ctx, name, scope);
  const rows = await listFree(ctx.database, row.id, band, after, limit + 1);
  return { space: deserializeSpace(row.definition), items: rows.slice(0, limit), next: rows.length > limit ? rows[limit - 1]!.first : null };
}

/** The size and use of the first `limit` pools by name, for the metrics. */
/**
 * Total and used of the first `limit` pools by name, each in its unit (values, or a prefix pool's
 * child prefixes): the metrics' gauges. IPv6 counts beyond 2^53 become floats, precise enough there.
 */
export async function poolUsage(ctx: IdsContext, limit: number): Promise<Array<{ name: string; total: number; used: number }>> {
  const usage = [];
  for (const row of await store.firstPools(ctx.database, limit)) {
    const c = await countsOfPool(ctx.database, row, { largestFreeBlock: false });
    usage.push({ name: row.name, total: Number(c.total), used: Number(c.used) });
  }
  return usage;
}
