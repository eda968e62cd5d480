// What a pool's definition means as sets of values: parsing the `ranges`, `excluded` and `static`
// items of each pool kind, the free spans a new pool starts with, and how values travel on the
// wire (integers as JSON numbers, addresses as text, prefixes as CIDR text). Pure; no I/O.
import { idsDomainError } from './domain-errors.js';
import { type BandedSpan, covers, normalize, overlaps, splitByBand, subtract, totalSize } from './ranges.js';
import {
  type Family,
  MAX_INTEGER,
  type PoolKind,
  type Span,
  bitsOf,
  cidrSpan,
  formatAddress,
  log2Exact,
  parseAddress,
  parseCidr,
  prefixBlock,
} from './values.js';

export type Strategy = 'lowest' | 'highest' | 'random' | 'next_after_last';

/** A pool's value space, as stored (its `definition` column) and as every computation sees it. */
export interface PoolSpace {
  kind: PoolKind;
  /** address and prefix pools: the IP family of every range */
  family: Family | null;
  ranges: Span[];
  excluded: Span[];
  staticBand: Span[];
  /** prefix pools: the default length of a carved sub-prefix */
  prefixLength: number | null;
}

export type RangeItem = number | string | { lower: number | string; upper: number | string };

export interface PoolDefinitionInput {
  kind: PoolKind;
  ranges: RangeItem[];
  excluded?: RangeItem[];
  static?: RangeItem[];
  prefix_length?: number;
  /** IPv4 address pools given as CIDR: keep the network and broadcast address out (default true) */
  exclude_network_and_broadcast?: boolean;
}

const invalidDefinition = (reason: string) => idsDomainError('invalid_pool_definition', { reason }, reason);
const invalidValue = (reason: string) => idsDomainError('invalid_value', { reason }, reason);
/** A range item that is not a range (`"1-2-3"`, ends reversed) or does not fit with the others. */
const malformedRange = (field: string, index: number, value: unknown, reason: string) =>
  idsDomainError('malformed_range', { field, index, value, reason }, `${field}[${index}] ${JSON.stringify(value)} ${reason}`);

/** `"first-last"` → its two ends; anything with another number of dashes or an empty end is malformed. */
function rangeEnds(text: string, field: string, index: number, item: unknown): [string, string] {
  const parts = text.split('-');
  if (parts.length !== 2 || parts.some((p) => p.trim() === '')) throw malformedRange(field, index, item, 'is not a range of the form "first-last"');
  return [parts[0]!.trim(), parts[1]!.trim()];
}

function parseInteger(v: unknown, where: string): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d{1,16}$/.test(v.trim())) {
    const n = BigInt(v.trim());
    if (n <= MAX_INTEGER) return n;
  }
  throw invalidDefinition(`${where}: ${JSON.stringify(v)} is not an integer from 0 to ${MAX_INTEGER}`);
}

interface ParsedItem {
  span: Span;
  family: Family | null;
  /** the item was an IPv4 CIDR longer than /31's worth: its first and last address */
  cidr?: { family: Family; length: number };
}

function parseItem(kind: PoolKind, item: RangeItem, field: string, index: number, original: RangeItem = item): ParsedItem {
  const where = `${field}[${index}]`;
  if (kind === 'integer') {
    let first: bigint;
    let last: bigint;
    if (typeof item === 'object' && item !== null) {
      first = parseInteger(item.lower, where);
      last = parseInteger(item.upper, where);
    } else if (typeof item === 'string' && item.includes('-')) {
      const [a, b] = rangeEnds(item, field, index, original);
      first = parseInteger(a, where);
      last = parseInteger(b, where);
    } else {
      first = last = parseInteger(item, where);
    }
    if (first > last) throw malformedRange(field, index, original, `has its ends reversed: lower ${first} is above upper ${last}`);
    return { span: { first, last }, family: null };
  }
  const address = (text: unknown): { family: Family; value: bigint } => {
    const a = typeof text === 'string' ? parseAddress(text.trim()) : null;
    if (!a) throw invalidDefinition(`${where}: ${JSON.stringify(text)} is not an IPv4 or IPv6 address`);
    return a;
  };
  if (typeof item === 'object' && item !== null) {
    const a = address(item.lower);
    const b = address(item.upper);
    if (a.family !== b.family) throw invalidDefinition(`${where}: lower and upper are of different IP families`);
    if (a.value > b.value)
      throw malformedRange(
        field,
        index,
        original,
        `has its ends reversed: lower ${formatAddress(a.family, a.value)} is above upper ${formatAddress(b.family, b.value)}`,
      );
    return { span: { first: a.value, last: b.value }, family: a.family };
  }
  if (typeof item !== 'string') throw invalidDefinition(`${where}: ${JSON.stringify(item)} is not a CIDR prefix, an address or an address range`);
  const text = item.trim();
  if (text.includes('/')) {
    const c = parseCidr(text);
    if (!c) throw invalidDefinition(`${where}: ${JSON.stringify(item)} is not a CIDR prefix`);
    if ('error' in c) throw invalidDefinition(`${where}: ${c.error}`);
    return { span: cidrSpan(c), family: c.family, cidr: { family: c.family, length: c.length } };
  }
  if (text.includes('-')) {
    const [x, y] = rangeEnds(text, field, index, original);
    return parseItem(kind, { lower: x, upper: y }, field, index, original);
  }
  const a = address(text);
  return { span: { first: a.value, last: a.value }, family: a.family };
}

