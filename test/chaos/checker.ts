// The checker of a chaos run: judges a history (history.ts) against the guarantees, never against
// speed. Pure: the same history always gives the same verdict, so a saved one can be checked again.
//
// Every object — a Placement consumer, a bare-metal allocation, an identifier owner — is a register
// with versions (a consumer's generation; an allocation's 1 allocating, 2 finished; an identifier
// allocation's version). Writes say which state they ask for; observations (reads, the states write
// answers show, database snapshots) say which state held at some moment of their interval. An
// unknown write may take effect at any time after it was invoked, so it is never "over".
//
// An identifier owner may live several times: a lease that ran out (or a release) frees it, and its
// next allocation (a client's retry of an unknown one) is a new one, at version 1 again, maybe of
// another value. Versions are compared within one life; each life holds its value until it may
// have ended (a delete, or its lease: at least ttl after both its allocation was invoked and the
// life before could have ended).
//
// Per object:
// - explained: every state observed was asked for by a write that was not refused, invoked before
//   the observation ended (or made by the system: a finished allocation, a confirmed or expired
//   lease); a write answered as failed — a refusal, or a 503 that does not say "unknown" — is never
//   seen applied, and nothing disappears without a delete invoked (or a lease run out);
// - durable: after an acknowledged write ended, no observation that begins later shows an older
//   state, nor the object gone without a delete (nothing acknowledged undone or lost);
// - monotonic: versions never go backwards between observations that do not overlap, an object
//   seen gone never comes back, and one version never shows two different states (a bare-metal
//   allocation finished twice, a lost update);
// - no stale write: no two acknowledged writes succeed from the same version, and none from a
//   version older than one already seen (the generation compare-and-set);
// - an identifier reservation is confirmed only while its lease runs: none acknowledged that was
//   invoked after the lease had certainly run out (and one that committed late, after a reader saw
//   the value released, is a `came-back`).
// Across objects, at every instant the history pins down (from acknowledged writes and the
// observations, not from guesses): no provider over its capacity, no node with two allocations, no
// identifier value with two holders. Every snapshot: usages equal the sum of allocations, nodes and
// allocations point at each other, a pool's counters equal its rows. Provider generations never go
// backwards in what any client saw. Every unknown outcome is resolved from what was observed.
//
// Fencing, from the change log of the bare-metal allocations (which process wrote each change, in
// the order the changes of one row happened): a conductor's write — one that finishes an
// allocation (its state, node or error) or changes its conductor — is made only by the process
// that is its conductor at that moment, and a finish only of an allocation still allocating.
// So an allocation taken over from a process is never finished or changed by that process after
// the take-over (unless it took it back), and none is finished twice. The same for node locks,
// from the change log of the nodes: a write under a node's lock — finishing its transition (power
// or provision state, their targets) or letting the lock go — is made only by the lock's holder of
// that moment; the lock moves between processes only by a take-over (the taker, for itself).
//
// The cross-engine reservation: an operation on a service instance (create with validate,
// validate, terminate) is a write of each of the three things it holds — its bare-metal
// allocation, its Placement consumer, its pool value — which are then objects like any other, so
// every rule above (and the node, capacity and value counts across objects) covers them beside
// the plain clients' objects. Besides: at every snapshot, and in the final state as each engine's
// own API shows it, an instance holds all three or none, and nothing is held for an instance that
// does not exist or is terminated; an unknown outcome resolves the same way for all three.
import {
  type AllocationChange,
  type AllocationRow,
  type History,
  type InstanceReading,
  type NodeLockChange,
  type NodeLockRow,
  type Op,
  type ReservationSpec,
  type Snapshot,
  type State,
  reservationParts,
} from './history.js';

export interface Anomaly {
  rule: string;
  key: string;
  detail: string;
  /** ops (by id) involved */
  ops: number[];
  /** further cases of the same rule on the same object */
  repeats: number;
}

export type Resolution = 'applied' | 'not applied' | 'undetermined';

export interface UnknownResolved {
  op: number;
  api: string;
  kind: string;
  key: string;
  told: string;
  resolution: Resolution;
  evidence: string;
}

export interface Verdict {
  anomalies: Anomaly[];
  unknowns: UnknownResolved[];
  counts: {
    ops: number;
    byOutcome: Record<string, number>;
    byApiKind: Record<string, Record<string, number>>;
    snapshots: number;
    objects: number;
    /** the bare-metal allocations' change log: changes recorded, take-overs and finishes (or other conductor writes) among them */
    fencing: { changes: number; takeOvers: number; finishes: number };
    /** the nodes' change log: changes recorded, locks taken, take-overs of a lock, writes under a lock (each judged by its writer) */
    nodeLocks: { changes: number; taken: number; takeOvers: number; lockedWrites: number };
    /**
     * the reservation's operations by outcome and by what they were told (answered: the status; refused:
     * the status and code; no answer), in all and per RESERVATION_WINDOW_S of the run (which minutes
     * reservations kept being answered), and the instances judged all-or-nothing
     */
    reservations: {
      ops: Record<string, Record<string, number>>;
      told: Record<string, Record<string, number>>;
      windows: Array<{ fromS: number; told: Record<string, Record<string, number>> }>;
      instances: number;
    };
  };
}

interface Observation {
  invoke: number;
  complete: number;
  state: State | null;
  source: string;
}

interface ObjectHistory {
  api: string;
  key: string;
  writes: Op[];
  observations: Observation[];
}

const fmt = (s: State | null) => (s === null ? 'absent' : `v${s.version} ${JSON.stringify(s.value)}`);
const src = (op: Op) => `#${op.id} ${op.kind} by ${op.client} via allot ${op.proc} (${op.told})`;

/** Does `state` hold what `asked` asks for (its version, unless 0 = any; each field it names)? */
function fulfils(state: State, asked: State): boolean {
  if (asked.version !== 0 && state.version !== asked.version) return false;
  return Object.entries(asked.value).every(([k, v]) => state.value[k] === v);
}

const sameState = (a: State, b: State) => a.version === b.version && JSON.stringify(a.value) === JSON.stringify(b.value);

/** The reservation's operations are also counted per this many seconds of the run. */
const RESERVATION_WINDOW_S = 300;

