// What load balancers and supervisors ask: `/healthz`, the process works and reaches its database;
// `/readyz`, the process has finished starting and a write commits now (not a standby or a demoted
// primary, not a full disk). Both answer within `--health-timeout`, whatever the database does.
import type { Database } from '../db/database.js';
import { transaction } from '../db/transaction.js';
import { classifyFault } from '../db/faults.js';
import { readStatement } from '../db/statement.js';

const SELECT_1 = readStatement('select 1');

/** Below this much free space on a SQLite database's filesystem, writes are about to fail. */
const MIN_FREE_BYTES = 1 << 20;

export interface HealthAnswer {
  ok: boolean;
  /** why not, for the operator reading the body */
  reason?: string;
}

/**
 * Start-up progress. Until the database is migrated and what requests read from memory (the
 * provider index) is loaded, a request waits for it, at most `--ready-wait`, and is then answered
 * 503: a process that has just started, or a load balancer that sent traffic a moment early, sees
 * answers rather than errors, and a database that stays away (or a load that takes long) still
 * gets a bounded, clear refusal.
 */
export class Readiness {
  private state: 'database' | 'loading' | 'ready' | 'draining' | 'stopping' = 'database';
  private why = 'starting: waiting for the database';
  private readonly waiters = new Set<() => void>();

  get isReady(): boolean {
    return this.state === 'ready';
  }

  get isStopping(): boolean {
    return this.state === 'stopping';
  }

  /** Serving API requests: ready, or draining (stopping soon; /readyz already says no). */
  get serves(): boolean {
    return this.state === 'ready' || this.state === 'draining';
  }

  /** Draining or stopping: answers close their connections. */
  get isLeaving(): boolean {
    return this.state === 'draining' || this.state === 'stopping';
  }

  /** still starting, and what it waits for is the database (not its own loading) */
  get waitsForDatabase(): boolean {
    return this.state === 'database';
  }

  get reason(): string {
    return this.why;
  }

  /** Resolves to null once ready, or to the reason it is not after `timeoutMs`. */
  async wait(timeoutMs: number): Promise<string | null> {
    if ((this.state === 'database' || this.state === 'loading') && timeoutMs > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.waiters.add(done);
      });
    }
    return this.isReady ? null : this.why;
  }

  /** Starting, waiting for the database (unreachable, recovering, migrating). */
  waiting(reason: string): void {
    if (this.state === 'database' || this.state === 'loading') {
      this.state = 'database';
      this.why = `starting: ${reason}`;
    }
  }

  /** Starting, the database answers: loading what requests will read from memory. */
  loading(what: string): void {
    if (this.state === 'database' || this.state === 'loading') {
      this.state = 'loading';
      this.why = `starting: ${what}`;
    }
  }

  ready(): void {
    if (this.state === 'database' || this.state === 'loading') this.state = 'ready';
    this.wakeAll();
  }

  /** Asked to stop: /readyz answers 503 so that load balancers leave, while requests are still served. */
  draining(): void {
    if (this.state !== 'ready') return;
    this.state = 'draining';
    this.why = 'stopping: draining';
  }

  stopping(): void {
    this.state = 'stopping';
    this.why = 'stopping';
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }
}

/** Run a probe, but answer `timeout` after `timeoutMs` whatever it does. */
async function bounded(probe: () => Promise<void>, timeoutMs: number): Promise<HealthAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HealthAnswer>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: `the database did not answer within ${timeoutMs} ms` }), timeoutMs);
  });
  const answer = probe().then(
    (): HealthAnswer => ({ ok: true }),
    (err: unknown): HealthAnswer => {
      const fault = classifyFault(err);
      return { ok: false, reason: fault ? fault.message : `the database check failed: ${(err as Error).message}` };
    },
  );
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class HealthChecks {
  // Concurrent checks share one probe, so a burst of health requests is one query.
  private liveProbe: Promise<HealthAnswer> | null = null;
  private writeProbe: Promise<HealthAnswer> | null = null;

  constructor(
    private readonly database: Database,
    readonly readiness: Readiness,
    private readonly timeoutMs: number,
  ) {}

  /** The database answers a query. */
  live(): Promise<HealthAnswer> {
    this.liveProbe ??= bounded(async () => void (await SELECT_1.all(this.database, [])), this.timeoutMs).finally(() => (this.liveProbe = null));
    return this.liveProbe;
  }

  /** Started, and a write commits (on SQLite: reaches the disk, and the disk has room). */
  async ready(): Promise<HealthAnswer> {
    if (!this.readiness.isReady) return { ok: false, reason: this.readiness.reason };
    const free = await this.database.freeBytes?.().catch(() => null);
    if (free !== undefined && free !== null && free < MIN_FREE_BYTES) {
      return { ok: false, reason: `The database cannot write: its disk is full (${free} bytes free).` };
    }
    this.writeProbe ??= bounded(
      async () =>
        void (await transaction(
          this.database,
          async (tx) => {
            await tx.db.updateTable('allot_health').set({ checked_at: tx.clock.nowIso() }).where('id', '=', 1).execute();
          },
          { maxAttempts: 1 },
        )),
      this.timeoutMs,
    ).finally(() => (this.writeProbe = null));
    return this.writeProbe;
  }
}