/** Check and interpret a pool definition. Throws `invalid_pool_definition` on nonsense. */
export function parsePoolDefinition(input: PoolDefinitionInput): PoolSpace {
  const { kind } = input;
  if (input.ranges.length === 0) throw invalidDefinition('a pool needs at least one range');
  const families = new Set<Family>();
  const parseAll = (items: RangeItem[] | undefined, field: string) =>
    (items ?? []).map((item, i) => {
      const parsed = parseItem(kind, item, field, i);
      if (parsed.family) families.add(parsed.family);
      return parsed;
    });
  const rangeItems = parseAll(input.ranges, 'ranges');
  const excludedItems = parseAll(input.excluded, 'excluded');
  const staticItems = parseAll(input.static, 'static');
  if (families.size > 1) throw invalidDefinition('all ranges of a pool must be of one IP family');
  const family = kind === 'integer' ? null : ([...families][0] ?? null);
  if (kind !== 'integer' && family === null) throw invalidDefinition('address and prefix pools need IP ranges');

  const excluded = excludedItems.map((p) => p.span);
  if (kind === 'address' && family === 4 && input.exclude_network_and_broadcast !== false) {
    for (const r of rangeItems) {
      if (r.cidr && r.cidr.length <= 30) excluded.push({ first: r.span.first, last: r.span.first }, { first: r.span.last, last: r.span.last });
    }
  }
  let prefixLength: number | null = null;
  if (kind === 'prefix') {
    const bits = bitsOf(family!);
    if (input.prefix_length === undefined) throw invalidDefinition('a prefix pool needs prefix_length, the length of the prefixes it carves');
    if (!Number.isInteger(input.prefix_length) || input.prefix_length < 0 || input.prefix_length > bits) {
      throw invalidDefinition(`prefix_length must be from 0 to ${bits}`);
    }
    prefixLength = input.prefix_length;
  } else if (input.prefix_length !== undefined) {
    throw invalidDefinition('prefix_length applies to prefix pools only');
  }
  // Ranges must not overlap one another; exclusions and the static band must lie inside them:
  // anything else would be stored as something the client did not write.
  const byFirst = rangeItems
    .map((p, i) => ({ span: p.span, i }))
    .sort((a, b) => (a.span.first < b.span.first ? -1 : a.span.first > b.span.first ? 1 : a.i - b.i));
  for (let k = 1; k < byFirst.length; k++) {
    const [prev, cur] = [byFirst[k - 1]!, byFirst[k]!];
    if (cur.span.first <= prev.span.last) {
      const [earlier, later] = prev.i < cur.i ? [prev.i, cur.i] : [cur.i, prev.i];
      throw malformedRange('ranges', later, input.ranges[later], `overlaps ranges[${earlier}] (${JSON.stringify(input.ranges[earlier])})`);
    }
  }
  const ranges = normalize(rangeItems.map((p) => p.span));
  for (const [field, items, list] of [
    ['excluded', excludedItems, input.excluded],
    ['static', staticItems, input.static],
  ] as const) {
    items.forEach((p, i) => {
      if (!covers(ranges, p.span))
        throw malformedRange(field, i, list![i], overlaps(ranges, p.span) ? 'reaches outside the ranges' : 'lies outside every range');
    });
  }
  const staticBand = normalize(staticItems.map((p) => p.span));
  const space: PoolSpace = { kind, family, ranges, excluded: normalize(excluded), staticBand, prefixLength };
  if (totalSize(usable(space)) === 0n) throw invalidDefinition('the ranges minus the excluded values leave nothing to allocate');
  return space;
}

/** Every value the pool can ever hand out (automatically or on explicit request). */
export const usable = (space: PoolSpace): Span[] => subtract(space.ranges, space.excluded);

/** The free spans of a new, empty pool, each in its band. */
export const initialFreeSpans = (space: PoolSpace): BandedSpan[] => usable(space).flatMap((s) => splitByBand(s, space.staticBand));

// --- storage form of a space (the pool's `definition` column) ---

export function serializeSpace(space: PoolSpace): string {
  const spans = (list: Span[]) => list.map((s) => [s.first.toString(), s.last.toString()]);
  return JSON.stringify({
    kind: space.kind,
    family: space.family,
    ranges: spans(space.ranges),
    excluded: spans(space.excluded),
    static: spans(space.staticBand),
    prefix_length: space.prefixLength,
  });
}

