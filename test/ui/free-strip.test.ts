// The pool strip's arithmetic (ui/src/free-strip.ts) against counting value by value: every
// bucket's free share is exactly free / usable of the values it covers, whatever the pool's
// ranges, exclusions and free spans; and addresses are placed by their numeric value.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { freeStrip, pointValue } from '../../ui/src/free-strip.js';

const span = fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 40 })).map(([lo, len]) => ({ lower: lo, upper: lo + len }));

describe('dashboard: free-value strip', () => {
  test('each bucket shows the free share of its usable values, counted value by value', () => {
    fc.assert(
      fc.property(
        fc.array(span, { minLength: 1, maxLength: 4 }),
        fc.array(span, { maxLength: 3 }),
        fc.array(span, { maxLength: 6 }),
        fc.integer({ min: 1, max: 50 }),
        (ranges, excluded, free, maxBuckets) => {
          const pool = { kind: 'integer', family: null, ranges, excluded, static: [] };
          const freeSpans = free.map((f) => ({ first: f.lower, last: f.upper }));
          const { buckets } = freeStrip(pool, freeSpans, true, maxBuckets);
          const lo = Math.min(...ranges.map((r) => r.lower));
          const hi = Math.max(...ranges.map((r) => r.upper));
          const size = hi - lo + 1;
          const n = Math.min(size, maxBuckets);
          assert.equal(buckets.length, n);
          const inAny = (v: number, list: Array<{ lower: number; upper: number }>) => list.some((r) => r.lower <= v && v <= r.upper);
          for (let i = 0; i < n; i++) {
            let usable = 0;
            let freeCount = 0;
            for (let v = lo + Math.floor((size * i) / n); v < lo + Math.floor((size * (i + 1)) / n); v++) {
              if (!inAny(v, ranges) || inAny(v, excluded)) continue;
              usable++;
              if (inAny(v, free)) freeCount++;
            }
            const expected = usable === 0 ? null : Math.floor((freeCount * 10000) / usable) / 10000;
            assert.equal(buckets[i]!.free, expected, `bucket ${i}: ${buckets[i]!.title}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('IPv4 and IPv6 addresses and prefixes are placed by value; an unread tail is unknown', () => {
    assert.equal(pointValue('192.0.2.1'), 0xc0000201n);
    assert.equal(pointValue('10.255.0.0/31'), 0x0aff0000n);
    assert.equal(pointValue('2001:db8::1'), 0x20010db8000000000000000000000001n);
    assert.equal(pointValue('::ffff:192.0.2.1'), 0xffffc0000201n);
    assert.equal(pointValue(4094), 4094n);
    const pool = {
      kind: 'address',
      family: 'ipv6' as const,
      ranges: [{ lower: '2001:db8::', upper: '2001:db8::ffff:ffff:ffff:ffff' }],
      excluded: [],
      static: [],
    };
    const { buckets } = freeStrip(pool, [{ first: '2001:db8::', last: '2001:db8::7fff:ffff:ffff:ffff' }], false, 4);
    assert.deepEqual(
      buckets.map((b) => b.free),
      [1, 1, null, null],
    );
    assert.match(buckets[0]!.title, /^2001:db8:: – 2001:db8::3fff:ffff:ffff:ffff: /);
  });
});
