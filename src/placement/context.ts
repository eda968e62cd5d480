// What Placement's handlers and services share within one process, made once at start
// (server/context.ts): the database, the configuration, the cache of names seen, and the index of
// providers that allocation candidates are searched in.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database, Db, Tx } from '../db/database.js';
import type { Metrics } from '../metrics/metrics.js';
import type { HeldConsumerChange } from './store/allocations.js';
import { NameCache } from './store/names.js';
import { ProviderIndex } from './store/provider-index.js';

/**
 * Another service of this process that owns some resource providers outright (the bare-metal
 * service's node providers): Placement API clients may not write allocations on them. The owner
 * writes its own claims below the API, each consumer marked `held_by` its holder, so that clients
 * may not change those either (refused under the consumer's row lock, `consumer_held`).
 */
export interface ProviderOwner {
  /** for the error: "the bare-metal service" */
  readonly name: string;
  /** of these provider uuids, the ones this owner holds */
  owned(db: Db, providerUuids: readonly string[]): Promise<string[]>;
}

/**
 * Another service of this process that holds Placement consumers (the identifier API's service
 * instances, services/held-consumers.ts): API clients may not change them, but a reshape may move
 * their allocations, as Placement allows for any consumer; the holder is told, in the reshape's
 * transaction, so it never points at allocations that are no longer where it says. A consumer held
 * by anyone else (a bare-metal allocation's claim) a reshape may not change (`consumer_held`).
 */
export interface ConsumerHolder {
  /** is the consumer marked `held_by` this holder's (and so moved by a reshape, and told)? */
  holds(heldBy: string): boolean;
  consumerChanged(tx: Tx, change: HeldConsumerChange): Promise<void>;
}

/** The options Placement reads. */
export type PlacementOptions = Pick<Config, 'auth' | 'candidateStrategy' | 'maxCandidates' | 'candidateIndexReload'>;

export interface PlacementContext {
  database: Database;
  config: PlacementOptions;
  names: NameCache;
  index: ProviderIndex;
  /** registered at start by the services that own providers (server/context.ts) */
  owners: ProviderOwner[];
  /** registered at start by the service that holds consumers (server/context.ts) */
  consumerHolder: ConsumerHolder | null;
  metrics: Metrics;
  /** stop following the database (the index's notifications) */
  close(): Promise<void>;
}

export function createPlacementContext(database: Database, config: PlacementOptions, log: Logger, metrics: Metrics): PlacementContext {
  const names = new NameCache();
  const index = new ProviderIndex(database, names, { reloadMs: config.candidateIndexReload, log, metrics });
  return { database, config, names, index, owners: [], consumerHolder: null, metrics, close: () => index.close() };
}

/** The latest of some ISO timestamps, for `last-modified`; null (meaning now) when there are none. */
export function latest(timestamps: Iterable<string | null | undefined>): string | null {
  let best: string | null = null;
  for (const t of timestamps) if (t && (!best || t > best)) best = t;
  return best;
}
