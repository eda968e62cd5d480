import type { Database } from '../db/database.js';
import type { IdsRuntime } from './runtime.js';

/** What the identifier API's handlers and workers share within one process. */
export interface IdsContext {
  database: Database;
  runtime: IdsRuntime;
}
