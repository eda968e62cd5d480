// Value spaces of identifier pools, as pure code. Every value (an integer, an IPv4/IPv6 address, the
// first address of a prefix) is a non-negative bigint; in the database it is a fixed-width hex key
// (`keyOf`) so that the byte order of keys is the numeric order on SQLite and PostgreSQL alike and
// one B-tree index answers "the free range at or after X" for every kind of pool.

export type PoolKind = 'integer' | 'address' | 'prefix';
export type Family = 4 | 6;

/** An inclusive interval of values. */
export interface Span {
  first: bigint;
  last: bigint;
}

/** Integer pools stay within what a JSON number carries exactly. */
export const MAX_INTEGER = BigInt(Number.MAX_SAFE_INTEGER);
const KEY_WIDTH = 32; // hex digits: 128 bits, enough for IPv6

export const keyOf = (v: bigint): string => v.toString(16).padStart(KEY_WIDTH, '0');
/** A span's size (up to 2^128, one digit more than a value) as a fixed-width key: byte order is numeric order. */
export const sizeKeyOf = (size: bigint): string => size.toString(16).padStart(KEY_WIDTH + 1, '0');
export const fromKey = (k: string): bigint => BigInt(`0x${k}`);

export const bitsOf = (family: Family): number => (family === 4 ? 32 : 128);

export function parseIPv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let v = 0n;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

export function parseIPv6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.length > 45) return null;
  let head = text;
  let tailV4: bigint | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    tailV4 = parseIPv4(text.slice(lastColon + 1));
    if (tailV4 === null) return null;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === '') return [];
    const groups = s.split(':');
    const out: number[] = [];
    for (const g of groups) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = parse(halves[0]!);
  const right = halves.length === 2 ? parse(halves[1]!) : [];
  if (!left || !right) return null;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - left.length - right.length;
    if (missing < 1) return null;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  } else groups = left;
  if (groups.length !== 8) return null;
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  if (tailV4 !== null) v = (v & ~0xffffffffn) | tailV4;
  return v;
}

export function formatIPv4(v: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.');
}

/** RFC 5952 text: lower case, the longest run of two or more zero groups as `::`. */
export function formatIPv6(v: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((v >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export function parseAddress(text: string): { family: Family; value: bigint } | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIPv6(text);
  if (v6 !== null) return { family: 6, value: v6 };
  return null;
}

export const formatAddress = (family: Family, v: bigint): string => (family === 4 ? formatIPv4(v) : formatIPv6(v));

export interface Cidr {
  family: Family;
  network: bigint;
  length: number;
}

/** `10.0.0.0/8`; host bits must be zero (a prefix that is not a network is a typo worth reporting). */
export function parseCidr(text: string): Cidr | { error: string } | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const addr = parseAddress(text.slice(0, slash));
  const lenText = text.slice(slash + 1);
  if (!addr || !/^\d{1,3}$/.test(lenText)) return null;
  const length = Number(lenText);
  const bits = bitsOf(addr.family);
  if (length > bits) return { error: `prefix length ${length} is longer than ${bits}` };
  const hostMask = (1n << BigInt(bits - length)) - 1n;
  if ((addr.value & hostMask) !== 0n)
    return { error: `${text} has host bits set; did you mean ${formatAddress(addr.family, addr.value & ~hostMask)}/${length}?` };
  return { family: addr.family, network: addr.value, length };
}

export const cidrSpan = (c: Cidr): Span => ({ first: c.network, last: c.network + (1n << BigInt(bitsOf(c.family) - c.length)) - 1n });

/** The block size (number of addresses) of a prefix of `length` in `family`. */
export const prefixBlock = (family: Family, length: number): bigint => 1n << BigInt(bitsOf(family) - length);

/** log2 of a power of two, or -1 when `n` is not one. */
export function log2Exact(n: bigint): number {
  if (n <= 0n || (n & (n - 1n)) !== 0n) return -1;
  return n.toString(2).length - 1;
}
