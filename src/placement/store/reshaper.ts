// POST /reshaper: move inventories and the allocations on them between providers in one
// transaction (e.g. VCPU moving from a compute node to its NUMA children).
//   1. every named provider gets the union of its current and desired inventories, so old and
//      new allocations both have somewhere to be while they move;
//   2. the allocations are replaced as by POST /allocations, capacity checked;
//   3. each provider is cut down to exactly the desired inventories, which must fit what is now
//      allocated on them.
import { placementDomainError } from '../core/domain-errors.js';
import { lockRows } from '../../db/sql-helpers.js';
import type { Tx } from '../../db/database.js';
import { type ConsumerAllocations, type HeldConsumerChange, writeAllocations } from './allocations.js';
import { type InventoryRecord, checkRemovalsUnused, currentInventories, resolveInventoryClasses, writeInventoryRows } from './inventories.js';
import type { NameCache } from './names.js';
import { bumpProvider, checkGeneration, findProvider } from './providers.js';

export interface ProviderReshape {
  providerUuid: string;
  generation: number;
  inventories: Map<string, InventoryRecord>;
}

/** Reshape; the held consumers whose allocations moved, for their holders to follow. */
export async function reshape(
  tx: Tx,
  names: NameCache,
  providers: ProviderReshape[],
  allocations: ConsumerAllocations[],
  follows: (heldBy: string) => boolean,
): Promise<HeldConsumerChange[]> {
  // Consumers are locked before providers everywhere; do the same here.
  const consumerUuids = [...new Set(allocations.map((a) => a.consumerUuid))].sort();
  if (consumerUuids.length && tx.dialect === 'postgres') {
    await tx.db.selectFrom('consumers').select('id').where('uuid', 'in', consumerUuids).orderBy('uuid').forUpdate().execute();
  }
  const found = [];
  for (const p of providers) {
    const provider = await findProvider(tx, p.providerUuid);
    if (!provider) throw placementDomainError('reshape_provider_missing', { uuid: p.providerUuid }, `no resource provider ${p.providerUuid}`);
    found.push({ ...p, provider });
  }
  await lockRows(
    tx,
    'resource_providers',
    found.map((f) => f.provider.id),
  );

  const plans = [];
  for (const { provider: stale, generation, inventories } of found) {
    const provider = (await findProvider(tx, stale.uuid))!;
    checkGeneration(provider, generation);
    const current = await currentInventories(tx, provider.id);
    const union = new Map(inventories);
    for (const [name, inv] of current) if (!union.has(name)) union.set(name, inv);
    const classIds = await resolveInventoryClasses(tx, provider, union);
    await writeInventoryRows(tx, provider, current, union, classIds);
    await bumpProvider(tx, provider);
    plans.push({ provider, desired: inventories, classIds });
  }

  // A reshape moves any consumer's allocations (Placement's contract), held ones too when their
  // holder follows reshapes (reported to it); one held by anyone else is refused.
  const held = await writeAllocations(tx, names, allocations, { reshaping: follows });

  for (const { provider, desired, classIds } of plans) {
    const union = await currentInventories(tx, provider.id);
    checkRemovalsUnused(provider, union, desired);
    await writeInventoryRows(tx, provider, union, desired, classIds);
    await bumpProvider(tx, (await findProvider(tx, provider.uuid))!);
  }
  return held;
}
