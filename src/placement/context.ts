import type { Config } from '../config.js';
import type { Database } from '../db/database.js';

/** What Placement handlers get besides the request. One per mount (main port, dedicated port). */
export interface PlacementContext {
  database: Database;
  /** where this Placement is mounted ('' at a port's root, '/placement' on the main port), for links */
  prefix: string;
  config: Config;
}

/** The latest of some ISO timestamps, for `last-modified`; null (meaning now) when there are none. */
export function latest(timestamps: Iterable<string | null | undefined>): string | null {
  let best: string | null = null;
  for (const t of timestamps) if (t && (!best || t > best)) best = t;
  return best;
}
