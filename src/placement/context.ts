// What Placement's handlers and services share within one process, made once at start
// (server/context.ts): the database, the configuration, the cache of names seen, and the index of
// providers that allocation candidates are searched in.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Metrics } from '../metrics/metrics.js';
import { NameCache } from './store/names.js';
import { ProviderIndex } from './store/provider-index.js';

export interface PlacementContext {
  database: Database;
  config: Config;
  names: NameCache;
  index: ProviderIndex;
  metrics: Metrics;
  /** stop following the database (the index's notifications) */
  close(): Promise<void>;
}

export function createPlacementContext(database: Database, config: Config, log: Logger, metrics: Metrics): PlacementContext {
  const names = new NameCache();
  const index = new ProviderIndex(database, names, log);
  return { database, config, names, index, metrics, close: () => index.close() };
}

/** The latest of some ISO timestamps, for `last-modified`; null (meaning now) when there are none. */
export function latest(timestamps: Iterable<string | null | undefined>): string | null {
  let best: string | null = null;
  for (const t of timestamps) if (t && (!best || t > best)) best = t;
  return best;
}