export function check(history: History): Verdict {
  const anomalies: Anomaly[] = [];
  const seen = new Map<string, Anomaly>();
  // one entry per rule and object (the first case; how many more in `repeats`)
  const flag = (rule: string, key: string, detail: string, ops: number[] = []) => {
    const first = seen.get(`${rule} ${key}`);
    if (first) first.repeats++;
    else {
      const a = { rule, key, detail, ops, repeats: 0 };
      seen.set(`${rule} ${key}`, a);
      anomalies.push(a);
    }
  };
  const snapshots = [...history.snapshots, ...(history.final ? [history.final] : [])];
  // what nothing ended holds on to the end of the history (for ever, when it has no final state)
  const end = history.final?.complete ?? Number.POSITIVE_INFINITY;

  // Answers no client should ever get.
  for (const op of history.ops) if (op.status >= 500 && op.status !== 503) flag('server-error', op.key, `${src(op)}: answered ${op.status}`, [op.id]);

  const objects = collectObjects(history, snapshots);
  for (const obj of objects.values()) checkObject(obj, flag);
  const unknowns = reservationUnknowns(
    history,
    [...objects.values()].flatMap((obj) => resolveUnknowns(obj)),
    flag,
  );

  checkCapacity(history, objects, end, flag);
  checkNodes(objects, end, flag);
  checkValues(objects, end, flag);
  for (const [i, s] of snapshots.entries()) checkSnapshot(s, i === snapshots.length - 1 && history.final !== null, flag);
  checkProviderGenerations(history, snapshots, flag);
  const fencing = checkFencing(history.allocationChanges ?? [], flag);
  const nodeLocks = checkNodeLocks(history.nodeLockChanges ?? [], flag);
  const instances = checkReservations(history, snapshots, flag);
  const reservationOps: Record<string, Record<string, number>> = {};
  const reservationTold: Record<string, Record<string, number>> = {};
  const windows: Array<{ fromS: number; told: Record<string, Record<string, number>> }> = [];
  const start = history.ops[0]?.invoke ?? 0;
  const count = (into: Record<string, Record<string, number>>, kind: string, what: string) => {
    const k = (into[kind] ??= {});
    k[what] = (k[what] ?? 0) + 1;
  };
  for (const op of history.ops)
    if (op.reservation) {
      count(reservationOps, op.kind, op.outcome);
      count(reservationTold, op.kind, op.told);
      const w = Math.floor((op.invoke - start) / 1000 / RESERVATION_WINDOW_S);
      while (windows.length <= w) windows.push({ fromS: windows.length * RESERVATION_WINDOW_S, told: {} });
      count(windows[w]!.told, op.kind, op.told);
    }

  const byOutcome: Record<string, number> = {};
  const byApiKind: Record<string, Record<string, number>> = {};
  for (const op of history.ops) {
    byOutcome[op.outcome] = (byOutcome[op.outcome] ?? 0) + 1;
    const k = (byApiKind[`${op.api} ${op.kind}`] ??= {});
    k[op.outcome] = (k[op.outcome] ?? 0) + 1;
  }
  return {
    anomalies,
    unknowns,
    counts: {
      ops: history.ops.length,
      byOutcome,
      byApiKind,
      snapshots: snapshots.length,
      objects: objects.size,
      fencing,
      nodeLocks,
      reservations: { ops: reservationOps, told: reservationTold, windows, instances },
    },
  };
}

// ---- objects -----------------------------------------------------------------------------------

function snapshotStates(s: Snapshot): Map<string, State> {
  const states = new Map<string, State>();
  for (const [uuid, c] of Object.entries(s.placement.consumers)) {
    const entries = Object.entries(c.allocations);
    if (entries.length === 0) continue; // a consumer without allocations is absent, as its GET shows
    const value = entries.length === 1 ? { rp: entries[0]![0], vcpu: entries[0]![1] } : { allocations: c.allocations };
    states.set(`placement ${uuid}`, { version: c.generation, value });
  }
  for (const [name, a] of Object.entries(s.baremetal.allocations))
    states.set(
      `baremetal ${name}`,
      a.state === 'allocating' ? { version: 1, value: { state: 'allocating' } } : { version: 2, value: { state: a.state, node: a.node } },
    );
  // a reservation whose lease ran out is gone for every reader (allot hides it, a new allocation may
  // take its value), though its row stays until the pool's worker removes it
  const now = s.wallClock === undefined ? null : Date.parse(s.wallClock);
  for (const [key, a] of Object.entries(s.ids.allocations)) {
    if (now !== null && a.expiresAt !== null && Date.parse(a.expiresAt) <= now) continue;
    states.set(`ids ${key}`, { version: a.version, value: { value: a.value, state: a.state } });
  }
  return states;
}

/** Operations on no register: provider reads (their generations are judged on their own), node power changes (judged by the nodes' change log). */
const NOT_REGISTERS = new Set(['read-provider', 'power', 'read-node']);

/**
 * An operation on a service instance as writes of the three things it holds (each a copy of the
 * operation, under the thing's key): a create with validate, or a validate, asks each to exist —
 * the bare-metal allocation active at once, the consumer and the value as its answer showed them,
 * when it was acknowledged —, a terminate asks each gone. A promote changes none of them. An
 * acknowledged answer naming the node is an observation of the allocation too.
 */
function reservationWrites(spec: ReservationSpec, op: Op): Op[] {
  const parts = reservationParts(spec, op.key);
  const split = (key: string) => {
    const [api, ...rest] = key.split(' ');
    return { api: api as Op['api'], key: rest.join(' ') };
  };
  const { reservation: _, ...plain } = op;
  if (op.kind === 'terminate') return Object.values(parts).map((key) => ({ ...plain, ...split(key), write: { to: null } }));
  if (op.kind !== 'reserve' && op.kind !== 'validate') return [];
  const holds = op.outcome === 'ok' ? op.reservation?.holds : undefined;
  const allocation: State = { version: 2, value: { state: 'active', ...(holds ? { node: holds.node } : {}) } };
  return [
    { ...plain, ...split(parts.node), write: { from: 0, to: allocation }, ...(holds ? { seen: allocation } : {}) },
    { ...plain, ...split(parts.capacity), write: { from: 0, to: { version: 0, value: holds ? { rp: holds.rp, vcpu: holds.vcpu } : {} } } },
    { ...plain, ...split(parts.value), write: { from: 0, to: { version: 0, value: holds ? { value: holds.value } : {} } } },
  ];
}

