// This process as a conductor, in the database: registering (once, before it takes work under
// its name), beating its heartbeat, saying goodbye, and taking over a dead conductor's work with
// one compare-and-set per item (store/allocations.ts, store/conductors.ts); and reading them for
// /v1/conductors, /v1/drivers and the nodes' `conductor` filter.
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { takeOverAllocation } from '../store/allocations.js';
import {
  type ConductorPage,
  type ConductorRow,
  aliveConductors,
  findConductor,
  heartbeat,
  listConductors,
  registerConductor,
  takeOverReservation,
  unregisterConductor,
} from '../store/conductors.js';

export { CONDUCTOR_SORT_COLUMNS, type ConductorRow } from '../store/conductors.js';

/** Register as a conductor (once per process) before accepting work under our name. */
export function ensureRegistered(ctx: BaremetalContext): Promise<void> {
  ctx.registration.done ??= transaction(ctx.database, (tx) => registerConductor(tx, ctx.conductorId)).catch((err) => {
    ctx.registration.done = null;
    throw err;
  });
  return ctx.registration.done;
}

export function beat(ctx: BaremetalContext): Promise<void> {
  return transaction(ctx.database, (tx) => heartbeat(tx, ctx.conductorId));
}

/** A graceful stop: the others may take over at once instead of after the heartbeat timeout. */
export function unregister(ctx: BaremetalContext): Promise<void> {
  return transaction(ctx.database, (tx) => unregisterConductor(tx, ctx.conductorId));
}

/** Take an allocation over from a dead conductor; false when another conductor was faster. */
export function takeOverAllocationOf(ctx: BaremetalContext, allocationId: number, dead: string | null): Promise<boolean> {
  return transaction(ctx.database, (tx) => takeOverAllocation(tx, allocationId, dead, ctx.conductorId));
}

/** Take a node's lock over from a dead conductor; false when another conductor was faster. */
export function takeOverNodeOf(ctx: BaremetalContext, nodeId: number, dead: string): Promise<boolean> {
  return transaction(ctx.database, (tx) => takeOverReservation(tx, nodeId, dead, ctx.conductorId));
}

/** The hostnames of the conductors whose heartbeat is within the timeout. */
export function aliveConductorHosts(ctx: BaremetalContext): Promise<string[]> {
  return aliveConductors(ctx.database, ctx.config.heartbeatTimeout);
}

export function getConductor(ctx: BaremetalContext, hostname: string): Promise<ConductorRow | undefined> {
  return findConductor(ctx.database, hostname);
}

/** Every conductor, alive or not, one page in the requested order. */
export function listConductorPage(ctx: BaremetalContext, page: ConductorPage): Promise<ConductorRow[]> {
  return listConductors(ctx.database, page);
}
