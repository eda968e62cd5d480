// The one context of a process, built once at start: configuration, log, database, readiness,
// access control, the metrics, and each domain's own state (the bare-metal conductor, the identifier API's
// external inventories, …). Handlers and workers get their domain's part; `close()` stops what
// the context started. Nothing of this lives in module-level variables.
import type { Logger } from 'pino';
import { createAccessControl } from '../auth/access.js';
import { type BaremetalContext, createBaremetalContext } from '../baremetal/context.js';
import { nodeProviderOwner } from '../baremetal/services/backend.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { IGNORE_WRITES } from '../db/transaction.js';
import { Metrics } from '../metrics/metrics.js';
import type { AccessControl } from '../http/pipeline.js';
import { type IdsContext, createIdsContext } from '../ids/context.js';
import { engineHolders } from '../ids/services/engine-holdings.js';
import { type PlacementContext, createPlacementContext } from '../placement/context.js';
import { HealthChecks, Readiness } from './health.js';
import { registerDatabaseGauges } from './metrics.js';

export interface AppContext {
  config: Config;
  log: Logger;
  database: Database;
  /** start-up progress: API requests are answered 503 until the database is ready */
  readiness: Readiness;
  health: HealthChecks;
  access: AccessControl;
  placement: PlacementContext;
  baremetal: BaremetalContext;
  ids: IdsContext;
  /** this process's Prometheus metrics (GET /metrics) */
  metrics: Metrics;
  /** release what the context holds (after the workers stopped; the database is closed by its owner) */
  close(): Promise<void>;
}

export async function createContext(config: Config, log: Logger, database: Database): Promise<AppContext> {
  const readiness = new Readiness();
  const access = createAccessControl(config, log, database.clock);
  const metrics = new Metrics();
  database.observer = {
    retried: (reason) => metrics.transactionRetries.inc({ reason }),
    batchCommitted: (size) => metrics.commitBatchSize.observe(size),
  };
  const placement = createPlacementContext(database, config, log, metrics);
  // the bare-metal node providers of the placement backend are the bare-metal service's alone
  if (config.baremetalBackend === 'placement') placement.owners.push(nodeProviderOwner);
  const baremetal = createBaremetalContext(config, database, log, placement, metrics);
  const ids = await createIdsContext(config, log, database, metrics, { baremetal, placement });
  // service instances hold nodes and capacity: those engines tell them what they release or move
  const holders = engineHolders();
  baremetal.allocationHolder = holders.allocations;
  placement.consumerHolder = holders.consumers;
  registerDatabaseGauges(metrics, { database, baremetal, ids }, log);
  return {
    config,
    log,
    database,
    readiness,
    health: new HealthChecks(database, readiness, config.healthTimeout),
    access,
    placement,
    baremetal,
    ids,
    metrics,
    close: async () => {
      await placement.close();
      await ids.close();
      database.observer = IGNORE_WRITES;
      metrics.close();
    },
  };
}
