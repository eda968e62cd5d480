import type { Config } from '../config.js';
import type { Database } from '../db/database.js';

/** What Placement handlers share within one process. */
export interface PlacementContext {
  database: Database;
  config: Config;
}

/** The latest of some ISO timestamps, for `last-modified`; null (meaning now) when there are none. */
export function latest(timestamps: Iterable<string | null | undefined>): string | null {
  let best: string | null = null;
  for (const t of timestamps) if (t && (!best || t > best)) best = t;
  return best;
}
