// Property tests of the pure half of identifier allocation: range arithmetic, alignment, address
// text, pool definitions, and the backoff of outbox deliveries.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { alignedBlockIn, intersect, maxAlignedLog2, normalize, randomIn, splitByBand, subtract, totalSize } from '../../src/ids/core/ranges.js';
import { formatIPv6, parseIPv4, parseIPv6, formatIPv4, parseCidr } from '../../src/ids/core/values.js';
import { blockSize, initialFreeSpans, parsePoolDefinition, parseRequestedValue, formatValue } from '../../src/ids/core/pool-space.js';
import { backoffBound, backoffDelay } from '../../src/core/backoff.js';
import type { Span } from '../../src/ids/core/values.js';

const span = fc.tuple(fc.bigInt({ min: 0n, max: 300n }), fc.bigInt({ min: 0n, max: 40n })).map(([a, n]): Span => ({ first: a, last: a + n }));
const spans = fc.array(span, { maxLength: 12 });
const members = (set: Span[]) => {
  const out = new Set<bigint>();
  for (const s of set) for (let v = s.first; v <= s.last; v++) out.add(v);
  return out;
};

describe('range arithmetic', () => {
  test('normalize keeps the members and leaves sorted, disjoint, non-adjacent spans', () => {
    fc.assert(
      fc.property(spans, (raw) => {
        const n = normalize(raw);
        assert.deepEqual(members(n), members(raw));
        for (let i = 1; i < n.length; i++) assert.ok(n[i]!.first > n[i - 1]!.last + 1n);
      }),
    );
  });

  test('subtract and intersect agree with sets', () => {
    fc.assert(
      fc.property(spans, spans, (a, b) => {
        const na = normalize(a);
        const nb = normalize(b);
        const ma = members(na);
        const mb = members(nb);
        assert.deepEqual(members(subtract(na, nb)), new Set([...ma].filter((v) => !mb.has(v))));
        assert.deepEqual(members(intersect(na, nb)), new Set([...ma].filter((v) => mb.has(v))));
        assert.equal(totalSize(subtract(na, nb)) + totalSize(intersect(na, nb)), totalSize(na));
      }),
    );
  });

  test('splitByBand partitions a span into auto and static pieces', () => {
    fc.assert(
      fc.property(span, spans, (s, band) => {
        const nb = normalize(band);
        const pieces = splitByBand(s, nb);
        assert.deepEqual(members(pieces), members([s]));
        const staticMembers = members(nb);
        for (const p of pieces) for (let v = p.first; v <= p.last; v++) assert.equal(staticMembers.has(v), p.band === 'static');
      }),
    );
  });

  test('maxAlignedLog2 is the largest aligned block a span holds', () => {
    fc.assert(
      fc.property(span, (s) => {
        const k = maxAlignedLog2(s);
        assert.notEqual(alignedBlockIn(s, 1n << BigInt(k)), null);
        assert.equal(alignedBlockIn(s, 1n << BigInt(k + 1)), null);
      }),
    );
  });

  test('alignedBlockIn returns an aligned block inside the span at or after from', () => {
    fc.assert(
      fc.property(span, fc.integer({ min: 0, max: 6 }), fc.bigInt({ min: 0n, max: 340n }), (s, k, from) => {
        const block = 1n << BigInt(k);
        const start = alignedBlockIn(s, block, from);
        if (start === null) return;
        assert.equal(start % block, 0n);
        assert.ok(start >= s.first && start >= from && start + block - 1n <= s.last);
      }),
    );
  });

  test('randomIn stays in bounds', () => {
    let seed = 1;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1n << 100n }), fc.bigInt({ min: 0n, max: 1n << 100n }), (a, n) => {
        const v = randomIn(a, a + n, rnd);
        assert.ok(v >= a && v <= a + n);
      }),
    );
  });
});

