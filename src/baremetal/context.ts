// What the bare-metal handlers, services and workers of one process share, made once at start
// (server/context.ts): the database (and its clock), the configuration, this process's name as a
// conductor, the allocation backend, the queue of allocations this process works, the timers of
// the node transitions it finishes and the requests waiting for allocations to end. The workers
// (workers/index.ts) attach the work to the queue and the timers when they start.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../core/clock.js';
import type { Database, Tx } from '../db/database.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PlacementContext } from '../placement/context.js';
import { type AllocationBackend, backendNamed } from './services/backend.js';
import { AllocationEnds } from './workers/allocation-ends.js';
import { WorkQueue } from './workers/queue.js';
import { TransitionTimers } from './workers/timers.js';

/**
 * Another service of this process that holds bare-metal allocations (the identifier API's
 * service instances, services/held-allocations.ts). The bare-metal API refuses to delete a held
 * allocation, but the node operations Ironic defines to release one — tearing the node down,
 * removing its instance_uuid, deleting it in maintenance — keep working; then the holder is told,
 * in that transaction, so it never points at a node it no longer holds.
 */
export interface AllocationHolder {
  allocationReleased(tx: Tx, release: HeldAllocationRelease): Promise<void>;
}

export interface HeldAllocationRelease {
  /** `service-instance/<id>` */
  heldBy: string;
  allocationUuid: string;
  nodeUuid: string;
  /** what released it, e.g. "node torn down" */
  reason: string;
}

/** The options bare metal reads. */
export type BaremetalOptions = Pick<
  Config,
  | 'auth'
  | 'enforceNewDefaults'
  | 'conductorId'
  | 'baremetalBackend'
  | 'allocationWorkers'
  | 'allocationDelay'
  | 'transitionTime'
  | 'heartbeatInterval'
  | 'heartbeatTimeout'
  | 'takeoverInterval'
  | 'maxPreferWait'
  | 'nodeLockWait'
>;

export interface BaremetalContext {
  readonly database: Database;
  readonly clock: Clock;
  readonly config: BaremetalOptions;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** this process's name among the conductors (`reservation`, `conductor_affinity`) */
  readonly conductorId: string;
  readonly backend: AllocationBackend;
  /** ids of the allocations this process works (services/allocations.ts → workers/allocation-worker.ts) */
  readonly allocations: WorkQueue<number>;
  /** requests waiting for an allocation to leave `allocating` (`Prefer: wait`), woken when this process ends one */
  readonly allocationEnds: AllocationEnds;
  /** ids of the nodes whose transition this conductor finishes */
  readonly transitions: TransitionTimers;
  /** this conductor's row, written once before it takes work under its name */
  readonly registration: { done: Promise<void> | null };
  /** registered at start by the service that holds allocations (server/context.ts) */
  allocationHolder: AllocationHolder | null;
}

export function createBaremetalContext(
  config: BaremetalOptions,
  database: Database,
  log: Logger,
  placement: PlacementContext,
  metrics: Metrics,
): BaremetalContext {
  return {
    database,
    clock: database.clock,
    config,
    log: log.child({ api: 'baremetal', conductor: config.conductorId }),
    metrics,
    conductorId: config.conductorId,
    backend: backendNamed(config.baremetalBackend, placement),
    allocations: new WorkQueue(config.allocationWorkers),
    allocationEnds: new AllocationEnds(),
    transitions: new TransitionTimers(),
    registration: { done: null },
    allocationHolder: null,
  };
}
