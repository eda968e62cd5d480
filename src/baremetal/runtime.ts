// One process's bare-metal machinery, shared by the HTTP routes and the background worker: the
// conductor identity, the allocation backend, the allocation queue, the transition timers and
// the heartbeat/take-over tasks. One per process, made at start (server/context.ts).
import type { Logger } from 'pino';
import { backoffDelay, sleep } from '../core/backoff.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PlacementContext } from '../placement/context.js';
import type { BackgroundWorker } from '../background/worker.js';
import { AllocationWorker } from './allocation-worker.js';
import { type AllocationBackend, backendNamed } from './backend.js';
import { ConductorTasks } from './conductor.js';
import { reconcileMirror } from './mirror.js';
import { transaction } from '../db/transaction.js';
import { registerConductor } from './store/conductors.js';
import { TransitionTimers } from './transitions.js';

export class BaremetalRuntime {
  readonly database: Database;
  readonly config: Config;
  readonly log: Logger;
  readonly conductorId: string;
  readonly backend: AllocationBackend;
  readonly allocations: AllocationWorker;
  readonly transitions: TransitionTimers;
  readonly conductor: ConductorTasks;
  readonly metrics: Metrics;
  private registered: Promise<void> | null = null;

  constructor(services: { config: Config; database: Database; log: Logger; placement: PlacementContext; metrics: Metrics }) {
    this.database = services.database;
    this.metrics = services.metrics;
    this.config = services.config;
    this.log = services.log.child({ api: 'baremetal', conductor: services.config.conductorId });
    this.conductorId = services.config.conductorId;
    this.backend = backendNamed(services.config.baremetalBackend, services.placement);
    this.allocations = new AllocationWorker(this, this.log);
    this.transitions = new TransitionTimers(this, this.log);
    this.conductor = new ConductorTasks(this, this.log);
  }

  /** Register as a conductor (once) before accepting work under our name. */
  ensureRegistered(): Promise<void> {
    this.registered ??= transaction(this.database, (tx) => registerConductor(tx, this.conductorId)).catch((err) => {
      this.registered = null;
      throw err;
    });
    return this.registered;
  }

  /** The background worker `allot serve` runs (see src/server/workers.ts). */
  worker(): BackgroundWorker {
    let started: Promise<void> | null = null;
    let stopping = false;
    return {
      name: 'baremetal-conductor',
      start: () => {
        // Keeps trying while the database is away; a conductor that never starts would leave
        // its allocations to the others' take-over, and beat no heartbeat.
        started = (async () => {
          for (let attempt = 1; !stopping; attempt++) {
            try {
              if (this.backend.name === 'placement') await reconcileMirror(this);
              await this.conductor.start();
              this.log.info({ backend: this.backend.name }, 'bare-metal conductor started');
              return;
            } catch (err) {
              this.log.error({ err, attempt }, 'bare-metal conductor failed to start; trying again');
              await sleep(backoffDelay(attempt, { baseMs: 200, maxMs: 5_000 }));
            }
          }
        })();
      },
      stop: async () => {
        stopping = true;
        await started;
        await this.conductor.stop();
        await this.allocations.stop();
        await this.transitions.stop();
        await this.conductor.unregister().catch((err) => this.log.warn({ err }, 'could not unregister the conductor'));
      },
    };
  }
}
