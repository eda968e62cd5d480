// The seeded parts of a chaos run: a small PRNG (every random choice of the schedule and of the
// clients comes from one seed, so a run can be repeated with --seed or --replay), and the fault
// schedule — a bounded list of faults, each with its start, its target and how long it lasts.
// Pure: no I/O.

/** sfc32, seeded through splitmix32: small, fast, and good enough for choosing faults and requests. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  /** [0, 1) */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  between(low: number, high: number): number {
    return low + this.next() * (high - low);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** An independent stream (for one client), so that clients do not share one sequence. */
  fork(salt: number): Rng {
    return new Rng((this.int(2 ** 32) ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }
}

export type FaultKind =
  /** drop every packet between an allot process and PostgreSQL */
  | 'partition'
  /** drop every packet between the clients and an allot process (requests hang: outcomes unknown) */
  | 'client-partition'
  /** drop a share of the packets between an allot process and PostgreSQL */
  | 'loss'
  /** slow an allot process's link (netem delay, or a tbf rate limit) */
  | 'slow'
  /** SIGSTOP an allot process, SIGCONT after the duration (longer than --heartbeat-timeout) */
  | 'pause-allot'
  /**
   * SIGSTOP the allot process while its worker holds an `allocating` allocation (read from the
   * database), SIGCONT as soon as another conductor has taken it over: the zombie resumes with it in hand
   */
  | 'pause-allocating'
  /**
   * SIGSTOP the allot process while it holds a node's lock (a power transition it started, read
   * from the database), SIGCONT as soon as another conductor has taken the lock over: the zombie
   * resumes with the transition's timer still set
   */
  | 'pause-node-lock'
  /** SIGSTOP PostgreSQL (every process of it), SIGCONT after the duration */
  | 'pause-postgres'
  /** SIGKILL an allot process, start it again after the duration */
  | 'kill-allot'
  /** SIGKILL PostgreSQL (postmaster and backends), start it again after the duration */
  | 'kill-postgres'
  /** move an allot process's wall clock by `skewS`, back to true time after the duration */
  | 'skew'
  /**
   * (--patroni only) fail the primary over to its synchronous standby: `patronictl switchover`
   * (amount 0), or a crash of the primary's machine, its Patroni and its PostgreSQL (amount 1)
   */
  | 'failover';

export const FAULT_KINDS: readonly FaultKind[] = [
  'partition',
  'client-partition',
  'loss',
  'slow',
  'pause-allot',
  'pause-allocating',
  'pause-node-lock',
  'pause-postgres',
  'kill-allot',
  'kill-postgres',
  'skew',
];

/** With --patroni: every kind, and failovers. */
export const PATRONI_FAULT_KINDS: readonly FaultKind[] = [...FAULT_KINDS, 'failover'];

export interface Fault {
  kind: FaultKind;
  /** seconds after the load starts */
  at: number;
  /** seconds it lasts */
  duration: number;
  /** the allot process (index) it hits; -1 for PostgreSQL */
  target: number;
  /** loss: the share dropped; slow: the delay (ms); skew: the offset (s); failover: 0 switchover, 1 crash */
  amount?: number;
}

export interface ScheduleSettings {
  seconds: number;
  processes: number;
  /** the allot processes' --heartbeat-timeout, s: pauses are longer, skews around it */
  heartbeatTimeoutS: number;
  /** the longest an allot process waits on PostgreSQL for one statement (statement timeout + grace), s */
  statementBoundS: number;
  /** the allot processes whose allocations wait in their worker for a while (--allocation-delay): pause-allocating's targets */
  delayedWorkers: readonly number[];
  /** the allot processes whose transitions hold a node's lock for seconds (--transition-time): pause-node-lock's targets */
  lockingWorkers: readonly number[];
  /** pause-allocating and pause-node-lock: how long the run waits for its target to hold work before pausing it, s */
  holdWaitS: number;
  /**
   * the longest a take-over of a paused process's work takes: its heartbeat times out, then the
   * next take-over pass of another process (heartbeat timeout + heartbeat interval + take-over interval), s
   */
  takeOverS: number;
  /** the kinds to draw from (FAULT_KINDS when not given) */
  kinds?: readonly FaultKind[];
}

/** The pauses whose point is a take-over: another conductor must take the paused process's work over. */
const ZOMBIE_PAUSES: ReadonlySet<FaultKind> = new Set(['pause-allocating', 'pause-node-lock']);

/**
 * Faults that would keep the other processes from taking a paused process's work over: any on
 * PostgreSQL, and those that cut an allot process off from it or stop it. (A client partition, a
 * slow link or a skewed clock leaves its conductor working: leases and heartbeats are timed on
 * the database's clock.)
 */
const STOPS_TAKE_OVERS: ReadonlySet<FaultKind> = new Set([
  'partition',
  'loss',
  'pause-allot',
  'pause-allocating',
  'pause-node-lock',
  'pause-postgres',
  'kill-allot',
  'kill-postgres',
  'failover',
]);

/**
 * A fault every few seconds, kinds in turn from a shuffled deck (so every kind comes up in a
 * short run), targets at random among those not already under a fault; faults end 20 s before
 * the load does. Durations: partitions both shorter and longer than every timeout, pauses of an
 * allot process always longer than the heartbeat timeout (its work is taken over meanwhile).
 *
 * A pause that waits for a take-over (pause-allocating, pause-node-lock) gets the run to itself
 * as far as take-overs go: it starts when no fault that would stop one is on, and none starts
 * until its take-over is due — its wait for work to hold, then `takeOverS`, plus a margin; a
 * client partition, a slow link or a skew may. (In the hour-long run before this rule, 3 of 32
 * paused allocations and 11 of 27 paused node locks were not seen taken over, each with
 * PostgreSQL paused, killed or failed over, or another process cut off or stopped meanwhile.) A
 * kind drawn when it cannot start waits, and is drawn first at a later slot where it can.
 */
export function makeSchedule(rng: Rng, s: ScheduleSettings): Fault[] {
  const faults: Fault[] = [];
  const busyUntil = new Map<number, number>(); // target → second it is free again
  let quietUntil = 0; // a pause waits for its take-over: no fault that stops one starts before
  // a zombie pause lasts its wait for work to hold plus the pause
  const lasting = (f: Fault) => f.duration + (ZOMBIE_PAUSES.has(f.kind) ? s.holdWaitS : 0);
  const canStart = (kind: FaultKind, at: number) =>
    ZOMBIE_PAUSES.has(kind)
      ? at >= quietUntil && !faults.some((f) => STOPS_TAKE_OVERS.has(f.kind) && f.at + lasting(f) + 2 > at)
      : !STOPS_TAKE_OVERS.has(kind) || at >= quietUntil;
  const waiting: FaultKind[] = []; // drawn when they could not start
  let deck: FaultKind[] = [];
  const end = s.seconds - 20;
  for (let at = 8; at < end; at += rng.between(3, 9)) {
    let kind = waiting.find((k) => canStart(k, at));
    if (kind) waiting.splice(waiting.indexOf(kind), 1);
    else {
      if (deck.length === 0) deck = shuffle(rng, [...(s.kinds ?? FAULT_KINDS)]);
      // drawn until one can start; those that cannot wait for a later slot
      while (!kind && deck.length > 0) {
        const drawn = deck.pop()!;
        if (canStart(drawn, at)) kind = drawn;
        else waiting.push(drawn);
      }
    }
    if (!kind) continue;
    const onPostgres = kind === 'pause-postgres' || kind === 'kill-postgres' || kind === 'failover';
    const zombie = ZOMBIE_PAUSES.has(kind);
    const free = onPostgres
      ? [-1]
      : kind === 'pause-allocating'
        ? [...s.delayedWorkers]
        : kind === 'pause-node-lock'
          ? [...s.lockingWorkers]
          : Array.from({ length: s.processes }, (_, i) => i);
    // one allot process is left alone at any moment: somebody must be able to take work over
    const allotBusy = [...busyUntil].filter(([t, until]) => t >= 0 && until > at).length;
    const candidates = free.filter((t) => (busyUntil.get(t) ?? 0) <= at && (onPostgres || allotBusy < s.processes - 1));
    if (candidates.length === 0) {
      if (zombie) waiting.push(kind);
      continue;
    }
    const target = rng.pick(candidates);
    const fault: Fault = { kind, at: round(at), duration: round(duration(rng, kind, s)), target };
    if (kind === 'loss') fault.amount = round(rng.between(0.1, 0.5));
    if (kind === 'slow') fault.amount = Math.round(rng.between(50, 400));
    if (kind === 'skew') fault.amount = round((rng.chance(0.5) ? 1 : -1) * rng.between(0.5, 2.5) * s.heartbeatTimeoutS);
    if (kind === 'failover') fault.amount = rng.int(2);
    const lasts = lasting(fault);
    if (fault.at + lasts > end) continue;
    faults.push(fault);
    busyUntil.set(target, fault.at + lasts + 2);
    if (zombie) quietUntil = fault.at + s.holdWaitS + s.takeOverS + 2;
  }
  return faults;
}

function duration(rng: Rng, kind: FaultKind, s: ScheduleSettings): number {
  switch (kind) {
    case 'partition':
    case 'client-partition':
      // half shorter than a statement's bound (healing mid-transaction), half well past it
      return rng.chance(0.5) ? rng.between(1, s.statementBoundS) : rng.between(s.statementBoundS + 1, s.statementBoundS * 3);
    case 'loss':
    case 'slow':
      return rng.between(3, 15);
    case 'pause-allot':
      return rng.between(s.heartbeatTimeoutS + 1, s.heartbeatTimeoutS * 2.5);
    case 'pause-allocating':
    case 'pause-node-lock':
      // the most it may last (it ends once the work is taken over): past the take-over, with a margin
      return rng.between(s.takeOverS + 3, s.takeOverS * 2);
    case 'pause-postgres':
      return rng.between(1, s.statementBoundS * 2);
    case 'kill-allot':
    case 'kill-postgres':
      return rng.between(0.5, 4);
    case 'skew':
      return rng.between(5, 20);
    case 'failover':
      // how long the cluster gets afterwards before the next fault on it
      return rng.between(5, 15);
  }
}

function shuffle<T>(rng: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

const round = (n: number) => Math.round(n * 10) / 10;
