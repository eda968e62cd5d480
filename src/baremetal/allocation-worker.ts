// The allocation worker of one process ("a thread is spawned for the remaining allocation
// process"): a queue of allocation ids this conductor owns, worked `allocationWorkers` at a time.
// Each is tried until it is active, failed or gone; when every candidate was taken or changed
// under us (another worker won it, or it is busy in a power transition), it is tried again after
// a short random pause, so racing workers spread out. It fails only when a fresh search finds no
// candidate at all (the error says which filter emptied the list) or when retries run out.
// A database fault (unreachable, failing over) fails nothing: the allocation waits with backoff
// until the database answers, and is tried again.
import type { Logger } from 'pino';
import { backoffDelay } from '../core/backoff.js';
import { classifyFault } from '../db/faults.js';
import { attemptAllocation, failAllocation } from './allocation-service.js';
import type { BaremetalRuntime } from './runtime.js';

/** How long an allocation keeps retrying nodes that other workers hold before it gives up. */
const RETRY_WINDOW_MS = 60_000;
/** Waits while the database is unreachable. */
const FAULT_BACKOFF = { baseMs: 100, maxMs: 5_000 };

export class AllocationWorker {
  private readonly queue: number[] = [];
  private readonly known = new Set<number>();
  private readonly running = new Set<Promise<void>>();
  private stopping = false;
  private wake: Array<() => void> = [];

  constructor(
    private readonly rt: BaremetalRuntime,
    private readonly log: Logger,
  ) {}

  /** Work this allocation; false when it is already queued or running (or the worker stops). */
  enqueue(id: number): boolean {
    if (this.stopping || this.known.has(id)) return false;
    this.known.add(id);
    this.queue.push(id);
    this.pump();
    return true;
  }

  /** Stop taking work; wait for what runs (pauses end early). Unfinished allocations stay
   * `allocating` with this conductor's affinity: a restart resumes them, or others take over. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.queue.length = 0;
    for (const w of this.wake.splice(0)) w();
    await Promise.all([...this.running]);
  }

  get idle(): boolean {
    return this.running.size === 0 && this.queue.length === 0;
  }

  private pump(): void {
    while (!this.stopping && this.running.size < this.rt.config.allocationWorkers && this.queue.length) {
      const id = this.queue.shift()!;
      const job = this.work(id).finally(() => {
        this.running.delete(job);
        this.known.delete(id);
        this.pump();
      });
      this.running.add(job);
    }
  }

  /** A pause that ends early when the worker stops. */
  private pause(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = this.wake.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake.push(done);
    });
  }

  private async work(id: number): Promise<void> {
    // the spec's allocation is asynchronous; a configured delay keeps it `allocating` for a while
    // so that races, deletes and take-over can be observed
    await this.pause(this.rt.config.allocationDelay);
    const deadline = Date.now() + RETRY_WINDOW_MS;
    let faults = 0;
    for (let round = 1; !this.stopping; round++) {
      try {
        const attempt = await attemptAllocation(this.rt, id);
        if (attempt.kind === 'done' || attempt.kind === 'gone') return;
        if (attempt.kind === 'failed') return void (await failAllocation(this.rt, await this.uuidOf(id), attempt.reason));
        if (Date.now() > deadline) return void (await failAllocation(this.rt, await this.uuidOf(id), `could not reserve any of ${attempt.suitable} suitable nodes`));
        // everything we tried was held by someone else: back off with jitter, then search again
        await this.pause(Math.random() * Math.min(500, 5 * 2 ** Math.min(round, 7)));
      } catch (err) {
        if (this.stopping) return;
        if (classifyFault(err)) {
          faults++;
          if (faults === 1 || faults % 20 === 0) this.log.warn({ err: (err as Error).message, allocation: id, faults }, 'allocation waits for the database');
          await this.pause(backoffDelay(faults, FAULT_BACKOFF));
          continue;
        }
        this.log.error({ err, allocation: id }, 'allocation failed unexpectedly');
        // If even this fails (the database went away meanwhile), the conductor's sweep resumes it.
        await failAllocation(this.rt, await this.uuidOf(id), `Unexpected exception during allocation: ${(err as Error).message}`).catch(() => {});
        return;
      }
    }
  }

  private async uuidOf(id: number): Promise<{ id: number; uuid: string }> {
    const row = await this.rt.database.db.selectFrom('baremetal_allocations').select(['id', 'uuid']).where('id', '=', id).executeTakeFirst();
    return row ?? { id, uuid: String(id) };
  }
}
