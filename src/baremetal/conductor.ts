// This process as a conductor: it registers with a heartbeat, resumes its own unfinished work on
// start, and periodically takes over the work of dead conductors (offline, or silent longer than
// the heartbeat timeout) with one compare-and-set per item:
//   UPDATE baremetal_allocations SET conductor_affinity = <me> WHERE id = ? AND conductor_affinity = <dead>
//   UPDATE baremetal_nodes SET reservation = <me> WHERE id = ? AND reservation = <dead>
// Only the winner of each compare-and-set resumes the item, so no work is done twice.
import type { Logger } from 'pino';
import { transaction } from '../db/transaction.js';
import type { BaremetalRuntime } from './runtime.js';
import { orphanedAllocations, ownAllocating, takeOverAllocation } from './store/allocations.js';
import { aliveConductors, heartbeat, orphanedReservations, ownReservations, takeOverReservation, unregisterConductor } from './store/conductors.js';

export class ConductorTasks {
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private takeoverTimer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly rt: BaremetalRuntime,
    private readonly log: Logger,
  ) {}

  /**
   * Register, resume what is ours, and keep beating. Each beat also picks up own work that is not
   * running here any more (an allocation whose worker gave up while the database was away), so
   * nothing of ours stays `allocating` for longer than a heartbeat interval after the database
   * is back.
   */
  async start(): Promise<void> {
    await this.rt.ensureRegistered();
    await this.resumeOwn();
    const { heartbeatInterval, takeoverInterval } = this.rt.config;
    const beat = async () => {
      await transaction(this.rt.database, (tx) => heartbeat(tx, this.rt.conductorId));
      await this.resumeOwn();
    };
    this.heartbeatTimer = setInterval(() => this.serially(beat, 'heartbeat'), heartbeatInterval);
    if (takeoverInterval > 0) {
      this.takeoverTimer = setInterval(() => this.serially(() => this.takeOver(), 'take-over'), takeoverInterval);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.takeoverTimer) clearInterval(this.takeoverTimer);
    await this.current;
  }

  /** After the workers stopped: tell the others they may take over now instead of after the timeout. */
  async unregister(): Promise<void> {
    await transaction(this.rt.database, (tx) => unregisterConductor(tx, this.rt.conductorId));
  }

  /** Periodic tasks run one at a time and never overlap a stop. */
  private serially(task: () => Promise<unknown>, what: string): void {
    if (this.stopped) return;
    this.current = this.current.then(() => (this.stopped ? undefined : task())).catch((err) => this.log.error({ err }, `${what} failed`));
  }

  /** Allocations left `allocating` with our affinity and not worked here, nodes whose lock we hold. */
  private async resumeOwn(): Promise<void> {
    const allocations = (await ownAllocating(this.rt.database, this.rt.conductorId)).filter((id) => this.rt.allocations.enqueue(id));
    const nodes = await ownReservations(this.rt.database, this.rt.conductorId);
    // a lock we held for an allocation is stale now (the allocation is retried from scratch);
    // one held for a transition is finished: completeTransition handles both
    const scheduled = nodes.filter((id) => this.rt.transitions.schedule(id));
    if (allocations.length || scheduled.length) this.log.info({ allocations: allocations.length, nodes: scheduled.length }, 'resumed own unfinished work');
  }

  /** One take-over pass. Public so that tests and `allot` tooling can run it on demand. */
  async takeOver(): Promise<{ allocations: number; nodes: number }> {
    const me = this.rt.conductorId;
    const alive = [...new Set([...(await aliveConductors(this.rt.database, this.rt.config.heartbeatTimeout)), me])];
    let allocations = 0;
    for (const orphan of await orphanedAllocations(this.rt.database, alive)) {
      if (await transaction(this.rt.database, (tx) => takeOverAllocation(tx, orphan.id, orphan.conductor_affinity, me))) {
        allocations++;
        this.rt.allocations.enqueue(orphan.id);
      }
    }
    let nodes = 0;
    for (const orphan of await orphanedReservations(this.rt.database, alive)) {
      if (await transaction(this.rt.database, (tx) => takeOverReservation(tx, orphan.id, orphan.reservation, me))) {
        nodes++;
        this.rt.transitions.schedule(orphan.id);
      }
    }
    if (allocations || nodes) this.log.info({ allocations, nodes }, 'took over work of dead conductors');
    this.rt.metrics.baremetalTakeovers.inc({ kind: 'allocation' }, allocations);
    this.rt.metrics.baremetalTakeovers.inc({ kind: 'node' }, nodes);
    return { allocations, nodes };
  }
}