/** After an object's last operation, snapshots keep observing it this long (then only the final state does). */
const ABSENCE_TAIL_MS = 30_000;

function collectObjects(history: History, snapshots: Snapshot[]): Map<string, ObjectHistory> {
  const objects = new Map<string, ObjectHistory>();
  const get = (api: string, key: string) => {
    const id = `${api} ${key}`;
    let o = objects.get(id);
    if (!o) objects.set(id, (o = { api, key, writes: [], observations: [] }));
    return o;
  };
  const span = new Map<string, [number, number]>();
  const spec = history.fixtures.reservation;
  const registerOps = history.ops.flatMap((op) => (op.reservation ? (spec ? reservationWrites(spec, op) : []) : NOT_REGISTERS.has(op.kind) ? [] : [op]));
  for (const op of registerOps) {
    const o = get(op.api, op.key);
    const [first, last] = span.get(`${op.api} ${op.key}`) ?? [op.invoke, op.complete];
    span.set(`${op.api} ${op.key}`, [Math.min(first, op.invoke), Math.max(last, op.complete)]);
    if (op.write) o.writes.push(op);
    if (op.seen !== undefined && op.outcome === 'ok') o.observations.push({ invoke: op.invoke, complete: op.complete, state: op.seen, source: src(op) });
  }
  // Each snapshot observes every object it holds; an object's absence is recorded while its story runs.
  for (const [i, s] of snapshots.entries()) {
    const states = snapshotStates(s);
    const final = s === history.final;
    const name = final ? 'the final state' : `snapshot ${i}`;
    for (const [id, state] of states) {
      const [api, ...rest] = id.split(' ');
      get(api!, rest.join(' ')).observations.push({ invoke: s.invoke, complete: s.complete, state, source: name });
    }
    for (const [id, o] of objects) {
      if (states.has(id)) continue;
      const [first, last] = span.get(id) ?? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
      if (s.complete >= first && (final || s.invoke <= last + ABSENCE_TAIL_MS))
        o.observations.push({ invoke: s.invoke, complete: s.complete, state: null, source: name });
    }
  }
  for (const o of objects.values()) {
    o.writes.sort((a, b) => a.invoke - b.invoke);
    o.observations.sort((a, b) => a.invoke - b.invoke);
  }
  return objects;
}

type Flag = (rule: string, key: string, detail: string, ops?: number[]) => void;

/** Writes that may have taken effect: acknowledged or unknown, invoked before `t`. */
const mayHaveApplied = (w: Op, t: number) => w.outcome !== 'fail' && w.invoke < t;

/**
 * May the system itself have made `state` (no client asks for it)? A finished bare-metal
 * allocation (the worker), a confirmed identifier reservation (a later version of it).
 */
function madeBySystem(obj: ObjectHistory, state: State, before: number): boolean {
  if (obj.api === 'baremetal' && state.version === 2) return obj.writes.some((w) => w.kind === 'create' && mayHaveApplied(w, before));
  return false;
}

/**
 * One life of an object: from a present observation until it is seen gone. An identifier owner
 * may have several: a lease that ran out (or a release) frees the owner, and its next allocation
 * (a client's retry of an unknown one) is a new allocation, at version 1 again, maybe of another
 * value. Other objects have one life (a re-creation after an absence is judged by `came-back`).
 */
interface Life {
  present: Observation[];
  /** the last present observation of the life before, which this one began after (null: the first life) */
  after: Observation | null;
  /** the earliest moment it may have ended by itself: an unconfirmed lease once its time is up */
  leaseEnd: number;
  /** the earliest moment it may have ended at all: that, or a delete that may have applied to it */
  endsBy: number;
}

type Begun = Pick<Life, 'present' | 'after'>;

function livesOf(obj: ObjectHistory): Life[] {
  const begun: Begun[] = [];
  let current: Begun | null = null;
  let last: Observation | null = null; // the current life's present observation that ended last
  let gone: Observation | null = null; // an absence seen after it
  // An identifier allocation keeps its value for its whole life: another value is another life
  // once the one before may have ended by then (a lease asked for the key may have run out, a
  // delete may have applied) — a repeat answered with a new value while a snapshot found the old
  // lease gone overlap in time, and no absence separates them (a seed-33 run: 'vanished' and a
  // value held twice).
  const mayHaveEndedBy = (t: number) =>
    obj.writes.some((w) => (w.ttlS !== undefined && w.invoke + w.ttlS * 1000 <= t) || (w.write?.to === null && w.outcome !== 'fail' && w.invoke < t));
  const anotherValue = (o: Observation) => obj.api === 'ids' && last !== null && last.state!.value.value !== o.state!.value.value && mayHaveEndedBy(o.complete);
  for (const o of obj.observations) {
    if (o.state === null) {
      if (last && !gone && o.invoke > last.complete) gone = o;
      continue;
    }
    if (!current || (obj.api === 'ids' && gone && gone.complete < o.invoke) || anotherValue(o)) {
      current = { present: [], after: last };
      begun.push(current);
      last = null;
      gone = null;
    }
    current.present.push(o);
    if (!last || o.complete > last.complete) last = o;
  }
  const lives: Life[] = [];
  for (const [i, life] of begun.entries()) {
    // a life begins once the one before has ended: not before it was last seen, nor before it could end
    const since = Math.max(life.after?.invoke ?? Number.NEGATIVE_INFINITY, lives.at(-1)?.endsBy ?? Number.NEGATIVE_INFINITY);
    const leaseEnd = leaseEndOf(obj, life, since, begun[i + 1]?.present[0] ?? null);
    // a delete answered while the life before was still seen ended that one, not this one
    const del = obj.writes.find(
      (w) => w.write?.to === null && w.outcome !== 'fail' && (!life.after || w.outcome === 'unknown' || w.complete > life.after.invoke),
    );
    lives.push({ ...life, leaseEnd, endsBy: Math.min(leaseEnd, del?.invoke ?? Number.POSITIVE_INFINITY) });
  }
  return lives;
}

/**
 * The allocations that may have made a life: invoked before it was seen, other than one answered
 * while the life before was still seen (that one made or repeated the life before).
 */
