// The background work of a process: each domain's workers, started once the database is ready,
// and (PostgreSQL) the planner's statistics kept as current as the tables they describe and the
// database's clock measured again now and then.
import { periodic } from '../background/periodic.js';
import type { BackgroundWorker } from '../background/worker.js';
import { createBaremetalWorker } from '../baremetal/workers/index.js';
import { databaseClockWorker } from '../db/database-clock.js';
import { refreshStaleStatistics } from '../db/sql-helpers.js';
import { createIdsWorkers } from '../ids/workers.js';
import type { AppContext } from './context.js';

export function createWorkers(app: AppContext): BackgroundWorker[] {
  const workers = [createBaremetalWorker(app.baremetal), ...createIdsWorkers(app.ids)];
  if (app.database.dialect !== 'postgres') return workers;
  const statistics = periodic({ name: 'db-statistics', intervalMs: app.config.statisticsInterval, log: app.log }, () => refreshStaleStatistics(app.database));
  const measureClock = app.database.measureClock;
  if (!measureClock) return [...workers, statistics];
  return [...workers, statistics, databaseClockWorker(measureClock, app.log)];
}
