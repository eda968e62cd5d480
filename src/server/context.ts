// The one context of a process, built once at start: configuration, log, database, readiness,
// access control, and each domain's own state (the bare-metal conductor, the identifier API's
// external inventories, …). Handlers and workers get their domain's part; `close()` stops what
// the context started. Nothing of this lives in module-level variables.
import type { Logger } from 'pino';
import { createAccessControl } from '../auth/access.js';
import { BaremetalRuntime } from '../baremetal/runtime.js';
import type { BaremetalContext } from '../baremetal/routes/common.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { AccessControl } from '../http/pipeline.js';
import { type IdsContext, createIdsContext } from '../ids/context.js';
import { type PlacementContext, createPlacementContext } from '../placement/context.js';
import { HealthChecks, Readiness } from './health.js';

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
  /** release what the context holds (after the workers stopped; the database is closed by its owner) */
  close(): Promise<void>;
}

export async function createContext(config: Config, log: Logger, database: Database): Promise<AppContext> {
  const readiness = new Readiness();
  const access = createAccessControl(config, log, database.clock);
  const ids = await createIdsContext(config, log, database);
  const placement = createPlacementContext(database, config, log);
  return {
    config,
    log,
    database,
    readiness,
    health: new HealthChecks(database, readiness, config.healthTimeout),
    access,
    placement,
    baremetal: { rt: new BaremetalRuntime({ config, database, log, placement }) },
    ids,
    close: async () => {
      await placement.close();
      await ids.close();
    },
  };
}
