// The history of a chaos run: every operation a client invoked (when, on which allot process, what
// it asked, when it ended, what it was told and what that means: ok, failed or unknown), and the
// snapshots of the whole database taken during the run. The checker (checker.ts) reads only this,
// so a saved history can be checked again without running anything.

export type Api = 'placement' | 'baremetal' | 'ids';

/**
 * - ok: acknowledged (2xx);
 * - fail: certainly not applied (a refusal, or a 503 that does not say the outcome is unknown —
 *   allot's own claim, which the checker holds it to);
 * - unknown: may or may not have been applied (503 commit_unknown, no answer in time, a reset).
 */
export type Outcome = 'ok' | 'fail' | 'unknown';

/** One state of an object: its version (a generation) and what it holds. Absent: null. */
export interface State {
  version: number;
  value: Record<string, unknown>;
}

export interface Op {
  id: number;
  client: string;
  /** the allot process it was sent to */
  proc: number;
  api: Api;
  /** claim, move, delete, read, create, confirm, release, validate, terminate, read-provider, … */
  kind: string;
  /** the object it is about: a consumer uuid, an allocation name, an identifier owner, a provider */
  key: string;
  /** ms since the load started (the test's monotonic clock) */
  invoke: number;
  complete: number;
  outcome: Outcome;
  /** 0: no answer */
  status: number;
  /** what the client was told, in short: status and error code or fault */
  told: string;
  /** a write: the state it asks for (null: delete), from which version (absent: any) */
  write?: { from?: number; to: State | null };
  /** what the answer (or a read) showed of the object: its state, or null for absent */
  seen?: State | null;
  /** seconds a reservation lasts (identifier leases) */
  ttlS?: number;
  /**
   * An operation on a service instance of the cross-engine reservation (its `key` is the instance
   * id): the checker turns it into writes of the three things the instance holds (its bare-metal
   * allocation, its Placement consumer, its pool value). `holds`: what an acknowledged answer
   * showed the instance holding (null: nothing).
   */
  reservation?: { holds?: ReservationHolds | null };
}

/** What a service instance of the cross-engine reservation holds, as its answer shows it. */
export interface ReservationHolds {
  /** the node (uuid) of its bare-metal allocation */
  node: string;
  /** the provider of its capacity, and the VCPU */
  rp: string;
  vcpu: number;
  /** its value from the pool */
  value: number;
}

/** A service instance of the cross-engine reservation at one moment: what each engine holds for it. */
export interface InstanceReading {
  /** its allocation spec's name and its state (null: no such instance) */
  spec: string | null;
  state: string | null;
  /** the node its bare-metal allocation is on (null: it holds none) */
  node: string | null;
  /** its consumer's allocations (provider → VCPU; empty: none) */
  capacity: Record<string, number>;
  /** the values it holds in the workload's pool */
  values: number[];
}

/** The database at one moment (one REPEATABLE READ transaction), between invoke and complete. */
export interface Snapshot {
  invoke: number;
  complete: number;
  /** the database's wall clock at that moment (ISO; absent in older histories) */
  wallClock?: string;
  placement: {
    /** provider uuid → capacity, the `used` counter, and its generation */
    providers: Record<string, { capacity: number; used: number; generation: number }>;
    /** consumer uuid → its generation and allocations (provider → VCPU) */
    consumers: Record<string, { generation: number; allocations: Record<string, number> }>;
  };
  baremetal: {
    /** allocation name → state, node uuid, and the conductor working it */
    allocations: Record<string, { uuid: string; state: string; node: string | null; conductor: string | null }>;
    /** node uuid → the allocation uuid and instance uuid it records, and who holds its lock (absent in older histories) */
    nodes: Record<string, { allocation: string | null; instance: string | null; reservation?: string | null }>;
  };
  ids: {
    /** `owner|purpose` → value, state, version, expiry */
    allocations: Record<string, { value: number; size: number; state: string; version: number; expiresAt: string | null }>;
    /** pool counters against what its rows hold */
    pool: { total: number; used: number; allocationCount: number; free: number };
  };
  /**
   * instance id → what it holds in each engine: every instance of the reservation spec, and every
   * holder named by a held bare-metal allocation, Placement consumer or pool value (absent in older
   * histories)
   */
  reservations?: Record<string, InstanceReading>;
}

