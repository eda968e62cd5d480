// The picture of a pool's free values: its span cut into equal buckets, and for each the share
// of its usable values (in a range, not excluded) that are free. Pure arithmetic on 128-bit
// values (BigInt), so an IPv6 /64 draws as well as a VLAN range.

import { bigCount } from './format.js';

export type Point = number | string;

export interface StripBucket {
  /** free / usable values in the bucket (0..1); null when the bucket holds no usable value or is not known */
  free: number | null;
  title: string;
}

export interface StripPool {
  kind: string;
  family: 'ipv4' | 'ipv6' | null;
  ranges: Array<{ lower: Point; upper: Point }>;
  excluded: Array<{ lower: Point; upper: Point }>;
  static: Array<{ lower: Point; upper: Point }>;
}

export interface FreeSpan {
  first: Point;
  last: Point;
}

/** An integer, an IPv4 or IPv6 address, or a prefix (its first address), as a number. */
export function pointValue(p: Point): bigint {
  if (typeof p === 'number') return BigInt(p);
  const s = p.split('/')[0]!;
  if (/^\d+$/.test(s)) return BigInt(s);
  if (s.includes(':')) return ipv6(s);
  return s.split('.').reduce((n, octet) => (n << 8n) + BigInt(Number(octet)), 0n);
}

function ipv6(s: string): bigint {
  let text = s;
  // an embedded IPv4 tail (::ffff:192.0.2.1) becomes two groups
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = pointValue(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

interface Interval {
  lo: bigint;
  hi: bigint;
}

/** Sorted, overlapping and touching intervals merged: each value counted once. */
function merge(list: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const r of [...list].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0))) {
    const last = out[out.length - 1];
    // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min/max take numbers only)
    if (last && r.lo <= last.hi + 1n) last.hi = r.hi > last.hi ? r.hi : last.hi;
    else out.push({ ...r });
  }
  return out;
}

/** The values in both lists. */
function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const x of a)
    for (const y of b) {
      // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min/max take numbers only)
      const lo = x.lo > y.lo ? x.lo : y.lo;
      // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min/max take numbers only)
      const hi = x.hi < y.hi ? x.hi : y.hi;
      if (lo <= hi) out.push({ lo, hi });
    }
  return merge(out);
}

/** Add each interval's overlap with every bucket it touches into `into`. */
function spread(intervals: Interval[], base: bigint, size: bigint, n: number, into: bigint[]): void {
  const bucketStart = (i: number) => base + (size * BigInt(i)) / BigInt(n);
  // bucket i holds [bucketStart(i), bucketStart(i + 1)): v's bucket is the last i with bucketStart(i) <= v
  const bucketOf = (v: bigint) => Number(((v - base + 1n) * BigInt(n) - 1n) / size);
  for (const { lo, hi } of intervals) {
    const a = lo < base ? base : lo;
    const b = hi > base + size - 1n ? base + size - 1n : hi;
    if (a > b) continue;
    for (let i = bucketOf(a); i <= bucketOf(b) && i < n; i++) {
      const s = bucketStart(i);
      const e = bucketStart(i + 1) - 1n;
      // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min/max take numbers only)
      const lo2 = a > s ? a : s;
      const hi2 = b < e ? b : e;
      if (lo2 <= hi2) into[i]! += hi2 - lo2 + 1n;
    }
  }
}

/**
 * Cut the pool's span (lowest to highest value of its ranges) into at most `maxBuckets` buckets.
 * `complete` false: the free spans were read only in part, so buckets past the last one read are
 * unknown.
 */
export function freeStrip(
  pool: StripPool,
  free: FreeSpan[],
  complete: boolean,
  maxBuckets: number,
): { buckets: StripBucket[]; staticMarks: Array<[number, number]> } {
  const toIntervals = (list: Array<{ lower: Point; upper: Point }>) => list.map((r) => ({ lo: pointValue(r.lower), hi: pointValue(r.upper) }));
  const ranges = merge(toIntervals(pool.ranges));
  if (ranges.length === 0) return { buckets: [], staticMarks: [] };
  const base = ranges[0]!.lo;
  const size = ranges[ranges.length - 1]!.hi - base + 1n;
  const n = size < BigInt(maxBuckets) ? Number(size) : maxBuckets;
  // usable = in a range and not excluded; free counts only usable values
  const excluded = intersect(toIntervals(pool.excluded), ranges);
  const freeInRanges = intersect(
    free.map((f) => ({ lo: pointValue(f.first), hi: pointValue(f.last) })),
    ranges,
  );
  const count = (positive: Interval[], negative: Interval[]) => {
    const into = Array.from({ length: n }, () => 0n);
    const minus = Array.from({ length: n }, () => 0n);
    spread(positive, base, size, n, into);
    spread(negative, base, size, n, minus);
    return into.map((v, i) => v - minus[i]!);
  };
  const usableCount = count(ranges, excluded);
  const freeCount = count(freeInRanges, intersect(freeInRanges, excluded));
  const lastRead = complete || free.length === 0 ? null : pointValue(free[free.length - 1]!.last);

  const buckets: StripBucket[] = [];
  for (let i = 0; i < n; i++) {
    const start = base + (size * BigInt(i)) / BigInt(n);
    const end = base + (size * BigInt(i + 1)) / BigInt(n) - 1n;
    const usable = usableCount[i]!;
    const where = `${formatPoint(pool, start)} – ${formatPoint(pool, end)}`;
    if (usable === 0n) buckets.push({ free: null, title: `${where}: not in the pool or excluded` });
    else if (lastRead !== null && start > lastRead) buckets.push({ free: null, title: `${where}: free spans not loaded (too many to draw)` });
    else {
      const f = freeCount[i]!;
      buckets.push({ free: Number((f * 10000n) / usable) / 10000, title: `${where}: ${bigCount(f.toString())} of ${bigCount(usable.toString())} free` });
    }
  }
  const frac = (v: bigint) => Number(((v - base) * 100000n) / size) / 100000;
  const staticMarks = toIntervals(pool.static).map((r): [number, number] => [frac(r.lo), frac(r.hi + 1n)]);
  return { buckets, staticMarks };
}

/** A strip position back in the pool's own notation. */
export function formatPoint(pool: StripPool, v: bigint): string {
  if (pool.kind === 'integer') return v.toString();
  if (pool.family === 'ipv4') return [24n, 16n, 8n, 0n].map((s) => ((v >> s) & 255n).toString()).join('.');
  const groups = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((v >> s) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}
