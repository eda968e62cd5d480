// Token validations kept for a bounded time and in bounded number, as keystonemiddleware keeps
// them: a cached token costs one Map lookup per request; an entry is dropped when its time is up
// (so a revoked token is refused at the latest one cache time after revocation) and, when the
// cache is full, the oldest entry goes first. Requests that bring the same unknown token at once
// wait for one validation instead of sending one each.
import type { Clock } from '../core/clock.js';

export interface Cached<V> {
  value: V;
  /** epoch ms after which the entry is not used */
  until: number;
}

export class TokenCache<V> {
  private readonly entries = new Map<string, Cached<V>>();
  private readonly pending = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached value, if its time is not up. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= this.clock.nowMs()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * The cached value, or what `load` finds (kept until the time it says). One load per key runs
   * at a time; a load that throws caches nothing.
   */
  async getOrLoad(key: string, load: () => Promise<Cached<V>>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = (async () => {
        try {
          const loaded = await load();
          this.set(key, loaded);
          return loaded.value;
        } finally {
          this.pending.delete(key);
        }
      })();
      this.pending.set(key, pending);
    }
    return pending;
  }

  private set(key: string, entry: Cached<V>): void {
    if (entry.until <= this.clock.nowMs()) return;
    this.entries.delete(key);
    // Insertion order is age: when full, the oldest entry makes room. Entries live minutes, so a
    // hot token pushed out early costs one more validation, no more.
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }
}
