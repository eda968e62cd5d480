// What the identifier API's handlers, services and workers share within one process, built once
// at start (src/server/context.ts) and closed at stop. Nothing of this lives in module variables.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import type { BaremetalContext } from '../baremetal/context.js';
import type { Config } from '../config.js';
import type { Backoff } from '../core/backoff.js';
import { BatchesByKey } from '../core/serial.js';
import type { Database } from '../db/database.js';
import { type Lifecycles, builtInLifecycles, checkLifecycles } from './core/lifecycle.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PlacementContext } from '../placement/context.js';
import { type Inventories, loadInventories } from './inventories/registry.js';

/** The options the identifier API reads (its context keeps what it made of them, not the options). */
export type IdsOptions = Pick<Config, 'idsConfig' | 'idsLifecycles' | 'idsRetryBaseMs' | 'idsRetryMaxMs' | 'idsWorkerIntervalMs' | 'conductorId' | 'auth'>;

export interface IdsContext {
  database: Database;
  log: Logger;
  /** the external inventories of `--ids-config` */
  inventories: Inventories;
  /** the service-instance lifecycles: built in, and those of `--ids-lifecycles` */
  lifecycles: Lifecycles;
  /** waits between deliveries of an outbox entry: the bound doubles from --ids-retry-base-ms up to --ids-retry-max-ms */
  retry: Backoff;
  /** how often the outbox and lease-expiry workers look for work (--ids-worker-interval-ms) */
  workerIntervalMs: number;
  /** this process's name on the outbox entries it claims */
  workerName: string;
  metrics: Metrics;
  /** how requests are authenticated (--auth), for the OpenAPI document's security */
  auth: Config['auth'];
  /** PostgreSQL: this process's automatic allocations of one pool, in batches (services/automatic-allocations.ts) */
  poolClaims: BatchesByKey;
  /** the engines a service instance also reserves in: bare-metal nodes and Placement capacity (services/engine-holdings.ts) */
  baremetal: BaremetalContext;
  placement: PlacementContext;
  /** close what the context opened (the inventories' connections) */
  close(): Promise<void>;
}

/**
 * The lifecycles of `--ids-lifecycles` (a YAML file with a `lifecycles` mapping), checked; a
 * problem stops the start with the option, the file and the place in it named.
 */
export function loadLifecycles(file: string | null): Lifecycles {
  if (!file) return builtInLifecycles();
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`ids-lifecycles: cannot read the lifecycles file ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const isMapping = typeof doc === 'object' && doc !== null && !Array.isArray(doc);
  const keys = isMapping ? Object.keys(doc as object) : [];
  if (!isMapping || keys.some((k) => k !== 'lifecycles')) throw new Error(`ids-lifecycles: ${file}: must be a mapping with one key, "lifecycles"`);
  try {
    return checkLifecycles((doc as { lifecycles?: unknown }).lifecycles);
  } catch (err) {
    throw new Error(`ids-lifecycles: ${file}: ${(err as Error).message}`);
  }
}

export async function createIdsContext(
  config: IdsOptions,
  log: Logger,
  database: Database,
  metrics: Metrics,
  engines: { baremetal: BaremetalContext; placement: PlacementContext },
): Promise<IdsContext> {
  const lifecycles = loadLifecycles(config.idsLifecycles);
  const inventories = await loadInventories(config.idsConfig, log);
  return {
    database,
    log,
    inventories,
    lifecycles,
    retry: { baseMs: config.idsRetryBaseMs, maxMs: config.idsRetryMaxMs },
    workerIntervalMs: config.idsWorkerIntervalMs,
    workerName: `${config.conductorId}/ids-outbox`,
    metrics,
    auth: config.auth,
    poolClaims: new BatchesByKey(),
    ...engines,
    close: () => inventories.close(),
  };
}
