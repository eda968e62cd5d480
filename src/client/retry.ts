// The read-modify-write loop every Placement client writes by hand: read the resource with its
// generation, change it, write it back naming that generation; when another writer got there
// first (409 placement.concurrent_update), read again and apply the change again.
import { AllotApiError } from './errors.js';
import { sleep } from './http.js';

/** Errors that mean "someone else changed it since you read it": read again and retry. */
export const CONFLICT_CODES: readonly string[] = [
  'placement.concurrent_update', // a provider or consumer generation moved
  'ids.precondition_failed', // If-Match named an old version
  'ids.concurrent_update', // the server lost races too many times on its own
];

export interface RetryOptions {
  /** tries in all, the first included (default 5) */
  attempts?: number;
  /** first pause between tries, ms, doubled each time with jitter, at most 1 s (default 20) */
  delayMs?: number;
  /** which errors are worth another try (default: the codes in CONFLICT_CODES) */
  retryOn?: (err: AllotApiError) => boolean;
  /** called before each new try, e.g. to count or log them */
  onRetry?: (err: AllotApiError, attempt: number) => void;
}

/**
 * Run `work` (which must read what it changes, so each try sees the latest generation) until it
 * succeeds, fails otherwise, or runs out of attempts; the last conflict is then thrown.
 */
export async function retryOnConflict<T>(work: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? 5);
  const delay = options.delayMs ?? 20;
  const retryOn = options.retryOn ?? ((err) => err.code !== null && CONFLICT_CODES.includes(err.code));
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (err) {
      if (!(err instanceof AllotApiError) || !retryOn(err) || attempt >= attempts) throw err;
      options.onRetry?.(err, attempt);
      // jitter keeps racing writers from meeting again at the same instant
      const pause = Math.min(1000, delay * 2 ** (attempt - 1));
      await sleep(pause / 2 + Math.random() * (pause / 2));
    }
  }
}
