// Latency summaries and outcome counting for one benchmark step.
import type { HttpResult } from './http.js';

export interface LatencySummary {
  n: number;
  mean_ms: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Nearest-rank percentiles of client-side latencies (ms). */
export function summarize(samples: number[]): LatencySummary | null {
  if (samples.length === 0) return null;
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, mean_ms: round(mean), p50_ms: round(at(0.5)), p90_ms: round(at(0.9)), p99_ms: round(at(0.99)), max_ms: round(s[s.length - 1]!) };
}

/** Counts HTTP outcomes of a step: statuses, 5xx, requests that got no answer. */
export class Outcomes {
  readonly statuses: Record<string, number> = {};
  fivexx = 0;
  noAnswer = 0;
  readonly examples: string[] = [];

  add(r: HttpResult, what: string): void {
    const key = r.status === 0 ? 'no_answer' : String(r.status);
    this.statuses[key] = (this.statuses[key] ?? 0) + 1;
    if (r.status === 0) this.noAnswer++;
    if (r.status >= 500) this.fivexx++;
    // Keep a few unexpected answers verbatim so a report can show them (409 is expected).
    if ((r.status === 0 || (r.status >= 400 && r.status !== 409)) && this.examples.length < 3) {
      this.examples.push(`${what} -> ${r.status || r.error}: ${r.body.slice(0, 300)}`);
    }
  }

  toJSON() {
    return { statuses: this.statuses, http_5xx: this.fivexx, no_answer: this.noAnswer, ...(this.examples.length ? { examples: this.examples } : {}) };
  }
}

export { round };
