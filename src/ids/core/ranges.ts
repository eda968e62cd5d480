// Arithmetic on sets of values kept as sorted, disjoint, non-adjacent inclusive spans. This is the
// free-range bookkeeping's pure half: the store keeps one row per free span and uses these
// functions to split a span when a block is taken and to merge neighbours when one is released.
import type { Span } from './values.js';

/** Sort, then merge overlapping and adjacent spans. */
export function normalize(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const out: Span[] = [];
  for (const s of sorted) {
    const prev = out[out.length - 1];
    if (prev && s.first <= prev.last + 1n) {
      if (s.last > prev.last) prev.last = s.last;
    } else out.push({ first: s.first, last: s.last });
  }
  return out;
}

/** a − b (both normalized). */
export function subtract(a: readonly Span[], b: readonly Span[]): Span[] {
  const out: Span[] = [];
  let j = 0;
  for (const s of a) {
    let first = s.first;
    while (j < b.length && b[j]!.last < first) j++;
    let k = j;
    while (k < b.length && b[k]!.first <= s.last) {
      const cut = b[k]!;
      if (cut.first > first) out.push({ first, last: cut.first - 1n });
      first = cut.last + 1n;
      if (first > s.last) break;
      k++;
    }
    if (first <= s.last) out.push({ first, last: s.last });
  }
  return out;
}

/** a ∩ b (both normalized). */
export function intersect(a: readonly Span[], b: readonly Span[]): Span[] {
  const out: Span[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const first = x.first > y.first ? x.first : y.first;
    const last = x.last < y.last ? x.last : y.last;
    if (first <= last) out.push({ first, last });
    if (x.last < y.last) i++;
    else j++;
  }
  return out;
}

export const totalSize = (spans: readonly Span[]): bigint => spans.reduce((n, s) => n + (s.last - s.first + 1n), 0n);

/** Is all of `span` inside the normalized set? */
export function covers(set: readonly Span[], span: Span): boolean {
  return set.some((s) => s.first <= span.first && span.last <= s.last);
}

export function overlaps(set: readonly Span[], span: Span): boolean {
  return set.some((s) => s.first <= span.last && span.first <= s.last);
}

export type Band = 'auto' | 'static';

/** A free span and the band it belongs to: automatic allocation only takes from `auto`. */
export interface BandedSpan extends Span {
  band: Band;
}

/** Cut `span` at the edges of the (normalized) static band: pieces in order, each labelled. */
export function splitByBand(span: Span, staticBand: readonly Span[]): BandedSpan[] {
  const inStatic = intersect([span], staticBand).map((s) => ({ ...s, band: 'static' as const }));
  const outside = subtract([span], staticBand).map((s) => ({ ...s, band: 'auto' as const }));
  return [...inStatic, ...outside].sort((a, b) => (a.first < b.first ? -1 : 1));
}

/**
 * The largest k such that `span` holds a block of 2^k values starting at a multiple of 2^k
 * (what a /len prefix, or an aligned block of 2^k integers, needs). Stored per free span so the
 * store can ask the index for "the first span that can hold a 2^k block".
 */
export function maxAlignedLog2(span: Span): number {
  const size = span.last - span.first + 1n;
  for (let k = size.toString(2).length - 1; k > 0; k--) {
    const block = 1n << BigInt(k);
    const start = alignUp(span.first, block);
    if (start + block - 1n <= span.last) return k;
  }
  return 0;
}

const alignUp = (v: bigint, block: bigint): bigint => ((v + block - 1n) / block) * block;

/** The first 2^k-aligned block inside `span` starting at or after `from`, or null. */
export function alignedBlockIn(span: Span, block: bigint, from: bigint = span.first): bigint | null {
  const start = alignUp(from > span.first ? from : span.first, block);
  return start + block - 1n <= span.last ? start : null;
}

/** A uniformly random bigint in [lo, hi], from a source of random 32-bit words. */
export function randomIn(lo: bigint, hi: bigint, random32: () => number): bigint {
  const range = hi - lo + 1n;
  if (range <= 1n) return lo;
  const bits = range.toString(2).length;
  const words = Math.ceil(bits / 32);
  const mask = (1n << BigInt(bits)) - 1n;
  for (;;) {
    let r = 0n;
    for (let i = 0; i < words; i++) r = (r << 32n) | BigInt(random32() >>> 0);
    r &= mask;
    if (r < range) return lo + r;
  }
}
