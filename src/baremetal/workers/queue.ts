// The allocations this process works, as a queue of ids: at most `concurrency` at once, each id
// at most once at a time. The queue is state (it lives in the context, and requests add to it);
// what is done with an id is attached when the worker starts. Ids added before that wait.

export type Work<T> = (item: T, stopping: AbortSignal) => Promise<void>;

export class WorkQueue<T> {
  private readonly waiting: T[] = [];
  private readonly known = new Set<T>();
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private work: Work<T> | null = null;

  constructor(private readonly concurrency: number) {}

  /** Work this item; false when it is already waiting or running, or the queue has stopped. */
  enqueue(item: T): boolean {
    if (this.stopping.signal.aborted || this.known.has(item)) return false;
    this.known.add(item);
    this.waiting.push(item);
    this.pump();
    return true;
  }

  /** Begin working, `work` for each item; its signal says when to give up (the queue stops). */
  start(work: Work<T>): void {
    this.work = work;
    this.pump();
  }

  /** Take no more work and wait for what runs (whose pauses end at once). */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.waiting.length = 0;
    await Promise.all([...this.running]);
  }

  get idle(): boolean {
    return this.running.size === 0 && this.waiting.length === 0;
  }

  private pump(): void {
    const work = this.work;
    if (!work) return;
    while (!this.stopping.signal.aborted && this.running.size < this.concurrency && this.waiting.length) {
      const item = this.waiting.shift()!;
      const job = work(item, this.stopping.signal).finally(() => {
        this.running.delete(job);
        this.known.delete(item);
        this.pump();
      });
      this.running.add(job);
    }
  }
}

/** Wait `ms`, or less if `signal` aborts first. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