function makersOf(obj: ObjectHistory, life: Begun): Op[] {
  const first = life.present[0]!;
  return obj.writes.filter(
    (w) =>
      w.kind === 'allocate' && w.outcome !== 'fail' && w.invoke < first.complete && (!life.after || w.outcome === 'unknown' || w.complete > life.after.invoke),
  );
}

function leaseEndOf(obj: ObjectHistory, life: Begun, since: number, next: Observation | null): number {
  if (obj.api !== 'ids') return Number.POSITIVE_INFINITY;
  const first = life.present[0]!;
  // a confirmation acknowledged while this life ran (before the next one was seen) keeps it
  const confirmed = obj.writes.some((w) => w.kind === 'confirm' && w.outcome === 'ok' && w.complete > first.invoke && (!next || w.invoke < next.complete));
  if (confirmed) return Number.POSITIVE_INFINITY;
  // reserved, by a correct clock, once both the allocation that made it was invoked and the life
  // before had ended: its lease runs ttl from then
  const makers = makersOf(obj, life).filter((w) => w.ttlS !== undefined);
  return Math.min(...makers.map((w) => Math.max(w.invoke, since) + w.ttlS! * 1000));
}

/**
 * What the lease's clock (the database's, which each allot process reads with an error of half a
 * round trip) may be off the history's by, for `confirmed-after-expiry`.
 */
const LEASE_CLOCK_TOLERANCE_MS = 1_000;

/**
 * An acknowledged confirmation took effect while its lease ran. One invoked after the lease had
 * certainly run out — every allocation that may have made the life was answered, with a lease,
 * more than its ttl before — confirmed a value that every reader was by then told is free (and a
 * new allocation may have been given), even when no observation fell in between. (A confirmation
 * invoked in time whose commit landed after the lease's end is seen as `came-back` when a reader
 * saw the value released in between: chaos finding 2 of issue 33.)
 */
function checkConfirmations(obj: ObjectHistory, lives: Life[], flag: Flag): void {
  if (obj.api !== 'ids') return;
  for (const w of obj.writes) {
    if (w.kind !== 'confirm' || w.outcome !== 'ok') continue;
    const life = lifeAt(lives, w.invoke);
    if (!life) continue;
    const makers = makersOf(obj, life);
    if (makers.length === 0 || makers.some((m) => m.outcome !== 'ok' || m.ttlS === undefined)) continue;
    const latestEnd = Math.max(...makers.map((m) => m.complete + m.ttlS! * 1000));
    if (w.invoke > latestEnd + LEASE_CLOCK_TOLERANCE_MS)
      flag(
        'confirmed-after-expiry',
        obj.key,
        `${src(w)} was acknowledged, invoked at ${Math.round(w.invoke)} ms, after the lease of ${makers.map(src).join('; ')} had run out (by ${Math.round(latestEnd)} ms)`,
        [w.id, ...makers.map((m) => m.id)],
      );
  }
}

/** The life an observation ending at `t` follows or belongs to: the last one seen begun before. */
const lifeAt = (lives: Life[], t: number) => lives.findLast((l) => l.present[0]!.invoke < t);

