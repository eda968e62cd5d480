// The background work of a process: each domain's workers, started once the database is ready,
// and (PostgreSQL) the planner's statistics kept as current as the tables they describe.
import { periodic } from '../background/periodic.js';
import type { BackgroundWorker } from '../background/worker.js';
import { createBaremetalWorker } from '../baremetal/workers/index.js';
import { refreshStaleStatistics } from '../db/sql-helpers.js';
import { createIdsWorkers } from '../ids/workers.js';
import type { AppContext } from './context.js';

export function createWorkers(app: AppContext): BackgroundWorker[] {
  const workers = [createBaremetalWorker(app.baremetal), ...createIdsWorkers(app.ids)];
  if (app.database.dialect !== 'postgres') return workers;
  const statistics = periodic({ name: 'db-statistics', intervalMs: app.config.statisticsInterval, log: app.log }, () => refreshStaleStatistics(app.database));
  return [...workers, statistics];
}
