// One deadline per request (`--request-deadline`). Each wait of a request on PostgreSQL is bounded
// on its own (a pooled connection, a new connection, a statement, the retries of a lost
// connection); bounded one after another they could add up past what a load balancer waits (a
// 40 s freeze of PostgreSQL was answered after 40.8 s). The pipeline runs each request under a
// deadline, and the database layer stops waiting when it passes: the request is answered 503
// `timeout` (or `commit_unknown` when its COMMIT had been sent: the outcome is then unknown).
//
// The deadline travels with the request's asynchronous context (AsyncLocalStorage), so no service
// or store passes it along. Work a request starts that outlives it (a bare-metal allocation handed
// to the worker, a timer) inherits that context: a deadline therefore binds only until its request
// is answered; from then on that work has the bounds of background work.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseFault } from './faults.js';

interface Deadline {
  /** performance.now() at which the request's time is up (monotonic: a clock step changes nothing) */
  readonly at: number;
  answered: boolean;
}

const current = new AsyncLocalStorage<Deadline>();

/** Run `work` (a request's handler) with time up at `at` (performance.now()); the deadline lifts once it settles. */
export async function withDeadline<T>(at: number, work: () => Promise<T>): Promise<T> {
  const deadline: Deadline = { at, answered: false };
  try {
    return await current.run(deadline, work);
  } finally {
    deadline.answered = true;
  }
}

/** The current request's deadline, to check later whether it has passed; null outside a request. */
export function currentDeadline(): Readonly<Deadline> | null {
  const deadline = current.getStore();
  return deadline && !deadline.answered ? deadline : null;
}

/** Milliseconds left before `deadline` passes (Infinity without one, or once its request was answered). */
export function msLeft(deadline: Readonly<Deadline> | null = currentDeadline()): number {
  return deadline && !deadline.answered ? deadline.at - performance.now() : Number.POSITIVE_INFINITY;
}

export function deadlinePassed(): DatabaseFault {
  return new DatabaseFault('timeout', 'The request ran out of time (--request-deadline) waiting for the database.');
}

/**
 * `wait`, given up when `deadline` passes first: then `giveUp` runs (to drop the connection or
 * hand back what arrives late) and the promise rejects with deadlinePassed(). Without a deadline,
 * or once its request was answered, `wait` alone decides.
 */
export function untilDeadline<T>(wait: Promise<T>, deadline: Readonly<Deadline> | null, giveUp: () => void): Promise<T> {
  if (!deadline) return wait;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      if (deadline.answered) return;
      giveUp();
      reject(deadlinePassed());
    }, msLeft(deadline));
  });
  return Promise.race([wait, expired]).finally(() => clearTimeout(timer));
}