function checkObject(obj: ObjectHistory, flag: Flag): void {
  const { key, writes, observations } = obj;
  const deletes = writes.filter((w) => w.write?.to === null);
  const lives = livesOf(obj);
  checkConfirmations(obj, lives, flag);
  const expiresAt = (o: Observation) => lifeAt(lives, o.complete)?.leaseEnd ?? Number.POSITIVE_INFINITY;
  /**
   * A moment of `o` may fall between two lives: the one before could have ended by its end, and
   * the next one was not yet certainly there at its beginning (no observation of it had ended).
   */
  const betweenLives = (o: Observation) =>
    lives.some((life, i) => {
      const next = lives[i + 1];
      if (!next) return false;
      const nextBy = Math.min(...next.present.map((p) => p.complete));
      return life.endsBy <= o.complete && nextBy > o.invoke && life.endsBy < nextBy;
    });
  /** is the object's absence over [.., t] explained: a delete that may have applied, a lease run out, a gap between two lives */
  const goneExplained = (o: Observation) => deletes.some((d) => mayHaveApplied(d, o.complete)) || o.complete >= expiresAt(o) || betweenLives(o);

  // explained: every present state was asked for by a write that may have applied (or by the system)
  for (const o of observations) {
    if (o.state === null) continue;
    const state = o.state;
    const askedBy = writes.filter((w) => w.write?.to && fulfils(state, w.write.to));
    if (askedBy.some((w) => mayHaveApplied(w, o.complete)) || madeBySystem(obj, state, o.complete)) continue;
    const refused = askedBy.filter((w) => w.outcome === 'fail');
    if (refused.length)
      flag(
        'failed-write-applied',
        key,
        `${o.source} shows ${fmt(state)}, asked only by ${refused.map(src).join('; ')}, answered as not done`,
        refused.map((w) => w.id),
      );
    else flag('phantom-state', key, `${o.source} shows ${fmt(state)}, which no write asked for`);
  }

  // one state per version, in each life. An identifier reservation may end unobserved when its
  // lease runs out, and its owner be given another value at version 1 by an allocation asked again:
  // two lives the observations do not separate. So a reservation seen beside another state of its
  // version is not flagged once a lease asked for the key may have run out by the later of the two.
  const leaseMayHaveEnded = (a: Observation, b: Observation) =>
    [a, b].some((x) => (x.state!.value as { state?: unknown }).state === 'reserved') &&
    writes.some((w) => w.ttlS !== undefined && w.invoke + w.ttlS * 1000 <= Math.max(a.complete, b.complete));
  const present = observations.filter((o) => o.state !== null);
  for (const life of lives) {
    const byVersion = new Map<number, Observation>();
    for (const o of life.present) {
      const seen = byVersion.get(o.state!.version);
      if (!seen) byVersion.set(o.state!.version, o);
      else if (!sameState(seen.state!, o.state!) && !leaseMayHaveEnded(seen, o))
        flag('two-states-one-version', key, `${seen.source} shows ${fmt(seen.state)}, ${o.source} shows ${fmt(o.state)}`);
    }
  }

  // monotonic: against every observation of the same life that ended before this one began
  const lifeOf = new Map(lives.flatMap((l) => l.present.map((o) => [o, l] as const)));
  const firstPresent = present.reduce<Observation | null>((a, o) => (!a || o.complete < a.complete ? o : a), null);
  const gone = firstPresent
    ? observations.filter((o) => o.state === null && o.invoke > firstPresent.complete).sort((a, b) => a.complete - b.complete)[0]
    : undefined;
  const byComplete = [...present].sort((a, b) => a.complete - b.complete);
  const highestIn = new Map<Life, Observation>();
  let j = 0;
  for (const later of observations) {
    while (j < byComplete.length && byComplete[j]!.complete < later.invoke) {
      const o = byComplete[j]!;
      const highest = highestIn.get(lifeOf.get(o)!);
      if (!highest || o.state!.version > highest.state!.version) highestIn.set(lifeOf.get(o)!, o);
      j++;
    }
    if (later.state !== null) {
      const highest = highestIn.get(lifeOf.get(later)!);
      if (highest && highest.state!.version > later.state.version)
        flag('version-went-back', key, `${highest.source} showed ${fmt(highest.state)}, later ${later.source} shows ${fmt(later.state)}`);
      // made anew after it was seen gone: only by a create still in flight then (a repeat of an unknown one)
      if (gone && gone.complete < later.invoke) {
        const recreated = writes.some(
          (w) => w.write?.from === 0 && w.outcome !== 'fail' && w.invoke < later.complete && (w.outcome === 'unknown' || w.complete > gone.invoke),
        );
        if (!recreated) flag('came-back', key, `${gone.source} showed it gone, later ${later.source} shows ${fmt(later.state)}`);
      }
    } else if (firstPresent && firstPresent.complete < later.invoke && !goneExplained(later)) {
      flag(
        deletes.some((d) => d.outcome === 'fail') ? 'failed-delete-applied' : 'vanished',
        key,
        `${firstPresent.source} showed ${fmt(firstPresent.state)}, later ${later.source} shows it gone, with no delete that may have applied${expiresAt(later) < Number.POSITIVE_INFINITY ? ` and before its lease could end (at ${Math.round(expiresAt(later))} ms)` : ''}`,
        deletes.map((d) => d.id),
      );
    }
  }

  // durable: after an acknowledged write, nothing older and nothing gone without a delete
  for (const w of writes) {
    if (w.outcome !== 'ok' || !w.write) continue;
    const after = observations.filter((o) => o.invoke > w.complete);
    if (w.write.to === null) {
      const back = after.find((o) => o.state !== null);
      if (back) flag('delete-undone', key, `${src(w)} was acknowledged, later ${back.source} shows ${fmt(back.state)}`, [w.id]);
      continue;
    }
    const made = w.seen ?? w.write.to;
    for (const o of after) {
      if (o.state === null) {
        if (!goneExplained(o)) flag('acknowledged-lost', key, `${src(w)} was acknowledged (${fmt(made)}), later ${o.source} shows it gone`, [w.id]);
      } else if (made.version !== 0 && o.state.version < made.version) {
        flag('acknowledged-undone', key, `${src(w)} was acknowledged (${fmt(made)}), later ${o.source} shows ${fmt(o.state)}`, [w.id]);
      }
    }
  }

  // no stale write: one acknowledged write per version it started from, none from an outdated version
  const fromVersion = new Map<number, Op>();
  for (const w of writes) {
    const from = w.write?.from;
    if (w.outcome !== 'ok' || from === undefined || from === 0) continue;
    const other = fromVersion.get(from);
    if (other) flag('lost-update', key, `${src(other)} and ${src(w)} both succeeded from version ${from}`, [other.id, w.id]);
    else fromVersion.set(from, w);
    const newer = observations.find((o) => o.complete < w.invoke && o.state !== null && o.state.version > from);
    if (newer)
      flag('stale-write-accepted', key, `${src(w)} succeeded from version ${from}, but ${newer.source} had shown ${fmt(newer.state)} before it was sent`, [
        w.id,
      ]);
  }
}

