// The chaos checker (checker.ts) on small histories written by hand: one that keeps every guarantee
// passes, and each kind of violation it claims to catch is caught, named by its rule. (The chaos
// run itself, `npm run test:chaos`, is the proof on real processes; this shows the checker cannot
// pass what it is meant to fail.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { check } from './checker.js';
import type { AllocationChange, AllocationRow, History, InstanceReading, NodeLockChange, NodeLockRow, Op, Snapshot, State } from './history.js';

const RP = 'rp-1';
const RP2 = 'rp-2';

let nextId = 0;
function op(o: Partial<Op> & Pick<Op, 'api' | 'kind' | 'key' | 'invoke' | 'complete' | 'outcome'>): Op {
  return { id: nextId++, client: 'c', proc: 0, status: o.outcome === 'ok' ? 200 : 503, told: o.outcome, ...o };
}
const claim = (key: string, t: number, outcome: Op['outcome'], value = { rp: RP, vcpu: 2 }, told?: string) =>
  op({ api: 'placement', kind: 'claim', key, invoke: t, complete: t + 10, outcome, write: { from: 0, to: { version: 1, value } }, ...(told ? { told } : {}) });
const move = (key: string, t: number, from: number, outcome: Op['outcome'], value = { rp: RP2, vcpu: 2 }) =>
  op({ api: 'placement', kind: 'move', key, invoke: t, complete: t + 10, outcome, write: { from, to: { version: from + 1, value } } });
const read = (api: Op['api'], key: string, t: number, seen: State | null) => op({ api, kind: 'read', key, invoke: t, complete: t + 5, outcome: 'ok', seen });
const consumer = (version: number, value = { rp: RP, vcpu: 2 }): State => ({ version, value });

function snapshot(
  t: number,
  parts: {
    generation?: number;
    consumers?: Snapshot['placement']['consumers'];
    used?: number;
    allocations?: Snapshot['baremetal']['allocations'];
    nodes?: Snapshot['baremetal']['nodes'];
    values?: Snapshot['ids']['allocations'];
  } = {},
): Snapshot {
  const consumers = parts.consumers ?? {};
  const values = parts.values ?? {};
  const held = Object.keys(values).length;
  const used = parts.used ?? Object.values(consumers).reduce((n, c) => n + (c.allocations[RP] ?? 0), 0);
  return {
    invoke: t,
    complete: t + 5,
    placement: { providers: { [RP]: { capacity: 4, used, generation: parts.generation ?? 1 } }, consumers },
    baremetal: { allocations: parts.allocations ?? {}, nodes: parts.nodes ?? {} },
    ids: { allocations: values, pool: { total: 10, used: held, allocationCount: held, free: 10 - held } },
  };
}

function history(ops: Op[], snapshots: Snapshot[] = [], final: Snapshot | null = null): History {
  return { ops, snapshots, final, fixtures: { providers: { [RP]: 4, [RP2]: 4 }, nodes: [], poolSize: 10, sharedConsumers: [] } };
}

const rules = (h: History) => check(h).anomalies.map((a) => a.rule);
function caught(h: History, rule: string): void {
  const found = rules(h);
  assert.ok(found.includes(rule), `${rule} not among ${JSON.stringify(found)}`);
}

