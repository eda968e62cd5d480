// Work of one key in this process done in batches, one batch at a time: what arrives while a
// batch of its key is being handled waits and makes up the next one, so batches grow with the
// number of concurrent callers. Each batch is bounded on its own (its statements have their
// timeouts), so is every wait.

/** One caller's item, waiting for its outcome. */
export interface Queued<T, R> {
  item: T;
  /** resolved or rejected: only the first outcome counts */
  settled: boolean;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Handles a batch: settles every entry, or gives it back with `again` to be handled in a later
 * batch (those go first).
 */
export type BatchHandler<T, R> = (batch: Array<Queued<T, R>>, again: (entry: Queued<T, R>) => void) => Promise<void>;

/** The most entries one batch holds. */
const MAX_BATCH = 64;

export class BatchesByKey {
  private readonly waiting = new Map<string, Array<Queued<unknown, unknown>>>();

  run<T, R>(key: string, item: T, handle: BatchHandler<T, R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry: Queued<unknown, unknown> = {
        item,
        settled: false,
        resolve(result) {
          if (entry.settled) return;
          entry.settled = true;
          resolve(result as R);
        },
        reject(error) {
          if (entry.settled) return;
          entry.settled = true;
          reject(error);
        },
      };
      const queue = this.waiting.get(key);
      if (queue) return void queue.push(entry);
      this.waiting.set(key, [entry]);
      void this.drain(key, handle as unknown as BatchHandler<unknown, unknown>);
    });
  }

  private async drain(key: string, handle: BatchHandler<unknown, unknown>): Promise<void> {
    for (;;) {
      const queue = this.waiting.get(key)!;
      if (queue.length === 0) return void this.waiting.delete(key);
      const batch = queue.splice(0, MAX_BATCH);
      const later: Array<Queued<unknown, unknown>> = [];
      try {
        await handle(batch, (entry) => later.push(entry));
      } catch (err) {
        for (const entry of batch) entry.reject(err);
        continue;
      }
      // an entry settled after it was given back (a handler's fallback) is done
      queue.unshift(...later.filter((e) => !e.settled));
    }
  }
}
