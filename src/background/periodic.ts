// The one periodic-task runner: run a task every `intervalMs`, measured from the end of the
// previous run (runs never overlap), log its failures and go on, and on stop wait for a run in
// flight. A task that must survive database faults simply fails this round and runs next time.
import type { Logger } from 'pino';
import type { BackgroundWorker } from './worker.js';

export interface PeriodicOptions {
  name: string;
  intervalMs: number;
  log: Logger;
  /** run once at start instead of after the first interval */
  runAtStart?: boolean;
  /** called after the last run, on stop */
  onStop?: () => Promise<void>;
}

export function periodic(options: PeriodicOptions, task: () => Promise<void>): BackgroundWorker & { runNow(): Promise<void> } {
  const { name, intervalMs, log } = options;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  const schedule = (delay: number) => {
    if (!stopped) timer = setTimeout(run, delay);
  };
  const run = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    running ??= task()
      .catch((err) => log.error({ err, worker: name }, `${name} failed`))
      .finally(() => {
        running = null;
        schedule(intervalMs);
      });
    return running;
  };
  return {
    name,
    start: () => schedule(options.runAtStart ? 0 : intervalMs),
    /** Run now (or join the run in flight); the next run is an interval after this one ends. */
    runNow: () => (stopped ? Promise.resolve() : run()),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await options.onStop?.();
    },
  };
}
