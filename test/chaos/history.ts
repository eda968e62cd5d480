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
    /** node uuid → the allocation uuid and instance uuid it records */
    nodes: Record<string, { allocation: string | null; instance: string | null }>;
  };
  ids: {
    /** `owner|purpose` → value, state, version, expiry */
    allocations: Record<string, { value: number; size: number; state: string; version: number; expiresAt: string | null }>;
    /** pool counters against what its rows hold */
    pool: { total: number; used: number; allocationCount: number; free: number };
  };
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
  /** the fixtures the workload ran on */
  fixtures: { providers: Record<string, number>; nodes: string[]; poolSize: number; sharedConsumers: string[] };
}

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
