// What a pool's utilization counts, and how the counts go on the wire (docs/ids.md). Integer and
// address pools count values; a prefix pool counts child prefixes of its prefix_length, aligned on
// their size — the unit it hands out — whatever length a single request asked for. Pure; no I/O.
import type { PoolSpace } from './pool-space.js';
import { covers, intersect, subtract, totalSize } from './ranges.js';
import { type Span, prefixBlock } from './values.js';

/** The values one counted unit spans: 1, or a prefix pool's child prefix (2^(bits − prefix_length)). */
export const countUnit = (space: PoolSpace): bigint => (space.kind === 'prefix' ? prefixBlock(space.family!, space.prefixLength!) : 1n);

/** The whole units, aligned on their size, that lie inside the spans. */
export function unitsIn(spans: readonly Span[], unit: bigint): bigint {
  if (unit === 1n) return totalSize(spans);
  let n = 0n;
  for (const s of spans) {
    const first = ((s.first + unit - 1n) / unit) * unit;
    const end = ((s.last + 1n) / unit) * unit;
    if (end > first) n += (end - first) / unit;
  }
  return n;
}

/** A pool's counts in its unit, before they are written (`wireUtilization`). */
export interface PoolCounts {
  total: bigint;
  used: bigint;
  free: bigint;
  largestFreeBlock: bigint;
  staticTotal: bigint;
}

/**
 * What a pool holds, in its unit.
 * - total: the units wholly inside its ranges minus the excluded values (a unit that an excluded
 *   value cuts can never be handed out whole, so it is not counted);
 * - used: the units an allocation holds any part of. Blocks are aligned on their size, so a block
 *   of a unit or more holds `size / unit` whole units (they are all in `usedValues`, the values
 *   held); a smaller block (a longer prefix than the pool's) takes the one unit it lies in out of
 *   what can still be carved whole — counted once however many such blocks share it, and only
 *   when that unit is in the total;
 * - largestFreeBlock: the units the largest free span of the automatic band holds.
 */
export function poolCounts(
  space: PoolSpace,
  usedValues: bigint,
  /** the pool's allocations smaller than one unit, in value order (none when the unit is 1) */
  smallerBlocks: readonly Span[],
  largestFreeSpan: Span | null,
): PoolCounts {
  const unit = countUnit(space);
  const usable = subtract(space.ranges, space.excluded);
  let smallerValues = 0n;
  let partlyUsed = 0n;
  let lastUnit: bigint | null = null;
  for (const b of smallerBlocks) {
    smallerValues += b.last - b.first + 1n;
    const first = (b.first / unit) * unit;
    if (first === lastUnit) continue;
    lastUnit = first;
    if (covers(usable, { first, last: first + unit - 1n })) partlyUsed += 1n;
  }
  const total = unitsIn(usable, unit);
  const used = (usedValues - smallerValues) / unit + partlyUsed;
  return {
    total,
    used,
    free: total - used,
    largestFreeBlock: largestFreeSpan ? unitsIn([largestFreeSpan], unit) : 0n,
    staticTotal: unitsIn(intersect(usable, space.staticBand), unit),
  };
}

/**
 * A pool's `utilization` as the API writes it (with the number of allocations). Counts are JSON
 * numbers while the pool's total is at most 2^53 − 1 (Number.MAX_SAFE_INTEGER), decimal strings
 * for a larger pool (an IPv6 address pool of a /75 or more, a prefix pool carving 2^53 children
 * or more). Every count of a pool has the type its
 * total decides, since no count exceeds the total.
 */
export function wireUtilization(c: PoolCounts, allocations: number) {
  const write = c.total <= BigInt(Number.MAX_SAFE_INTEGER) ? (n: bigint) => Number(n) : (n: bigint) => n.toString();
  return {
    total: write(c.total),
    used: write(c.used),
    free: write(c.free),
    allocations,
    largest_free_block: write(c.largestFreeBlock),
    used_percent: c.total === 0n ? 0 : Number((c.used * 10000n) / c.total) / 100,
    static_total: write(c.staticTotal),
  };
}
