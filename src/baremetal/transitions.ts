// The fake hardware's clock: a node whose lock this conductor holds for a provision or power
// transition is finished `transitionTime` later. The state lives in the node row (transitional
// state, target, reservation), so a timer lost with its process is replaced by the one the
// conductor that takes the node over (or this one, restarted) schedules.
import type { Logger } from 'pino';
import { classifyFault } from '../db/faults.js';
import { completeTransition } from './node-service.js';
import type { BaremetalRuntime } from './runtime.js';

/** How soon a transition that met a database fault is tried again. */
const RETRY_AFTER_FAULT_MS = 1_000;

export class TransitionTimers {
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly rt: BaremetalRuntime,
    private readonly log: Logger,
  ) {}

  /** Finish the node's transition (or drop a stale lock) after the simulated duration; false when already scheduled. */
  schedule(nodeId: number, delayMs = this.rt.config.transitionTime): boolean {
    if (this.stopped || this.timers.has(nodeId)) return false;
    const timer = setTimeout(() => {
      this.timers.delete(nodeId);
      const job = completeTransition(this.rt, nodeId)
        .catch((err) => {
          // The database is away: the transition stays recorded on the node; try again later.
          if (classifyFault(err)) return void this.schedule(nodeId, RETRY_AFTER_FAULT_MS);
          this.log.error({ err, node: nodeId }, 'finishing a node transition failed');
        })
        .finally(() => this.running.delete(job));
      this.running.add(job);
    }, delayMs);
    this.timers.set(nodeId, timer);
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.running]);
  }
}
