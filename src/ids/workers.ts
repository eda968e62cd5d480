// Background work of the identifier API: delivering outbox deallocations to external inventories
// (with backoff, in every process at once: claims never overlap) and releasing reservations whose
// lease ran out.
import type { Logger } from 'pino';
import { periodic } from '../background/periodic.js';
import type { BackgroundWorker } from '../background/worker.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { IdsRuntime } from './runtime.js';
import { expireLeases } from './store/allocations.js';
import { type OutboxRow, claimDue, markDelivered, markFailed } from './store/outbox.js';

interface WorkerServices {
  config: Config;
  database: Database;
  log: Logger;
}

async function deliver(services: WorkerServices, runtime: IdsRuntime, entry: OutboxRow, worker: string): Promise<void> {
  const { database, config, log } = services;
  const call = { attribute: entry.attribute, ...(entry.instance_id ? { instanceId: entry.instance_id } : {}) };
  try {
    await runtime.call(entry.inventory, 'deallocate', entry.owner_key, call);
    // "Until the inventory confirms": when it can say whether the owner still holds something, ask.
    if (runtime.entry(entry.inventory).inventory.hasAllocation) {
      const still = await runtime.call<boolean>(entry.inventory, 'hasAllocation', entry.owner_key, call);
      if (still) throw new Error('the inventory still reports an allocation for this owner after deallocating');
    }
    await markDelivered(database, entry, worker);
    log.info({ outbox: entry.id, inventory: entry.inventory, owner: entry.owner_key }, 'deallocation delivered');
  } catch (err) {
    const message = (err as Error).message;
    await markFailed(database, entry, worker, message, config.idsRetryBaseMs, config.idsRetryMaxMs);
    log.warn({ outbox: entry.id, inventory: entry.inventory, attempts: entry.attempts + 1, err: message }, 'deallocation failed; will retry');
  }
}

export function createIdsWorkers(services: WorkerServices, runtime: IdsRuntime): BackgroundWorker[] {
  const { config, database, log } = services;
  const worker = `${config.conductorId}/ids-outbox`;
  // The claim outlives the slowest delivery (a deallocate and a check, each with its limit).
  const claimMs = 2 * Math.max(1000, ...[...runtime.inventories.values()].map((e) => e.timeoutMs)) + 10_000;
  const outbox = periodic({ name: 'ids-outbox', intervalMs: config.idsWorkerIntervalMs, log }, async () => {
    for (;;) {
      const due = await claimDue(database, worker, 20, claimMs);
      if (due.length === 0) return;
      await Promise.all(due.map((e) => deliver(services, runtime, e, worker)));
    }
  });
  const leases = periodic({ name: 'ids-lease-expiry', intervalMs: config.idsWorkerIntervalMs, log }, async () => {
    const n = await expireLeases(database);
    if (n) log.info({ released: n }, 'expired reservations released');
  });
  return [outbox, leases];
}
