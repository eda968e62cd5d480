// The fake hardware's clock: one timer per node whose transition this conductor finishes. The
// timers are state (in the context; services schedule them); what a due timer does is attached
// when the worker starts — timers scheduled before that start then. The transition itself is in
// the node row (transitional state, target, reservation), so a timer lost with its process is
// replaced by the one the conductor that takes the node over (or this one, restarted) schedules.

export class TransitionTimers {
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly deferred = new Map<number, number>();
  private readonly running = new Set<Promise<void>>();
  private due: ((nodeId: number) => Promise<void>) | null = null;
  private stopped = false;

  /** Finish the node's transition in `delayMs`; false when it is already scheduled (or stopped). */
  schedule(nodeId: number, delayMs: number): boolean {
    if (this.stopped || this.timers.has(nodeId) || this.deferred.has(nodeId)) return false;
    if (!this.due) {
      this.deferred.set(nodeId, delayMs);
      return true;
    }
    const due = this.due;
    const timer = setTimeout(() => {
      this.timers.delete(nodeId);
      const job = due(nodeId).finally(() => this.running.delete(job));
      this.running.add(job);
    }, delayMs);
    this.timers.set(nodeId, timer);
    return true;
  }

  /** Begin finishing transitions with `due` (which handles its own errors). */
  start(due: (nodeId: number) => Promise<void>): void {
    this.due = due;
    for (const [nodeId, delayMs] of this.deferred) {
      this.deferred.delete(nodeId);
      this.schedule(nodeId, delayMs);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.deferred.clear();
    await Promise.all([...this.running]);
  }
}
