// The one backoff of allot: exponential with full jitter (a random wait between 0 and the
// exponential bound), so that racers who failed together do not retry together. Used by the
// transaction helper, the workers, the outbox and start-up.

export interface Backoff {
  /** bound of the first wait, ms */
  baseMs: number;
  /** no wait is longer than this, ms */
  maxMs: number;
}

/** The exponential bound for the n-th retry (1-based): base · 2^(n-1), capped at max. */
export function backoffBound(attempt: number, b: Backoff): number {
  return Math.min(b.maxMs, b.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
}

/** A wait before the n-th retry: uniformly random up to the bound. */
export function backoffDelay(attempt: number, b: Backoff, random: () => number = Math.random): number {
  return random() * backoffBound(attempt, b);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
