// What the identifier API's handlers, services and workers share within one process, built once
// at start (src/server/context.ts) and closed at stop. Nothing of this lives in module variables.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Backoff } from '../core/backoff.js';
import type { Database } from '../db/database.js';
import { type Inventories, loadInventories } from './inventories/registry.js';

export interface IdsContext {
  database: Database;
  log: Logger;
  /** the external inventories of `--ids-config` */
  inventories: Inventories;
  /** waits between deliveries of an outbox entry: the bound doubles from --ids-retry-base-ms up to --ids-retry-max-ms */
  retry: Backoff;
  /** how often the outbox and lease-expiry workers look for work (--ids-worker-interval-ms) */
  workerIntervalMs: number;
  /** this process's name on the outbox entries it claims */
  workerName: string;
  /** close what the context opened (the inventories' connections) */
  close(): Promise<void>;
}

export async function createIdsContext(config: Config, log: Logger, database: Database): Promise<IdsContext> {
  const inventories = await loadInventories(config.idsConfig, log);
  return {
    database,
    log,
    inventories,
    retry: { baseMs: config.idsRetryBaseMs, maxMs: config.idsRetryMaxMs },
    workerIntervalMs: config.idsWorkerIntervalMs,
    workerName: `${config.conductorId}/ids-outbox`,
    close: () => inventories.close(),
  };
}