describe('addresses', () => {
  test('IPv4 and IPv6 text round-trips', () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => assert.equal(formatIPv4(parseIPv4(ip)!), ip)));
    fc.assert(fc.property(fc.ipV6(), (ip) => assert.equal(parseIPv6(formatIPv6(parseIPv6(ip)!)), parseIPv6(ip))));
    assert.equal(formatIPv6(parseIPv6('2001:0db8:0000:0000:0001:0000:0000:0001')!), '2001:db8::1:0:0:1');
    assert.equal(formatIPv6(0n), '::');
    assert.equal(parseIPv6('::ffff:10.0.0.1'), 0xffff0a000001n);
    assert.equal(parseIPv4('01.2.3.4'), null);
    assert.equal(parseIPv6('1::2::3'), null);
  });

  test('a CIDR with host bits set is refused with a suggestion', () => {
    assert.deepEqual(parseCidr('10.0.0.1/24'), { error: '10.0.0.1/24 has host bits set; did you mean 10.0.0.0/24?' });
  });
});

describe('pool definitions', () => {
  test('free spans are the ranges minus exclusions, cut at the static band', () => {
    const space = parsePoolDefinition({ kind: 'integer', ranges: [{ lower: 1, upper: 4094 }], excluded: [1002, '1003-1005'], static: ['1-99'] });
    assert.deepEqual(
      initialFreeSpans(space).map((s) => [s.band, Number(s.first), Number(s.last)]),
      [
        ['static', 1, 99],
        ['auto', 100, 1001],
        ['auto', 1006, 4094],
      ],
    );
  });

  test('IPv4 address pools keep network and broadcast out unless told otherwise', () => {
    const space = parsePoolDefinition({ kind: 'address', ranges: ['10.0.0.0/30'] });
    assert.deepEqual(
      initialFreeSpans(space).map((s) => [formatIPv4(s.first), formatIPv4(s.last)]),
      [['10.0.0.1', '10.0.0.2']],
    );
    const all = parsePoolDefinition({ kind: 'address', ranges: ['10.0.0.0/30'], exclude_network_and_broadcast: false });
    assert.equal(totalSize(initialFreeSpans(all)), 4n);
  });

  test('prefix pools carve blocks and print them as CIDR', () => {
    const space = parsePoolDefinition({ kind: 'prefix', ranges: ['2001:db8::/48'], prefix_length: 64 });
    const block = blockSize(space, {});
    assert.equal(block, 1n << 64n);
    const s = parseRequestedValue(space, '2001:db8:0:5::/64', block);
    assert.equal(formatValue(space, s.first, block), '2001:db8:0:5::/64');
    assert.throws(() => parseRequestedValue(space, '2001:db8:0:4::/63', block), /not a \/64/);
  });

  test('nonsense is refused with a reason', () => {
    assert.throws(() => parsePoolDefinition({ kind: 'integer', ranges: [{ lower: 10, upper: 1 }] }), /above upper/);
    assert.throws(() => parsePoolDefinition({ kind: 'address', ranges: ['10.0.0.0/8', '2001:db8::/64'] }), /one IP family/);
    assert.throws(() => parsePoolDefinition({ kind: 'integer', ranges: ['1-10'], excluded: ['1-10'] }), /nothing to allocate/);
    assert.throws(() => parsePoolDefinition({ kind: 'integer', ranges: [2 ** 60] }), /not an integer/);
    assert.throws(() => blockSize(parsePoolDefinition({ kind: 'integer', ranges: ['1-10'] }), { count: 3 }), /power of two/);
  });
});

describe('outbox backoff (the one backoff, with --ids-retry-base-ms and --ids-retry-max-ms)', () => {
  test('the bound doubles from the base up to the cap; each wait is random below it', () => {
    const retry = { baseMs: 100, maxMs: 60_000 };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempts, r) => {
        const bound = Math.min(60_000, 100 * 2 ** (attempts - 1));
        assert.equal(backoffBound(attempts, retry), bound);
        const wait = backoffDelay(attempts, retry, () => r);
        assert.ok(wait >= 0 && wait <= bound);
      }),
    );
  });
});