describe('the chaos checker', () => {
  test('a history that keeps every guarantee passes, and its unknown outcomes are resolved', () => {
    const h = history(
      [
        claim('c1', 0, 'ok'),
        read('placement', 'c1', 20, consumer(1)),
        move('c1', 30, 1, 'ok'),
        claim('c2', 40, 'unknown'), // applied: the final state shows it
        claim('c3', 40, 'unknown', { rp: RP, vcpu: 1 }), // not applied
        claim('c4', 50, 'fail', { rp: RP, vcpu: 3 }, '409 placement.concurrent_update'),
        op({ api: 'placement', kind: 'read-provider', key: RP, invoke: 60, complete: 61, outcome: 'ok', seen: { version: 3, value: {} } }),
        op({ api: 'placement', kind: 'read-provider', key: RP, invoke: 70, complete: 71, outcome: 'ok', seen: { version: 4, value: {} } }),
      ],
      [snapshot(35, { consumers: { c1: { generation: 2, allocations: { [RP2]: 2 } } } })],
      snapshot(100, { generation: 5, consumers: { c1: { generation: 2, allocations: { [RP2]: 2 } }, c2: { generation: 1, allocations: { [RP]: 2 } } } }),
    );
    const verdict = check(h);
    assert.deepEqual(verdict.anomalies, []);
    assert.deepEqual(
      verdict.unknowns.map((u) => [u.key, u.resolution]),
      [
        ['c2', 'applied'],
        ['c3', 'not applied'],
      ],
    );
  });

  test('a write answered as not done (a 503 without commit_unknown) that is in place', () => {
    const h = history(
      [claim('c1', 0, 'fail', undefined, '503 timeout')],
      [],
      snapshot(100, { consumers: { c1: { generation: 1, allocations: { [RP]: 2 } } } }),
    );
    assert.deepEqual(rules(h), ['failed-write-applied']);
  });

  test('an acknowledged claim missing later, and one whose generation went back', () => {
    const lost = history([claim('c1', 0, 'ok')], [snapshot(50)]);
    caught(lost, 'acknowledged-lost');
    const undone = history([claim('c1', 0, 'ok'), move('c1', 20, 1, 'ok'), read('placement', 'c1', 40, consumer(1))]);
    caught(undone, 'acknowledged-undone');
  });

  test('two writes that both succeed from one generation, and one from a generation already gone', () => {
    const h = history([claim('c1', 0, 'ok'), move('c1', 20, 1, 'ok'), move('c1', 25, 1, 'ok', { rp: RP, vcpu: 1 })]);
    caught(h, 'lost-update');
    const stale = history([
      claim('c1', 0, 'ok'),
      move('c1', 20, 1, 'ok'),
      read('placement', 'c1', 40, consumer(2, { rp: RP2, vcpu: 2 })),
      move('c1', 50, 1, 'ok'),
    ]);
    caught(stale, 'stale-write-accepted');
  });

  test('more acknowledged than a provider holds, and usage that is not the sum of the allocations', () => {
    const over = history([claim('c1', 0, 'ok'), claim('c2', 5, 'ok'), claim('c3', 8, 'ok')]);
    caught(over, 'over-capacity');
    const sum = history([], [snapshot(0, { consumers: { c1: { generation: 1, allocations: { [RP]: 2 } } }, used: 3 })]);
    caught(sum, 'usage-not-sum');
  });

  test('an unknown delete may take effect after later acknowledged writes: only observations pin those down', () => {
    const del = op({ api: 'placement', kind: 'delete', key: 'c1', invoke: 20, complete: 30, outcome: 'unknown', write: { to: null } });
    const moved = (more: Op[], snapshots: Snapshot[]) =>
      history([claim('c1', 0, 'ok'), del, read('placement', 'c1', 40, consumer(1)), move('c1', 50, 1, 'ok', { rp: RP, vcpu: 2 }), ...more], snapshots);
    // the consumer is seen gone after its move: the delete applied late; c2's claim then fits
    assert.deepEqual(rules(moved([claim('c2', 200, 'ok', { rp: RP, vcpu: 3 })], [snapshot(100)])), []);
    // seen still holding the move while c2 holds its claim: over capacity
    assert.deepEqual(rules(moved([claim('c2', 200, 'ok', { rp: RP, vcpu: 3 }), read('placement', 'c1', 300, consumer(2))], [])), ['over-capacity']);
  });

  test('a bare-metal allocation finished twice, and a node held by two allocations', () => {
    const create = (key: string, t: number) =>
      op({
        api: 'baremetal',
        kind: 'create',
        key,
        invoke: t,
        complete: t + 10,
        outcome: 'ok',
        write: { from: 0, to: { version: 1, value: { state: 'allocating' } } },
      });
    const active = (node: string): State => ({ version: 2, value: { state: 'active', node } });
    const twice = history([create('a1', 0), read('baremetal', 'a1', 20, active('n1')), read('baremetal', 'a1', 40, active('n2'))]);
    caught(twice, 'two-states-one-version');
    const shared = history([create('a1', 0), create('a2', 0), read('baremetal', 'a1', 20, active('n1')), read('baremetal', 'a2', 30, active('n1'))]);
    caught(shared, 'node-held-twice');
    const mismatch = history(
      [],
      [snapshot(0, { allocations: { a1: { uuid: 'u1', state: 'active', node: 'n1', conductor: 'x' } }, nodes: { n1: { allocation: null, instance: null } } })],
    );
    caught(mismatch, 'node-allocation-mismatch');
  });

  describe('identifier leases', () => {
    const allocate = (key: string, t: number, o: { ttlS?: number; outcome?: Op['outcome']; value?: number } = {}) =>
      op({
        api: 'ids',
        kind: 'allocate',
        key,
        invoke: t,
        complete: t + 10,
        outcome: o.outcome ?? 'ok',
        write: { from: 0, to: { version: 1, value: { state: o.ttlS ? 'reserved' : 'allocated' } } },
        ...(o.outcome === 'unknown' ? {} : { seen: { version: 1, value: { value: o.value ?? 7, state: o.ttlS ? 'reserved' : 'allocated' } } }),
        ...(o.ttlS ? { ttlS: o.ttlS } : {}),
      });
    const reserved = (value: number) => ({ value, size: 1, state: 'reserved', version: 1, expiresAt: null });

    test('a lease that ends before its time, and its value handed to another owner meanwhile', () => {
      const h = history([allocate('o1|', 0, { ttlS: 5 }), read('ids', 'o1|', 2_000, null), allocate('o2|', 2_100)]);
      caught(h, 'acknowledged-lost');
      caught(h, 'value-held-twice');
      // the same after the lease's time is fine
      assert.deepEqual(rules(history([allocate('o1|', 0, { ttlS: 5 }), read('ids', 'o1|', 6_000, null), allocate('o2|', 6_100)])), []);
    });

    test('a snapshot still holding the row of a reservation whose lease ran out shows it gone, as every reader sees it', () => {
      const wall = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
      const withRow = (expiresAtMs: number) =>
        history(
          [allocate('o1|', 0, { ttlS: 5 }), read('ids', 'o1|', 6_000, null)],
          [{ ...snapshot(6_500, { values: { 'o1|': { ...reserved(7), expiresAt: wall(expiresAtMs) } } }), wallClock: wall(6_500) }],
        );
      assert.deepEqual(rules(withRow(5_010)), []);
      // a row whose lease has not run out by the database's clock is there: it came back after the read
      caught(withRow(9_000), 'came-back');
    });

    // An allocation whose answer was lost applied, its lease ran out, and the client's retry made a
    // new allocation for the same owner: version 1 again, another value.
    const retriedAfterExpiry = (more: Op[] = []) =>
      history(
        [allocate('o1|', 0, { ttlS: 5, outcome: 'unknown' }), allocate('o1|', 6_000, { ttlS: 5, value: 3 }), ...more],
        [snapshot(1_000, { values: { 'o1|': reserved(7) } }), snapshot(5_500)],
      );

    test('an expired lease frees its owner: the retry after it is a new allocation, not a second state of the first', () => {
      const verdict = check(retriedAfterExpiry());
      assert.deepEqual(verdict.anomalies, []);
      assert.deepEqual(
        verdict.unknowns.map((u) => [u.key, u.resolution]),
        [['o1|', 'applied']],
      );
    });

    test('an absence seen while the retry after an expired lease was being made is the gap between the two, even once the retry is confirmed', () => {
      // (the Patroni run of seed 41: the unknown allocation's lease ran out, its retry's answer came
      // while a snapshot that began before it showed the owner absent; the retry was confirmed later)
      const retry = allocate('o1|', 7_200, { ttlS: 5, value: 6 });
      retry.complete = 11_000;
      const confirm = op({
        api: 'ids',
        kind: 'confirm',
        key: 'o1|',
        invoke: 15_000,
        complete: 15_010,
        outcome: 'ok',
        write: { to: { version: 0, value: { state: 'allocated' } } },
        seen: { version: 2, value: { value: 6, state: 'allocated' } },
      });
      const first = allocate('o1|', 0, { ttlS: 5, outcome: 'unknown' });
      first.complete = 7_000;
      const h = history(
        [first, retry, confirm],
        [snapshot(2_000, { values: { 'o1|': reserved(2) } }), snapshot(5_500), { ...snapshot(10_500), complete: 11_300 }],
      );
      assert.deepEqual(rules(h), []);
      // absent after the retry was certainly there (its answer ended before the snapshot began): lost
      caught(history([first, retry, confirm], [snapshot(2_000, { values: { 'o1|': reserved(2) } }), snapshot(5_500), snapshot(12_000)]), 'acknowledged-lost');
    });

    const confirm = (key: string, t: number, complete: number, outcome: Op['outcome'] = 'ok') =>
      op({
        api: 'ids',
        kind: 'confirm',
        key,
        invoke: t,
        complete,
        outcome,
        write: { to: { version: 0, value: { state: 'allocated' } } },
        ...(outcome === 'ok' ? { seen: { version: 2, value: { value: 7, state: 'allocated' } } } : {}),
      });

    test('a confirmation committed after its lease ran out, while a reader saw the value released, is caught', () => {
      // chaos finding 2 of issue 33: asked in time (2 s into a 6 s lease), answered after 9.7 s; a
      // snapshot at 7 s held the reservation's row past its end (released, as every reader sees
      // it), the next one the confirmed allocation
      const wall = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
      const expired = { ...snapshot(7_000, { values: { 'o1|': { ...reserved(7), expiresAt: wall(6_005) } } }), wallClock: wall(7_000) };
      const confirmed = snapshot(9_800, { values: { 'o1|': { value: 7, size: 1, state: 'allocated', version: 2, expiresAt: null } } });
      caught(history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 2_000, 9_700)], [expired, confirmed]), 'came-back');
      // the same seen by a client's read that answered 404
      caught(history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 2_000, 9_700), read('ids', 'o1|', 7_000, null)], [confirmed]), 'came-back');
      // refused (404) as the lease ran out: the value stays released
      assert.deepEqual(rules(history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 2_000, 9_700, 'fail')], [expired, snapshot(9_800)])), []);
      // committed in time: the snapshot after the lease's end holds it confirmed
      assert.deepEqual(rules(history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 2_000, 2_100)], [{ ...confirmed, invoke: 7_000, complete: 7_005 }])), []);
    });

    test('a confirmation acknowledged though asked after the lease had certainly run out, even with no reader in between', () => {
      // the lease of the allocation answered at 10 ms ends by 6 010 ms at the latest
      const h = history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 7_100, 7_110)]);
      caught(h, 'confirmed-after-expiry');
      assert.deepEqual(rules(history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 5_900, 5_910)])), []);
      // refused, or of an allocation whose answer was lost (it may have been made later): nothing to say
      assert.deepEqual(rules(history([allocate('o1|', 0, { ttlS: 6 }), confirm('o1|', 7_100, 7_110, 'fail')])), []);
      assert.deepEqual(
        rules(
          history([allocate('o1|', 0, { ttlS: 6, outcome: 'unknown' }), confirm('o1|', 7_100, 7_110)], [snapshot(1_000, { values: { 'o1|': reserved(7) } })]),
        ),
        [],
      );
    });

    test('the new allocation still holds its value: another owner given it during its lease is a double hold', () => {
      // the retry's lease runs at least until 10 000 ms (the first one could not end before 5 000 ms)
      caught(retriedAfterExpiry([allocate('o2|', 9_000, { value: 3 })]), 'value-held-twice');
      assert.deepEqual(rules(retriedAfterExpiry([allocate('o2|', 11_100, { value: 3 })])), []);
      // and one allocation showing two values at one version, with no absence between, is still caught
      const twoValues = history([allocate('o1|', 0, { ttlS: 5 }), read('ids', 'o1|', 1_000, { version: 1, value: { value: 4, state: 'reserved' } })]);
      caught(twoValues, 'two-states-one-version');
    });

    test('a reservation asked again after its lease may have run out unobserved is another life, not two states of one version', () => {
      // seed 58's history: the first allocation answered 503, seen reserved with value 4 by a
      // snapshot, then asked again (same owner, same ttl) after its 3 s could have passed: value 7
      const unseenEnd = (againAt: number) =>
        history([
          allocate('o1|', 0, { ttlS: 3, outcome: 'unknown' }),
          read('ids', 'o1|', 2_500, { version: 1, value: { value: 4, state: 'reserved' } }),
          allocate('o1|', againAt, { ttlS: 3, value: 7 }),
        ]);
      assert.deepEqual(
        rules(unseenEnd(3_100)).filter((r) => r === 'two-states-one-version'),
        [],
      );
      // before any lease asked for it could have run out, two values at version 1 are still caught
      caught(unseenEnd(2_600), 'two-states-one-version');
    });
  });

  describe('identifier leases, another value', () => {
    test('a lease that ran out unobserved and its repeat given another value, seen at once, are two lives: its old value is free', () => {
      // seed 33's history: an allocation answered 503 (ttl 5 s), seen reserved with value 10; asked
      // again as its lease ran out and given value 8 while a snapshot found the owner absent (the
      // two overlap in time), then confirmed; value 10 given to another owner
      const o1 = (t: number, outcome: Op['outcome'], value?: number, kind = 'allocate') =>
        op({
          api: 'ids',
          kind,
          key: 'o1|',
          invoke: t,
          complete: t + 10,
          outcome,
          write: kind === 'confirm' ? { to: { version: 0, value: { state: 'allocated' } } } : { from: 0, to: { version: 1, value: { state: 'reserved' } } },
          ...(value === undefined
            ? {}
            : { seen: kind === 'confirm' ? { version: 2, value: { value, state: 'allocated' } } : { version: 1, value: { value, state: 'reserved' } } }),
          ...(kind === 'allocate' ? { ttlS: 5 } : {}),
        });
      const reserved = (value: number) => ({ value, size: 1, state: 'reserved', version: 1, expiresAt: null });
      const o2 = op({
        api: 'ids',
        kind: 'allocate',
        key: 'o2|',
        invoke: 6_500,
        complete: 6_510,
        outcome: 'ok',
        write: { from: 0, to: { version: 1, value: { state: 'allocated' } } },
        seen: { version: 1, value: { value: 10, state: 'allocated' } },
      });
      const h = history(
        [o1(0, 'unknown'), o1(5_900, 'ok', 8), o1(6_000, 'ok', 8, 'confirm'), o2],
        [snapshot(2_000, { values: { 'o1|': reserved(10) } }), snapshot(4_000, { values: { 'o1|': reserved(10) } }), snapshot(5_903)],
      );
      assert.deepEqual(check(h).anomalies, []);
    });
  });

  describe('fencing: the bare-metal allocations’ change log', () => {
    let seq = 0;
    const row = (state: string, conductor: string, node: number | null = null): AllocationRow => ({ state, conductor, node, error: null });
    const change = (writer: string, op: AllocationChange['op'], before: AllocationRow | null, after: AllocationRow | null, uuid = 'u1'): AllocationChange => ({
      seq: ++seq,
      writer,
      op,
      uuid,
      before,
      after,
    });
    const created = (by: string, uuid = 'u1') => change(by, 'INSERT', null, row('allocating', by), uuid);
    const takeOver = (from: string, to: string) => change(to, 'UPDATE', row('allocating', from), row('allocating', to));
    const finish = (by: string, conductor: string, node: number, before = row('allocating', conductor)) =>
      change(by, 'UPDATE', before, row('active', conductor, node));
    const withChanges = (changes: AllocationChange[]): History => ({ ...history([]), allocationChanges: changes });

    test('take-overs, finishes by the conductor of the moment, a conductor that took one back, and writes that are anybody’s pass', () => {
      const verdict = check(
        withChanges([
          // created by chaos-1, taken over by chaos-0, finished by chaos-0
          created('chaos-1'),
          takeOver('chaos-1', 'chaos-0'),
          finish('chaos-0', 'chaos-0', 1),
          // chaos-1 loses one to chaos-2 and takes it back, then finishes it
          created('chaos-1', 'u2'),
          { ...takeOver('chaos-1', 'chaos-2'), uuid: 'u2' },
          { ...takeOver('chaos-2', 'chaos-1'), uuid: 'u2' },
          { ...finish('chaos-1', 'chaos-1', 2), uuid: 'u2' },
          // its node deleted (through another process) unbinds it; a client deletes it through a third
          { ...change('chaos-0', 'UPDATE', row('active', 'chaos-1', 2), row('active', 'chaos-1')), uuid: 'u2' },
          { ...change('chaos-2', 'DELETE', row('active', 'chaos-1'), null), uuid: 'u2' },
        ]),
      );
      assert.deepEqual(verdict.anomalies, []);
      assert.deepEqual(verdict.counts.fencing, { changes: 9, takeOvers: 3, finishes: 2 });
    });

    test('an allocation taken over from a process and then finished by it is a fenced write, whether its successor had finished it or not', () => {
      const beforeSuccessor = check(withChanges([created('chaos-1'), takeOver('chaos-1', 'chaos-0'), finish('chaos-1', 'chaos-0', 1)]));
      assert.deepEqual(
        beforeSuccessor.anomalies.map((a) => [a.rule, a.key]),
        [['fenced-write', 'u1']],
      );
      assert.match(beforeSuccessor.anomalies[0]!.detail, /taken over from chaos-1 by chaos-0 \(change #\d+\), then written by its old conductor/);
      const afterSuccessor = withChanges([
        created('chaos-1'),
        takeOver('chaos-1', 'chaos-0'),
        finish('chaos-0', 'chaos-0', 1),
        finish('chaos-1', 'chaos-0', 2, row('active', 'chaos-0', 1)),
      ]);
      assert.deepEqual(rules(afterSuccessor), ['fenced-write']);
      // failing it (state error, no node) is a write as much as finishing it
      const failed = change('chaos-1', 'UPDATE', row('allocating', 'chaos-0'), { state: 'error', conductor: 'chaos-0', node: null, error: 'no node' });
      assert.deepEqual(rules(withChanges([created('chaos-1'), takeOver('chaos-1', 'chaos-0'), failed])), ['fenced-write']);
    });

    test('a conductor moved by other than its taker, a finish by a process that never held it, and one finished twice', () => {
      assert.deepEqual(rules(withChanges([created('chaos-1'), change('chaos-2', 'UPDATE', row('allocating', 'chaos-1'), row('allocating', 'chaos-0'))])), [
        'fenced-write',
      ]);
      assert.deepEqual(rules(withChanges([created('chaos-1'), finish('chaos-2', 'chaos-1', 1)])), ['fenced-write']);
      assert.deepEqual(
        rules(withChanges([created('chaos-1'), finish('chaos-1', 'chaos-1', 1), finish('chaos-1', 'chaos-1', 2, row('active', 'chaos-1', 1))])),
        ['finished-twice'],
      );
    });
  });

  describe('the cross-engine reservation', () => {
    const SPEC = { name: 'chaos-reservation', node: 'server', capacity: 'cpu', value: 'vni' };
    const holds = (node = 'n1', value = 5, rp = RP, vcpu = 1) => ({ node, rp, vcpu, value });
    const instanceOp = (kind: string, id: string, t: number, outcome: Op['outcome'], held?: ReturnType<typeof holds> | null) =>
      op({ api: 'ids', kind, key: id, invoke: t, complete: t + 10, outcome, reservation: held === undefined ? {} : { holds: held } });
    const withSpec = (h: History): History => ({ ...h, fixtures: { ...h.fixtures, reservation: SPEC } });
    const reading = (parts: Partial<InstanceReading> = {}): InstanceReading => ({
      spec: SPEC.name,
      state: 'up',
      node: null,
      capacity: {},
      values: [],
      ...parts,
    });
    /** a snapshot in which instance `id` holds node n1, 1 VCPU on RP and value 5 (each part by its own flag), as each engine's section and its reading show */
    const holding = (
      t: number,
      id: string,
      parts = { node: true, capacity: true, value: true },
      more: { consumers?: Snapshot['placement']['consumers'] } = {},
    ) => {
      const allocation = `alloc-${id}`;
      const s = snapshot(t, {
        consumers: { ...(parts.capacity ? { [id]: { generation: 1, allocations: { [RP]: 1 } } } : {}), ...more.consumers },
        allocations: parts.node ? { [`service-instance.${id}.server`]: { uuid: allocation, state: 'active', node: 'n1', conductor: 'chaos-0' } } : {},
        nodes: { n1: parts.node ? { allocation, instance: allocation } : { allocation: null, instance: null } },
        values: parts.value ? { [`service-instance/${id}|vni`]: { value: 5, size: 1, state: 'allocated', version: 1, expiresAt: null } } : {},
      });
      return {
        ...s,
        reservations: {
          [id]: reading({ node: parts.node ? 'n1' : null, capacity: parts.capacity ? { [RP]: 1 } : {}, values: parts.value ? [5] : [] }),
        },
      };
    };
    const none = (t: number, id: string, state = 'terminated') => ({
      ...holding(t, id, { node: false, capacity: false, value: false }),
      reservations: { [id]: reading({ state }) },
    });

    test('instances that hold all or nothing, released by terminate, with unknown outcomes resolved once for all three, pass', () => {
      const verdict = check(
        withSpec(
          history(
            [
              instanceOp('reserve', 'i1', 0, 'ok', holds()),
              instanceOp('promote', 'i1', 20, 'ok', holds()),
              instanceOp('terminate', 'i1', 100, 'ok'),
              instanceOp('reserve', 'i2', 200, 'unknown'), // applied: the snapshot after it shows everything
              instanceOp('terminate', 'i2', 300, 'ok'),
              instanceOp('reserve', 'i3', 400, 'unknown'), // not applied: nothing shows
              instanceOp('reserve', 'i4', 400, 'fail', undefined),
            ],
            [holding(50, 'i1'), none(150, 'i1'), holding(250, 'i2'), none(350, 'i2'), { ...none(450, 'i3', 'start') }],
            {
              ...none(500, 'i3', 'start'),
              reservations: { i1: reading({ state: 'terminated' }), i3: reading({ state: 'start' }), i4: reading({ state: 'start' }) },
            },
          ),
        ),
      );
      assert.deepEqual(verdict.anomalies, []);
      assert.deepEqual(
        verdict.unknowns.map((u) => [u.api, u.key, u.resolution]),
        [
          ['reservation', 'i2', 'applied'],
          ['reservation', 'i3', 'not applied'],
        ],
      );
      assert.equal(verdict.counts.reservations.instances, 4);
      assert.deepEqual(verdict.counts.reservations.ops.reserve, { ok: 1, unknown: 2, fail: 1 });
    });

    test('an instance holding some of its attributes and not others, in a snapshot or through the APIs at the end', () => {
      const ops = [instanceOp('reserve', 'i1', 0, 'ok', holds())];
      assert.deepEqual(rules(withSpec(history(ops, [holding(50, 'i1', { node: true, capacity: false, value: true })]))), [
        'acknowledged-lost',
        'partial-reservation',
      ]);
      const throughApis = { ...withSpec(history(ops, [holding(50, 'i1')])), finalThroughApis: { i1: reading({ node: 'n1', values: [5] }) } };
      const found = check(throughApis).anomalies;
      assert.deepEqual(
        found.map((a) => a.rule),
        ['partial-reservation'],
      );
      assert.match(found[0]!.detail, /the final state through the APIs/);
    });

    test('an unknown reservation whose parts resolve differently', () => {
      // the snapshots have no reading of instances (an older history): the parts alone show it
      const { reservations: _, ...partial } = holding(50, 'i1', { node: true, capacity: false, value: false });
      const h = withSpec(history([instanceOp('reserve', 'i1', 0, 'unknown')], [partial]));
      const verdict = check(h);
      assert.deepEqual(
        verdict.anomalies.map((a) => a.rule),
        ['partial-reservation'],
      );
      assert.deepEqual(
        verdict.unknowns.map((u) => [u.key, u.resolution]),
        [['i1', 'undetermined']],
      );
    });

    test('an unknown reservation repeated, acknowledged and terminated before any snapshot saw it: applied, all three parts', () => {
      // the repeat's answer observes the node's allocation only; its consumer and value were
      // "not applied" (the snapshots show them absent), the node "applied": a false partial reservation
      const verdict = check(
        withSpec(
          history(
            [instanceOp('reserve', 'i1', 0, 'unknown'), instanceOp('reserve', 'i1', 20, 'ok', holds()), instanceOp('terminate', 'i1', 40, 'ok')],
            [none(100, 'i1')],
            { ...none(200, 'i1'), reservations: { i1: reading({ state: 'terminated' }) } },
          ),
        ),
      );
      assert.deepEqual(verdict.anomalies, []);
      assert.deepEqual(
        verdict.unknowns.map((u) => [u.key, u.resolution]),
        [['i1', 'applied']],
      );
    });

    test('something held for an instance that is terminated, or that does not exist', () => {
      const terminated = withSpec(history([], [{ ...holding(50, 'i1'), reservations: { i1: reading({ state: 'terminated', values: [5] }) } }]));
      assert.ok(rules(terminated).includes('held-by-dead-instance'));
      const missing = withSpec(history([], [{ ...snapshot(50), reservations: { i9: reading({ spec: null, state: null, node: 'n1' }) } }]));
      assert.deepEqual(rules(missing), ['held-by-dead-instance']);
    });

    test('a refused reservation whose parts are in place, and an acknowledged terminate undone', () => {
      const refused = withSpec(history([instanceOp('reserve', 'i1', 0, 'fail')], [holding(50, 'i1')]));
      assert.ok(rules(refused).includes('failed-write-applied'));
      const undone = withSpec(history([instanceOp('reserve', 'i1', 0, 'ok', holds()), instanceOp('terminate', 'i1', 20, 'ok')], [holding(50, 'i1')]));
      assert.ok(rules(undone).includes('delete-undone'));
    });

    test('a node, a value or capacity held by an instance and by a plain client at once', () => {
      const active = (node: string): State => ({ version: 2, value: { state: 'active', node } });
      const allocation = op({
        api: 'baremetal',
        kind: 'create',
        key: 'a1',
        invoke: 0,
        complete: 10,
        outcome: 'ok',
        write: { from: 0, to: { version: 1, value: { state: 'allocating' } } },
      });
      const node = withSpec(history([instanceOp('reserve', 'i1', 0, 'ok', holds('n1')), allocation, read('baremetal', 'a1', 30, active('n1'))]));
      assert.deepEqual(rules(node), ['node-held-twice']);
      // three VCPU claimed by plain consumers and two by the instance, on a provider of four
      const capacity = withSpec(
        history([
          claim('c1', 0, 'ok', { rp: RP, vcpu: 2 }),
          claim('c2', 0, 'ok', { rp: RP, vcpu: 1 }),
          instanceOp('reserve', 'i1', 5, 'ok', holds('n1', 5, RP, 2)),
        ]),
      );
      assert.deepEqual(rules(capacity), ['over-capacity']);
      const allocate = op({
        api: 'ids',
        kind: 'allocate',
        key: 'o1|',
        invoke: 60,
        complete: 70,
        outcome: 'ok',
        write: { from: 0, to: { version: 1, value: { state: 'allocated' } } },
        seen: { version: 1, value: { value: 5, state: 'allocated' } },
      });
      const value = withSpec(history([instanceOp('reserve', 'i1', 0, 'ok', holds()), allocate], [holding(50, 'i1')]));
      assert.deepEqual(rules(value), ['value-held-twice']);
    });
  });

  describe('fencing: node locks', () => {
    let seq = 0;
    const lock = (reservation: string | null, power = 'power off', targetPower: string | null = null): NodeLockRow => ({
      reservation,
      power,
      targetPower,
      provision: 'available',
      targetProvision: null,
    });
    const change = (writer: string, before: NodeLockRow, after: NodeLockRow, node = 'n1'): NodeLockChange => ({ seq: ++seq, writer, node, before, after });
    /** `by` starts a power change: takes the lock */
    const start = (by: string, node = 'n1') => change(by, lock(null), lock(by, 'power off', 'power on'), node);
    const takeOver = (from: string, to: string) => change(to, lock(from, 'power off', 'power on'), lock(to, 'power off', 'power on'));
    /** `by` ends the transition while `holder` holds the lock */
    const finish = (by: string, holder: string, node = 'n1') => change(by, lock(holder, 'power off', 'power on'), lock(null, 'power on'), node);
    const withChanges = (changes: NodeLockChange[]): History => ({ ...history([]), nodeLockChanges: changes });

    test('locks taken, finished by their holder, taken over and finished by the taker, pass', () => {
      const verdict = check(
        withChanges([
          start('chaos-0'),
          finish('chaos-0', 'chaos-0'),
          start('chaos-1', 'n2'),
          { ...takeOver('chaos-1', 'chaos-2'), node: 'n2' },
          finish('chaos-2', 'chaos-2', 'n2'),
        ]),
      );
      assert.deepEqual(verdict.anomalies, []);
      assert.deepEqual(verdict.counts.nodeLocks, { changes: 5, taken: 2, takeOvers: 1, lockedWrites: 2 });
    });

    test('a process that finishes a transition after its lock was taken over is a fenced write', () => {
      const verdict = check(withChanges([start('chaos-1'), takeOver('chaos-1', 'chaos-0'), finish('chaos-1', 'chaos-0')]));
      assert.deepEqual(
        verdict.anomalies.map((a) => [a.rule, a.key]),
        [['fenced-write', 'n1']],
      );
      assert.match(verdict.anomalies[0]!.detail, /taken over from chaos-1 by chaos-0 \(change #\d+\), then written under it by its old holder/);
    });

    test('a lock moved by other than its taker, given to another, or written under by a process that never held it', () => {
      assert.deepEqual(
        rules(withChanges([start('chaos-1'), change('chaos-2', lock('chaos-1', 'power off', 'power on'), lock('chaos-0', 'power off', 'power on'))])),
        ['fenced-write'],
      );
      assert.deepEqual(rules(withChanges([change('chaos-2', lock(null), lock('chaos-0', 'power off', 'power on'))])), ['fenced-write']);
      assert.deepEqual(rules(withChanges([start('chaos-1'), finish('chaos-2', 'chaos-1')])), ['fenced-write']);
    });

    test('a lock still held once everything settled', () => {
      const final = snapshot(100, { nodes: { n1: { allocation: null, instance: null, reservation: 'chaos-1' } } });
      assert.deepEqual(rules(history([], [], final)), ['stuck-locked']);
    });
  });

  test('provider generations going back between reads, and a 500', () => {
    const h = history([
      op({ api: 'placement', kind: 'read-provider', key: RP, invoke: 0, complete: 5, outcome: 'ok', seen: { version: 5, value: {} } }),
      op({ api: 'placement', kind: 'read-provider', key: RP, invoke: 10, complete: 15, outcome: 'ok', seen: { version: 4, value: {} } }),
      op({ api: 'ids', kind: 'read', key: 'x|', invoke: 0, complete: 1, outcome: 'unknown', status: 500 }),
    ]);
    assert.deepEqual(rules(h).sort(), ['generation-went-back', 'server-error']);
  });
});
