import type { Database } from '../db/database.js';
import type { IdsRuntime } from './runtime.js';

/** What the identifier API's handlers get besides the request. */
export interface IdsContext {
  database: Database;
  /** where the API is mounted ('/ids' on the main port), for Location and links */
  prefix: string;
  runtime: IdsRuntime;
}
