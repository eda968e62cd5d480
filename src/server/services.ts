import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';

/** What every API and worker shares within one process. */
export interface Services {
  config: Config;
  database: Database;
  log: Logger;
}
