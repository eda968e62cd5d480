// Background work a process does besides answering HTTP (allocation workers, take-over of work
// whose owner died, retries of external deallocations). Each domain contributes its workers here.
import { baremetalRuntime } from '../baremetal/runtime.js';
import { createIdsWorkers } from '../ids/workers.js';
import type { Services } from './services.js';

export interface BackgroundWorker {
  name: string;
  /** begin working; must not throw (log instead) */
  start(): void;
  /** finish or abandon in-flight work and resolve when nothing runs any more */
  stop(): Promise<void>;
}

export function createWorkers(services: Services): BackgroundWorker[] {
  return [baremetalRuntime(services).worker(), ...createIdsWorkers(services)];
}
