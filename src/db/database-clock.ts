// "Now" for every allot process on one PostgreSQL database: the database server's clock. Leases
// (identifier reservations, outbox claims) and conductor heartbeats are written by one process and
// judged by another, so each host's own wall clock will not do: with one 8.6 s behind, its 4–6 s
// reservations were released at once by the others and their values handed out again (issue 33).
//
// The simplest design correct under skew without a round trip per statement: each process measures
// how far the database's clock is from its own monotonic clock (performance.now(), which no
// wall-clock skew or step moves) and reads "now" as that offset plus the monotonic time. So every
// expiry written and every "is it past due" compared is on the one database clock, off by at most
// half the round trip of the measurement (the shortest of a few samples: under a millisecond on a
// LAN). The measurement is repeated now and then (DATABASE_CLOCK_REFRESH_MS), so that drift, or a
// failover to a primary on another host, is followed. SQLite is one host: its process clock is
// the database's, and tests hand either dialect a clock they move instead.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { periodic } from '../background/periodic.js';
import type { Clock } from '../core/clock.js';

/** How often a process measures the database's clock again. */
export const DATABASE_CLOCK_REFRESH_MS = 60_000;

/** This host's two clocks: the monotonic one "now" is read on, and the wall clock the skew is reported against. */
export interface HostClocks {
  monotonicMs(): number;
  wallMs(): number;
}

const HOST_CLOCKS: HostClocks = { monotonicMs: () => performance.now(), wallMs: () => Date.now() };

/** Samples per measurement; the one with the shortest round trip is kept. */
const SAMPLES = 3;

export interface ClockMeasurement {
  /** the database's clock minus this process's wall clock, ms */
  skewMs: number;
  /** half the round trip of the measurement kept: the most the offset can be wrong by, ms */
  uncertaintyMs: number;
}

export class DatabaseClock implements Clock {
  /** the database's time (epoch ms) minus performance.now(), and half the round trip it was measured in; null until measured */
  private kept: { offsetMs: number; uncertaintyMs: number } | null = null;

  /**
   * @param readMs reads the database's clock, epoch ms
   * @param host this host's clocks (tests hand in clocks they move)
   */
  constructor(
    private readonly readMs: () => Promise<number>,
    private readonly host: HostClocks = HOST_CLOCKS,
  ) {}

  nowMs(): number {
    if (this.kept === null) throw new Error("the database's clock has not been measured yet");
    return Math.floor(this.host.monotonicMs() + this.kept.offsetMs);
  }

  nowIso(): string {
    return new Date(this.nowMs()).toISOString();
  }

  /**
   * Measure the offset to the database's clock (again). A new measurement replaces the kept one
   * when it is as precise, or when the two disagree by more than both can be wrong (the database's
   * clock moved: a failover, a step); a slow one (a loaded server) that agrees changes nothing.
   * On a failure the kept offset stays.
   */
  async measure(): Promise<ClockMeasurement> {
    let best: { offsetMs: number; uncertaintyMs: number } | null = null;
    for (let i = 0; i < SAMPLES; i++) {
      const sent = this.host.monotonicMs();
      const databaseMs = await this.readMs();
      const received = this.host.monotonicMs();
      const uncertaintyMs = (received - sent) / 2;
      if (!best || uncertaintyMs < best.uncertaintyMs) best = { offsetMs: databaseMs - (sent + received) / 2, uncertaintyMs };
    }
    const kept = this.kept;
    if (!kept || best!.uncertaintyMs <= kept.uncertaintyMs || Math.abs(best!.offsetMs - kept.offsetMs) > best!.uncertaintyMs + kept.uncertaintyMs)
      this.kept = best;
    return { skewMs: Math.round(this.nowMs() - this.host.wallMs()), uncertaintyMs: Math.ceil(this.kept!.uncertaintyMs) };
  }
}

/** The db-clock worker: `measure` again DATABASE_CLOCK_REFRESH_MS after the last measurement ended; a failed one is logged, and the kept offset stays until one succeeds. */
export function databaseClockWorker(measure: () => Promise<ClockMeasurement>, log: Logger) {
  return periodic({ name: 'db-clock', intervalMs: DATABASE_CLOCK_REFRESH_MS, log }, async () => void (await measure()));
}