/** How each unknown write ended, from what was observed after it. */
function resolveUnknowns(obj: ObjectHistory): UnknownResolved[] {
  const out: UnknownResolved[] = [];
  for (const w of obj.writes) {
    if (w.outcome !== 'unknown' || !w.write) continue;
    const later = obj.observations.filter((o) => o.complete > w.invoke);
    const last = obj.observations.at(-1);
    const resolved = (resolution: Resolution, evidence: string) =>
      out.push({ op: w.id, api: w.api, kind: w.kind, key: obj.key, told: w.told, resolution, evidence });
    const to = w.write.to;
    if (to === null) {
      // a delete: applied when the object is gone for good and no later delete was acknowledged
      const laterDone = obj.writes.find((d) => d.write?.to === null && d.outcome === 'ok' && d.invoke > w.invoke);
      if (last?.state) resolved('not applied', `${last.source} shows ${fmt(last.state)}`);
      else if (laterDone) resolved('not applied', `a later delete was acknowledged (#${laterDone.id})`);
      else if (last) resolved('applied', `${last.source} shows it gone`);
      else resolved('undetermined', 'never observed');
    } else if (w.write.from === 0) {
      // a create: applied when the object exists at all after it (a repeat may be what made it) —
      // as an observation shows it, or as a repeat acknowledged after it says (a service
      // instance's answer observes its node's allocation, not its consumer or its value: an
      // instance reserved again and terminated before a snapshot came had its node "applied" and
      // the rest "not applied", a false partial reservation of a seed-33 run)
      const shown = later.find((o) => o.state !== null);
      const repeat = obj.writes.find((x) => x !== w && x.write?.from === 0 && x.outcome === 'ok');
      const acknowledged = obj.writes.find((x) => x !== w && x.write?.from === 0 && x.outcome === 'ok' && x.complete > w.invoke);
      if (shown) resolved('applied', `${shown.source} shows ${fmt(shown.state)}${repeat ? ` (or its repeat #${repeat.id} did)` : ''}`);
      else if (acknowledged) resolved('applied', `its repeat ${src(acknowledged)} was acknowledged (or did it)`);
      else if (later.length) resolved('not applied', `${later.at(-1)!.source} shows it absent, and no observation after it shows it`);
      else resolved('undetermined', 'never observed after it');
    } else {
      const shown = later.find((o) => o.state !== null && fulfils(o.state, to));
      if (shown) resolved('applied', `${shown.source} shows ${fmt(shown.state)}`);
      else if (later.length) resolved('not applied', `never shown; ${last!.source} shows ${fmt(last!.state)}`);
      else resolved('undetermined', 'never observed after it');
    }
  }
  return out;
}

// ---- across objects ------------------------------------------------------------------------------

interface Holding {
  key: string;
  what: string;
  amount: number;
  from: number;
  until: number;
  why: string;
}

/** Overlapping holdings of one thing by different holders, or more than `limit` at once. */
function overlaps(holdings: Holding[], limit: number, rule: string, flag: Flag): void {
  const byWhat = new Map<string, Holding[]>();
  for (const h of holdings) if (h.until > h.from) byWhat.set(h.what, [...(byWhat.get(h.what) ?? []), h]);
  for (const [what, list] of byWhat) {
    for (const start of list) {
      const at = start.from;
      const now = list.filter((h) => h.from <= at && h.until > at);
      const total = now.reduce((s, h) => s + h.amount, 0);
      if (total > limit && new Set(now.map((h) => h.key)).size > 1) {
        flag(rule, what, `at ${Math.round(at)} ms ${total} > ${limit}: ${now.map((h) => `${h.key} (${h.amount}, ${h.why})`).join('; ')}`);
        break;
      }
    }
  }
}

/** Placement: the VCPU each consumer certainly held on a provider (from acknowledged writes until the next write that may have changed it). */
function checkCapacity(history: History, objects: Map<string, ObjectHistory>, end: number, flag: Flag): void {
  const holdings: Holding[] = [];
  for (const obj of objects.values()) {
    if (obj.api !== 'placement') continue;
    for (const [i, w] of obj.writes.entries()) {
      const to = w.write?.to;
      if (w.outcome !== 'ok' || !to || to.value.rp === undefined) continue;
      const next = obj.writes.slice(i + 1).find((x) => x.outcome !== 'fail');
      holdings.push({
        key: obj.key,
        what: String(to.value.rp),
        amount: Number(to.value.vcpu),
        from: w.complete,
        until: heldUntil(obj, w, to, next?.invoke ?? end),
        why: `#${w.id}`,
      });
    }
  }
  for (const [rp, capacity] of Object.entries(history.fixtures.providers))
    overlaps(
      holdings.filter((h) => h.what === rp),
      capacity,
      'over-capacity',
      flag,
    );
}

/**
 * Until when an acknowledged write's state certainly held: until the next write that may have
 * changed it (`until`) — unless a write of the object invoked before it ended is still unknown: an
 * unknown write may take effect at any time after its invoke, even after later writes were
 * acknowledged (a statement delivered late: the chaos run saw a DELETE answered commit_unknown
 * during a partition delete the consumer 9 s later, after two acknowledged moves). Then only
 * observations pin the state down: it held until the last one (begun before any showing otherwise)
 * that still shows it.
 */
function heldUntil(obj: ObjectHistory, w: Op, to: State, until: number): number {
  if (!obj.writes.some((x) => x !== w && x.outcome === 'unknown' && x.invoke < w.complete)) return until;
  let confirmed = w.complete;
  for (const o of obj.observations) {
    if (o.invoke <= w.complete) continue;
    if (o.invoke >= until) break;
    if (o.state === null || !fulfils(o.state, to)) break;
    confirmed = o.invoke;
  }
  return confirmed;
}

/** Per life of `obj`: from its first observation holding `match` until it may have ended (a delete, its lease). */
function heldFrom(obj: ObjectHistory, end: number, match: (s: State) => string | null): Holding[] {
  return livesOf(obj).flatMap((life) => {
    const seen = life.present.find((o) => match(o.state!) !== null);
    if (!seen) return [];
    return [{ key: obj.key, what: match(seen.state!)!, amount: 1, from: seen.complete, until: Math.min(end, life.endsBy), why: seen.source }];
  });
}

function checkNodes(objects: Map<string, ObjectHistory>, end: number, flag: Flag): void {
  const holdings = [...objects.values()]
    .filter((o) => o.api === 'baremetal')
    .flatMap((o) => heldFrom(o, end, (s) => (s.version === 2 && s.value.state === 'active' ? String(s.value.node) : null)));
  overlaps(holdings, 1, 'node-held-twice', flag);
}

function checkValues(objects: Map<string, ObjectHistory>, end: number, flag: Flag): void {
  const holdings = [...objects.values()].filter((o) => o.api === 'ids').flatMap((o) => heldFrom(o, end, (s) => String(s.value.value)));
  overlaps(holdings, 1, 'value-held-twice', flag);
}

function checkSnapshot(s: Snapshot, final: boolean, flag: Flag): void {
  const name = final ? 'the final state' : `snapshot at ${Math.round(s.invoke)} ms`;
  for (const [rp, p] of Object.entries(s.placement.providers)) {
    const sum = Object.values(s.placement.consumers).reduce((n, c) => n + (c.allocations[rp] ?? 0), 0);
    if (sum !== p.used) flag('usage-not-sum', rp, `${name}: used ${p.used}, allocations sum to ${sum}`);
    if (sum > p.capacity) flag('over-capacity', rp, `${name}: ${sum} allocated of ${p.capacity}`);
  }
  const onNode = new Map<string, string[]>();
  for (const [name_, a] of Object.entries(s.baremetal.allocations)) {
    if (a.node) onNode.set(a.node, [...(onNode.get(a.node) ?? []), name_]);
    if (a.state === 'active') {
      const n = a.node ? s.baremetal.nodes[a.node] : undefined;
      if (!n || n.allocation !== a.uuid || n.instance !== a.uuid)
        flag('node-allocation-mismatch', name_, `${name}: active on ${a.node}, whose node records ${JSON.stringify(n)}`);
    } else if (a.node) flag('node-allocation-mismatch', name_, `${name}: ${a.state} but bound to node ${a.node}`);
    if (final && a.state === 'allocating')
      flag('stuck-allocating', name_, `${name}: still allocating (worked by ${a.conductor}) after the faults healed and the wait`);
  }
  for (const [node, names] of onNode) if (names.length > 1) flag('node-held-twice', node, `${name}: allocations ${names.join(', ')}`);
  if (final)
    for (const [node, n] of Object.entries(s.baremetal.nodes))
      if (n.reservation) flag('stuck-locked', node, `${name}: its lock still held by ${n.reservation} after the faults healed and the wait`);
  const byUuid = new Map(Object.values(s.baremetal.allocations).map((a) => [a.uuid, a]));
  for (const [node, n] of Object.entries(s.baremetal.nodes)) {
    if (n.allocation === null) continue;
    const a = byUuid.get(n.allocation);
    if (a?.state !== 'active' || a.node !== node)
      flag('node-allocation-mismatch', node, `${name}: node records allocation ${n.allocation}, which is ${JSON.stringify(a ?? null)}`);
  }
  const held = Object.entries(s.ids.allocations);
  const used = held.reduce((n, [, a]) => n + a.size, 0);
  const pool = s.ids.pool;
  if (pool.used !== used || pool.allocationCount !== held.length || pool.free + used !== pool.total)
    flag(
      'pool-counters',
      'pool',
      `${name}: counters used ${pool.used}, allocations ${pool.allocationCount}, free ${pool.free}, total ${pool.total}; rows hold ${used} in ${held.length}`,
    );
  const byValue = new Map<number, string>();
  for (const [key, a] of held)
    for (let v = a.value; v < a.value + a.size; v++) {
      const other = byValue.get(v);
      if (other) flag('value-held-twice', String(v), `${name}: held by ${other} and ${key}`);
      byValue.set(v, key);
    }
}

/** What clients saw of a provider's generation never goes backwards (reads that do not overlap, and the snapshots). */
function checkProviderGenerations(history: History, snapshots: Snapshot[], flag: Flag): void {
  const seen = new Map<string, Array<{ invoke: number; complete: number; generation: number; source: string }>>();
  for (const op of history.ops)
    if (op.kind === 'read-provider' && op.outcome === 'ok' && op.seen)
      seen.set(op.key, [...(seen.get(op.key) ?? []), { ...op, generation: op.seen.version, source: src(op) }]);
  for (const [i, s] of snapshots.entries())
    for (const [rp, p] of Object.entries(s.placement.providers))
      seen.set(rp, [...(seen.get(rp) ?? []), { invoke: s.invoke, complete: s.complete, generation: p.generation, source: `snapshot ${i}` }]);
  for (const [rp, list] of seen) {
    const byComplete = [...list].sort((a, b) => a.complete - b.complete);
    let highest: (typeof list)[number] | null = null;
    let j = 0;
    for (const o of [...list].sort((a, b) => a.invoke - b.invoke)) {
      while (j < byComplete.length && byComplete[j]!.complete < o.invoke) {
        if (!highest || byComplete[j]!.generation > highest.generation) highest = byComplete[j]!;
        j++;
      }
      if (highest && o.generation < highest.generation)
        flag('generation-went-back', rp, `${highest.source} saw generation ${highest.generation}, later ${o.source} saw ${o.generation}`);
    }
  }
}

// ---- fencing -------------------------------------------------------------------------------------

const showRow = (r: AllocationRow) => `${r.state}${r.node === null ? '' : ` on node #${r.node}`}, conductor ${r.conductor}`;

/**
 * No write from a fenced process: per allocation, in the order its changes happened, a change of
 * its conductor is a take-over (of an allocation still allocating, by the taker, for itself), and
 * a finish (state, node or error changed) is made by the allocation's conductor of that moment,
 * from `allocating`. Changes of neither kind — a client's PATCH of name or extra, a deleted node
 * unbinding it (node to none and nothing else), its deletion — are anybody's to make.
 */
function checkFencing(changes: AllocationChange[], flag: Flag): Verdict['counts']['fencing'] {
  const counts = { changes: changes.length, takeOvers: 0, finishes: 0 };
  const byAllocation = new Map<string, AllocationChange[]>();
  for (const c of changes) byAllocation.set(c.uuid, [...(byAllocation.get(c.uuid) ?? []), c]);
  for (const [uuid, list] of byAllocation) {
    // the last take-over from each conductor (cleared when it takes the allocation back)
    const takenFrom = new Map<string | null, AllocationChange>();
    for (const c of list.sort((a, b) => a.seq - b.seq)) {
      if (c.op !== 'UPDATE') continue;
      const before = c.before!;
      const after = c.after!;
      const by = c.writer ?? 'an unknown writer';
      const movedConductor = before.conductor !== after.conductor;
      const finished = before.state !== after.state || before.error !== after.error || (before.node !== after.node && after.node !== null);
      const what = `change #${c.seq} by ${by} (${showRow(before)} → ${showRow(after)})`;
      if (movedConductor && !finished && before.state === 'allocating' && after.conductor === c.writer) {
        takenFrom.set(before.conductor, c);
        takenFrom.delete(c.writer);
        counts.takeOvers++;
        continue;
      }
      if (!movedConductor && !finished) continue;
      counts.finishes++;
      if (c.writer !== before.conductor) {
        const took = takenFrom.get(c.writer);
        flag(
          'fenced-write',
          uuid,
          took
            ? `taken over from ${c.writer} by ${took.writer} (change #${took.seq}), then written by its old conductor: ${what}`
            : `written by a process that was not its conductor: ${what}`,
          [],
        );
      } else if (movedConductor) flag('fenced-write', uuid, `its conductor moved by other than a take-over: ${what}`);
      else if (before.state !== 'allocating') flag('finished-twice', uuid, `finished again after it had finished: ${what}`);
    }
  }
  return counts;
}

/**
 * Node locks: per node, in the order its changes happened, the lock is taken by the writer for
 * itself (from nobody), moved only by a take-over (from a holder, by the taker, for itself, with
 * nothing else changed), and a write under it — a state or target changed, the lock let go — is
 * made by its holder of that moment. So a process whose lock was taken over while it was paused
 * never finishes the transition, or lets the lock go, after it resumes (unless it took it back).
 * Changes with no lock held before or after (a transition that needs none) are anybody's.
 */
function checkNodeLocks(changes: NodeLockChange[], flag: Flag): Verdict['counts']['nodeLocks'] {
  const counts = { changes: changes.length, taken: 0, takeOvers: 0, lockedWrites: 0 };
  const show = (r: NodeLockRow) =>
    `power ${r.power}${r.targetPower ? ` → ${r.targetPower}` : ''}, ${r.provision}${r.targetProvision ? ` → ${r.targetProvision}` : ''}, lock ${r.reservation}`;
  const byNode = new Map<string, NodeLockChange[]>();
  for (const c of changes) byNode.set(c.node, [...(byNode.get(c.node) ?? []), c]);
  for (const [node, list] of byNode) {
    const takenFrom = new Map<string, NodeLockChange>();
    for (const c of list.sort((a, b) => a.seq - b.seq)) {
      const { before, after } = c;
      const by = c.writer ?? 'an unknown writer';
      const states =
        before.power !== after.power ||
        before.targetPower !== after.targetPower ||
        before.provision !== after.provision ||
        before.targetProvision !== after.targetProvision;
      const what = `change #${c.seq} by ${by} (${show(before)} → ${show(after)})`;
      if (before.reservation === null) {
        if (after.reservation === null) continue; // no lock involved
        if (after.reservation === c.writer) counts.taken++;
        else flag('fenced-write', node, `its lock given to ${after.reservation} by another process: ${what}`);
        continue;
      }
      if (after.reservation !== before.reservation && after.reservation !== null && !states) {
        if (after.reservation === c.writer) {
          takenFrom.set(before.reservation, c);
          if (c.writer) takenFrom.delete(c.writer);
          counts.takeOvers++;
        } else flag('fenced-write', node, `its lock moved by other than a take-over: ${what}`);
        continue;
      }
      if (!states && after.reservation === before.reservation) continue; // another column: anybody's
      counts.lockedWrites++;
      if (c.writer === before.reservation && after.reservation !== null && after.reservation !== before.reservation)
        flag('fenced-write', node, `its lock handed on with other changes: ${what}`);
      else if (c.writer !== before.reservation) {
        const took = c.writer ? takenFrom.get(c.writer) : undefined;
        flag(
          'fenced-write',
          node,
          took
            ? `its lock taken over from ${c.writer} by ${took.writer} (change #${took.seq}), then written under it by its old holder: ${what}`
            : `written under a lock held by another process: ${what}`,
        );
      }
    }
  }
  return counts;
}

// ---- the cross-engine reservation ---------------------------------------------------------------

const DEAD_STATES = new Set(['terminated', 'deallocating']);

/**
 * Every reading of the reservation's instances — each snapshot's (one transaction), and the final
 * one through each engine's own API —: nothing held for an instance that does not exist or is
 * terminated, an instance of the reservation spec holds its node, its capacity and its value or
 * none of them, and no two instances hold one node or one value. How many instances were judged.
 */
function checkReservations(history: History, snapshots: Snapshot[], flag: Flag): number {
  const spec = history.fixtures.reservation;
  const judged = new Set<string>();
  const readings: Array<[string, Record<string, InstanceReading>]> = snapshots.flatMap((s, i) =>
    s.reservations ? [[s === history.final ? 'the final state' : `snapshot ${i}`, s.reservations] as [string, Record<string, InstanceReading>]] : [],
  );
  if (history.finalThroughApis) readings.push(['the final state through the APIs', history.finalThroughApis]);
  for (const [name, reading] of readings) {
    const nodes = new Map<string, string>();
    const values = new Map<number, string>();
    for (const [id, r] of Object.entries(reading)) {
      judged.add(id);
      const held = { node: r.node !== null, capacity: Object.values(r.capacity).some((n) => n > 0), value: r.values.length > 0 };
      const what = `node ${r.node ?? 'none'}, capacity ${JSON.stringify(r.capacity)}, values [${r.values.join(', ')}]`;
      if ((r.state === null || DEAD_STATES.has(r.state)) && (held.node || held.capacity || held.value))
        flag('held-by-dead-instance', id, `${name}: instance ${r.state === null ? 'does not exist' : `is ${r.state}`}, yet holds ${what}`);
      else if (spec && r.spec === spec.name && new Set(Object.values(held)).size > 1)
        flag('partial-reservation', id, `${name}: instance (${r.state}) holds some of its attributes, not all: ${what}`);
      if (r.node !== null) {
        const other = nodes.get(r.node);
        if (other) flag('node-held-twice', r.node, `${name}: held by instances ${other} and ${id}`);
        nodes.set(r.node, id);
      }
      for (const v of r.values) {
        const other = values.get(v);
        if (other) flag('value-held-twice', String(v), `${name}: held by instances ${other} and ${id}`);
        values.set(v, id);
      }
    }
  }
  return judged.size;
}

/**
 * An unknown outcome of an operation on a service instance resolves once, for all three things it
 * holds: their resolutions (each from what was observed of it) agree, or the instance held some of
 * them and not others (`partial-reservation`). The three become one entry, about the instance.
 */
function reservationUnknowns(history: History, unknowns: UnknownResolved[], flag: Flag): UnknownResolved[] {
  const ops = new Map(history.ops.filter((op) => op.reservation).map((op) => [op.id, op]));
  const plain = unknowns.filter((u) => !ops.has(u.op));
  const byOp = new Map<number, UnknownResolved[]>();
  for (const u of unknowns) if (ops.has(u.op)) byOp.set(u.op, [...(byOp.get(u.op) ?? []), u]);
  const joined: UnknownResolved[] = [];
  for (const [id, parts] of byOp) {
    const op = ops.get(id)!;
    const resolutions = new Set(parts.map((p) => p.resolution));
    const evidence = parts.map((p) => `${p.key}: ${p.resolution} (${p.evidence})`).join('; ');
    let resolution = parts[0]!.resolution;
    if (resolutions.size > 1) {
      // a part never observed does not contradict the others
      const known = new Set([...resolutions].filter((r) => r !== 'undetermined'));
      if (known.size > 1) flag('partial-reservation', op.key, `${src(op)}: its parts resolved differently: ${evidence}`, [id]);
      resolution = known.size === 1 ? [...known][0]! : 'undetermined';
    }
    joined.push({ op: id, api: 'reservation', kind: op.kind, key: op.key, told: op.told, resolution, evidence });
  }
  return [...plain, ...joined.sort((a, b) => a.op - b.op)];
}
