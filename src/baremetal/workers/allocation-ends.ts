// The requests of this process that wait for an allocation to leave `allocating` (`Prefer: wait`,
// services/allocations.ts: awaitAllocation), woken when this process ends one: its worker makes it
// active or fails it, or a DELETE it serves removes it. Only a wake-up: the waiter reads the row.
import { pause } from './queue.js';

interface Watch {
  /** resolves at the allocation's end, after `ms`, or when `signal` aborts, whichever comes first */
  until(ms: number, signal: AbortSignal): Promise<void>;
  cancel(): void;
}

/** The requests of this process waiting for allocations to end, by allocation id. */
export class AllocationEnds {
  private readonly waiting = new Map<number, Set<() => void>>();

  /** Allocation `id` is active, failed or deleted, and committed so: wake whoever waits for it. */
  ended(id: number): void {
    const wake = this.waiting.get(id);
    if (!wake) return;
    this.waiting.delete(id);
    for (const w of wake) w();
  }

  /** Watch for the next end of `id`; made before reading the row, so an end in between is not missed. */
  watch(id: number): Watch {
    let wake!: () => void;
    const ended = new Promise<void>((resolve) => (wake = resolve));
    const set = this.waiting.get(id) ?? new Set();
    set.add(wake);
    this.waiting.set(id, set);
    return {
      async until(ms, signal) {
        const settled = new AbortController();
        try {
          await Promise.race([ended, pause(ms, AbortSignal.any([signal, settled.signal]))]);
        } finally {
          settled.abort();
        }
      },
      cancel: () => {
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id);
      },
    };
  }
}
