// The one source of "now", so tests of leases and heartbeats can move time instead of sleeping.
let offsetMs = 0;

export const nowMs = (): number => Date.now() + offsetMs;
export const nowIso = (): string => new Date(nowMs()).toISOString();

/** Tests only: shift the clock by `ms`. */
export function advanceClock(ms: number): void {
  offsetMs += ms;
}
