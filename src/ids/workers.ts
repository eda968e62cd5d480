// Background work of the identifier API: delivering outbox deallocations to external inventories
// (with backoff, in every process at once: claims never overlap) and releasing reservations whose
// lease ran out.
import type { Logger } from 'pino';
import type { BackgroundWorker } from '../server/workers.js';
import type { Services } from '../server/services.js';
import { type IdsRuntime, runtimeOf } from './runtime.js';
import { expireLeases } from './store/allocations.js';
import { type OutboxRow, claimDue, markDelivered, markFailed } from './store/outbox.js';

/** Run `tick` every `intervalMs` (after the previous run ends); stop waits for a run in flight. */
function periodic(name: string, intervalMs: number, log: Logger, tick: () => Promise<void>, onStop: () => Promise<void> = async () => {}): BackgroundWorker {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  const schedule = () => {
    if (!stopped) timer = setTimeout(run, intervalMs);
  };
  const run = () => {
    running = tick()
      .catch((err) => log.error({ err, worker: name }, 'worker run failed'))
      .finally(() => {
        running = null;
        schedule();
      });
  };
  return {
    name,
    start: () => schedule(),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await onStop();
    },
  };
}

async function deliver(services: Services, runtime: IdsRuntime, entry: OutboxRow, worker: string): Promise<void> {
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

export function createIdsWorkers(services: Services): BackgroundWorker[] {
  const { config, database, log } = services;
  const worker = `${config.conductorId}/ids-outbox`;
  const outbox = periodic(
    'ids-outbox',
    config.idsWorkerIntervalMs,
    log,
    async () => {
      const runtime = await runtimeOf(services);
      // The claim outlives the slowest delivery (a deallocate and a check, each with its limit).
      const maxTimeout = Math.max(1000, ...[...runtime.inventories.values()].map((e) => e.timeoutMs));
      for (;;) {
        const due = await claimDue(database, worker, 20, 2 * maxTimeout + 10_000);
        if (due.length === 0) return;
        await Promise.all(due.map((e) => deliver(services, runtime, e, worker)));
      }
    },
    async () => (await runtimeOf(services)).close(),
  );
  const leases = periodic('ids-lease-expiry', config.idsWorkerIntervalMs, log, async () => {
    const n = await expireLeases(database);
    if (n) log.info({ released: n }, 'expired reservations released');
  });
  return [outbox, leases];
}
