// Identifier pools as the dashboard shows them, read from /ids/v1. A pool's free spans are read
// again only when its generation moved (every allocation and release bumps it), at most
// FREE_PAGES pages of 1000 spans: enough to draw a strip, whose width holds fewer buckets anyway.
import type { Api } from './api.js';
import { type FreeSpan, type Point, type StripBucket, freeStrip } from './free-strip.js';
import { mapLimit } from './live.js';

const FREE_PAGES = 5;
export const STRIP_BUCKETS = 160;

export interface Pool {
  name: string;
  kind: 'integer' | 'address' | 'prefix';
  family: 'ipv4' | 'ipv6' | null;
  ranges: Array<{ lower: Point; upper: Point }>;
  excluded: Array<{ lower: Point; upper: Point }>;
  static: Array<{ lower: Point; upper: Point }>;
  prefix_length: number | null;
  strategy: string;
  description: string;
  generation: number;
  utilization: { total: Count; used: Count; free: Count; allocations: number; largest_free_block: Count; used_percent: number; static_total: Count };
}

/** A pool's count (values, or a prefix pool's child prefixes): a number, or decimal text past 2^53 − 1. */
type Count = number | string;

export interface FreeRange extends FreeSpan {
  size: string;
  band: 'auto' | 'static';
}

export interface IdAllocation {
  id: string;
  pool: string;
  owner: string;
  purpose: string;
  value: Point;
  last_value: Point;
  count?: number;
  prefix_length?: number;
  state: 'allocated' | 'reserved';
  expires_at: string | null;
  created_at: string;
}

export interface PoolView {
  pool: Pool;
  buckets: StripBucket[];
  /** the static band as fractions of the strip */
  staticMarks: Array<[number, number]>;
  /** false when the pool has more free spans than were read; the strip's tail is then unknown */
  freeComplete: boolean;
  freeSpans: number;
}

interface CachedFree {
  generation: number;
  ranges: FreeRange[];
  complete: boolean;
}

export class PoolsCache {
  private readonly free = new Map<string, CachedFree>();

  async refresh(api: Api, signal: AbortSignal): Promise<PoolView[]> {
    const { items: pools } = await api.idsList<Pool>('/v1/pools?limit=1000', 10, signal);
    const names = new Set(pools.map((p) => p.name));
    for (const name of [...this.free.keys()]) if (!names.has(name)) this.free.delete(name);
    const stale = pools.filter((p) => this.free.get(p.name)?.generation !== p.generation);
    await mapLimit(stale, 4, async (p) => {
      const { items, complete } = await api.idsList<FreeRange>(`/v1/pools/${encodeURIComponent(p.name)}/free-ranges?limit=1000`, FREE_PAGES, signal);
      this.free.set(p.name, { generation: p.generation, ranges: items, complete });
    });
    return pools.map((pool) => {
      const free = this.free.get(pool.name)!;
      return { pool, ...freeStrip(pool, free.ranges, free.complete, STRIP_BUCKETS), freeComplete: free.complete, freeSpans: free.ranges.length };
    });
  }
}
