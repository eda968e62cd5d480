// The background work of a process: each domain's workers, started once the database is ready.
import type { BackgroundWorker } from '../background/worker.js';
import { createIdsWorkers } from '../ids/workers.js';
import type { AppContext } from './context.js';

export function createWorkers(app: AppContext): BackgroundWorker[] {
  return [app.baremetal.rt.worker(), ...createIdsWorkers(app.ids)];
}
