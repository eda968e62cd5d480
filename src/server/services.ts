import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { HealthChecks, Readiness } from './health.js';

/** What every API and worker shares within one process. */
export interface Services {
  config: Config;
  database: Database;
  log: Logger;
  /** start-up progress: API requests are answered 503 until the database is ready */
  readiness: Readiness;
  health: HealthChecks;
}