/** A bare-metal allocation's row as one change left it (or found it). */
export interface AllocationRow {
  state: string;
  /** its conductor (conductor_affinity) */
  conductor: string | null;
  /** the node's id */
  node: number | null;
  /** last_error */
  error: string | null;
}

/** A node's lock and what runs under it, as one change left it (or found it). */
export interface NodeLockRow {
  /** the conductor holding the node's lock (`reservation`) */
  reservation: string | null;
  power: string | null;
  targetPower: string | null;
  provision: string;
  targetProvision: string | null;
}

/** One change of a node's row that touched its lock or its states, as PostgreSQL recorded it (allocation-changes.ts). */
export interface NodeLockChange {
  seq: number;
  writer: string | null;
  /** the node's uuid */
  node: string;
  before: NodeLockRow;
  after: NodeLockRow;
}

/**
 * One change of a bare-metal allocation's row, as PostgreSQL recorded it in the transaction that
 * made it (allocation-changes.ts): committed exactly when the change was, numbered in the order
 * the changes of one row happened.
 */
export interface AllocationChange {
  seq: number;
  /** the conductor of the allot process whose connection made it (null: unknown) */
  writer: string | null;
  op: 'INSERT' | 'UPDATE' | 'DELETE';
  uuid: string;
  /** null for an insert */
  before: AllocationRow | null;
  /** null for a delete */
  after: AllocationRow | null;
}

export interface History {
  ops: Op[];
  snapshots: Snapshot[];
  /** the state once every fault healed and every allocation settled */
  final: Snapshot | null;
  /** every change of the workload's bare-metal allocations, with its writer (absent: not recorded) */
  allocationChanges?: AllocationChange[];
  /** every change of a node's lock or states, with its writer (absent: not recorded) */
  nodeLockChanges?: NodeLockChange[];
  /** the reservation's instances once everything settled, each engine read through its own API (absent in older histories) */
  finalThroughApis?: Record<string, InstanceReading>;
  /** the fixtures the workload ran on */
  fixtures: {
    providers: Record<string, number>;
    nodes: string[];
    poolSize: number;
    sharedConsumers: string[];
    /** the reservation spec's name and attributes (absent in older histories) */
    reservation?: ReservationSpec;
  };
}

/** The cross-engine reservation's allocation spec: its name, and the name of each of its attributes. */
export interface ReservationSpec {
  name: string;
  node: string;
  capacity: string;
  value: string;
}

/** The keys (`api key`, as the checker names objects) of what an instance of `spec` holds in each engine. */
export const reservationParts = (spec: ReservationSpec, instance: string) => ({
  node: `baremetal service-instance.${instance}.${spec.node}`,
  capacity: `placement ${instance}`,
  value: `ids service-instance/${instance}|${spec.value}`,
});

/** What a client makes of an HTTP answer. */
export function outcomeOf(api: Api, status: number, body: unknown, text: string, error?: string): { outcome: Outcome; told: string } {
  if (status === 0) {
    // refused: the process was not there, nothing reached it; anything else may have
    if (error && /ECONNREFUSED/.test(error)) return { outcome: 'fail', told: 'connection refused' };
    return { outcome: 'unknown', told: `no answer (${error ?? 'aborted'})` };
  }
  if (status >= 200 && status < 300) return { outcome: 'ok', told: String(status) };
  const b = body as { code?: string; fault?: string; errors?: Array<{ code?: string; detail?: string }>; error_message?: string } | undefined;
  if (status === 503) {
    const unknown = api === 'ids' ? b?.fault === 'commit_unknown' : /may or may not have been applied/.test(text);
    const fault = api === 'ids' ? (b?.fault ?? 'service_unavailable') : /ran out of time|did not (answer|finish)/.test(text) ? 'timeout' : 'unavailable';
    return { outcome: unknown ? 'unknown' : 'fail', told: `503 ${unknown ? 'commit_unknown' : fault}` };
  }
  // a 5xx other than 503 is not a promise of anything: the checker reports it
  if (status >= 500) return { outcome: 'unknown', told: `${status} ${text.slice(0, 200)}` };
  const code = api === 'placement' ? b?.errors?.[0]?.code : api === 'ids' ? b?.code : undefined;
  return { outcome: 'fail', told: `${status}${code ? ` ${code}` : ''}` };
}