export function deserializeSpace(text: string): PoolSpace {
  const raw = JSON.parse(text) as {
    kind: PoolKind;
    family: Family | null;
    ranges: string[][];
    excluded: string[][];
    static: string[][];
    prefix_length: number | null;
  };
  const spans = (list: string[][]) => list.map(([a, b]) => ({ first: BigInt(a!), last: BigInt(b!) }));
  return {
    kind: raw.kind,
    family: raw.family,
    ranges: spans(raw.ranges),
    excluded: spans(raw.excluded),
    staticBand: spans(raw.static),
    prefixLength: raw.prefix_length,
  };
}

// --- values on the wire ---

export type WireValue = number | string;

/** How a span of the pool is written: an integer, an address, or (a block) a CIDR prefix. */
export function formatValue(space: PoolSpace, first: bigint, count: bigint): WireValue {
  if (space.kind === 'integer') return Number(first);
  if (space.kind === 'prefix') return `${formatAddress(space.family!, first)}/${bitsOf(space.family!) - log2Exact(count)}`;
  return formatAddress(space.family!, first);
}

/** One end of a span as written in a free-range listing. */
export const formatPoint = (space: PoolSpace, v: bigint): WireValue => (space.kind === 'integer' ? Number(v) : formatAddress(space.family!, v));

/** The span requested by an explicit `value` (and `count`/`prefix_length`), checked against the kind. */
export function parseRequestedValue(space: PoolSpace, value: unknown, block: bigint): Span {
  if (space.kind === 'integer') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
      throw invalidValue(`value must be a non-negative integer, got ${JSON.stringify(value)}`);
    const first = BigInt(value);
    if (first % block !== 0n) throw invalidValue(`a block of ${block} starts at a multiple of ${block}; ${value} is not one`);
    return { first, last: first + block - 1n };
  }
  if (typeof value !== 'string') throw invalidValue(`value must be a string, got ${JSON.stringify(value)}`);
  if (space.kind === 'prefix') {
    const c = parseCidr(value.trim());
    if (!c) throw invalidValue(`${JSON.stringify(value)} is not a CIDR prefix`);
    if ('error' in c) throw invalidValue(c.error);
    if (c.family !== space.family) throw invalidValue(`${value} is not an IPv${space.family} prefix`);
    const span = cidrSpan(c);
    if (span.last - span.first + 1n !== block) throw invalidValue(`${value} is not a /${bitsOf(space.family!) - log2Exact(block)}`);
    return span;
  }
  const a = parseAddress(value.trim());
  if (!a || a.family !== space.family) throw invalidValue(`${JSON.stringify(value)} is not an IPv${space.family} address`);
  if (a.value % block !== 0n) throw invalidValue(`a block of ${block} addresses starts at a multiple of ${block}`);
  return { first: a.value, last: a.value + block - 1n };
}

/**
 * The values a `?value=` names (a lookup, a release), written as the pool's kind writes them: an
 * integer, an address, or a CIDR prefix (a prefix pool also takes a bare address: that address).
 */
export function parseValueParameter(space: PoolSpace, text: string): Span {
  const bad = (reason: string) => idsDomainError('invalid_value_parameter', { value: text, reason });
  if (space.kind === 'integer') {
    if (!/^\d{1,16}$/.test(text) || BigInt(text) > MAX_INTEGER) throw bad(`not an integer from 0 to ${MAX_INTEGER}`);
    return { first: BigInt(text), last: BigInt(text) };
  }
  if (space.kind === 'prefix' && text.includes('/')) {
    const c = parseCidr(text);
    if (!c) throw bad('not a CIDR prefix');
    if ('error' in c) throw bad(c.error);
    if (c.family !== space.family) throw bad(`not an IPv${space.family} prefix`);
    return cidrSpan(c);
  }
  const a = parseAddress(text);
  if (!a || a.family !== space.family) throw bad(`not an IPv${space.family} ${space.kind === 'prefix' ? 'prefix or address' : 'address'}`);
  return { first: a.value, last: a.value };
}

/** The size of one allocation: `count` values (a power of two), or a prefix of `prefix_length`. */
export function blockSize(space: PoolSpace, request: { count?: number; prefix_length?: number }): bigint {
  if (space.kind === 'prefix') {
    if (request.count !== undefined) throw invalidValue('prefix pools take prefix_length, not count');
    const length = request.prefix_length ?? space.prefixLength!;
    const bits = bitsOf(space.family!);
    if (!Number.isInteger(length) || length < 0 || length > bits) throw invalidValue(`prefix_length must be from 0 to ${bits}`);
    return prefixBlock(space.family!, length);
  }
  if (request.prefix_length !== undefined) throw invalidValue('prefix_length applies to prefix pools only; use count');
  const count = BigInt(request.count ?? 1);
  if (log2Exact(count) < 0) throw invalidValue(`count must be a power of two (a block aligned on its size), got ${request.count}`);
  return count;
}
