// The one source of "now". Each process has one Clock, carried by its database handle (`db.clock`)
// so that every timestamp a store writes comes from it; tests of leases, heartbeats and take-over
// hand a ManualClock to the servers they start and move time instead of sleeping.

export interface Clock {
  /** milliseconds since the epoch */
  nowMs(): number;
  /** the same as an ISO 8601 string, as timestamps are stored */
  nowIso(): string;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowIso: () => new Date().toISOString(),
};

/** A clock that runs with the system clock, shifted by however far a test moved it. */
export class ManualClock implements Clock {
  private offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  nowIso(): string {
    return new Date(this.nowMs()).toISOString();
  }

  /** Move this clock forward by `ms`. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
