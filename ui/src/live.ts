// Live updates by polling: a view's loader runs when the view opens and again every refresh
// interval while the view is shown and the tab is visible. Never two loads of a view at once, and
// a slow load stretches the wait (the next load starts at least SLOW_FACTOR × its duration later),
// so on a large cloud the dashboard spends at most ~1/SLOW_FACTOR of its time loading. A loader
// that stopped at its time budget with work left (the first load of a large cloud) is run again
// at once, so the page fills in step by step instead of waiting out the interval.
import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api.js';

const SLOW_FACTOR = 5;
/** what a view shows before its first load (or a new key's) has answered */
const NOTHING_YET: Live<never> = { data: undefined, error: null };

export interface LiveSettings {
  /** ms between loads; 0 = live updates off (load once, and on demand) */
  refreshMs: number;
  /** each finished load tells the header when, and whether it failed */
  report(status: LiveStatus): void;
}

export interface LiveStatus {
  at: number;
  error: string | null;
}

export const LiveContext = createContext<LiveSettings>({ refreshMs: 3000, report: () => undefined });

export interface Live<T> {
  data: T | undefined;
  /** the last load's failure; `data` then stays what the last successful load gave */
  error: ApiError | Error | null;
}

/**
 * Keep `load()`'s answer fresh. `key` names what is loaded: when it changes (another pool chosen,
 * another token) the data is loaded anew at once.
 */
export function useLive<T>(load: (signal: AbortSignal) => Promise<T>, key: string, unfinished: (data: T) => boolean = () => false): Live<T> {
  const { refreshMs, report } = useContext(LiveContext);
  // The state names the key it was loaded for: after the key changes, the render before the
  // effect below runs must not show the previous key's data or error (another token's 401).
  const [state, setState] = useState<Live<T> & { key: string }>({ key, data: undefined, error: null });
  const loadRef = useRef(load);
  loadRef.current = load;
  const unfinishedRef = useRef(unfinished);
  unfinishedRef.current = unfinished;

  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let waitingForVisibility = false;

    const run = async () => {
      if (abort.signal.aborted) return;
      if (document.hidden) {
        waitingForVisibility = true;
        return;
      }
      const started = performance.now();
      try {
        const data = await loadRef.current(abort.signal);
        if (abort.signal.aborted) return;
        setState({ key, data, error: null });
        report({ at: Date.now(), error: null });
        if (unfinishedRef.current(data)) {
          timer = setTimeout(run, 0);
          return;
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        const error = err instanceof Error ? err : new Error(String(err));
        setState((s) => (s.key === key ? { ...s, error } : { key, data: undefined, error }));
        report({ at: Date.now(), error: error.message });
      }
      if (refreshMs > 0) timer = setTimeout(run, Math.max(refreshMs, SLOW_FACTOR * (performance.now() - started)));
    };
    const onVisible = () => {
      if (!document.hidden && waitingForVisibility) {
        waitingForVisibility = false;
        void run();
      }
    };
    document.addEventListener('visibilitychange', onVisible);
    void run();
    return () => {
      abort.abort();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [key, refreshMs]);

  return state.key === key ? state : NOTHING_YET;
}

/** Run `work` over `items` with at most `limit` at once. */
export async function mapLimit<I, O>(items: readonly I[], limit: number, work: (item: I) => Promise<O>): Promise<O[]> {
  const out: O[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
