// Inventories: what a provider offers per resource class. Every change bumps the provider's
// generation. A class that still has allocations cannot be removed (inventory_in_use). Capacity
// may drop below what is allocated, as in Placement: an operator lowering `total` or
// `allocation_ratio` on a full host must be able to; the provider is then over capacity until
// consumers leave, and new claims on it fail.
import type { InventoryLimits } from '../../core/capacity.js';
import { placementDomainError } from '../core/domain-errors.js';
import type { Db, Tx } from '../../db/database.js';

import { idsByName } from './names.js';
import { type ProviderView, bumpProvider, checkGeneration, requireProvider } from './providers.js';

export type InventoryRecord = InventoryLimits;

export interface ProviderInventories {
  generation: number;
  /** resource class name → inventory */
  inventories: Map<string, InventoryRecord>;
  lastModified: string | null;
}

const FIELDS = ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const;

function record(row: InventoryRecord): InventoryRecord {
  return {
    total: row.total,
    reserved: row.reserved,
    min_unit: row.min_unit,
    max_unit: row.max_unit,
    step_size: row.step_size,
    allocation_ratio: row.allocation_ratio,
  };
}

async function inventoryRows(db: Db, providerId: number) {
  return db.db
    .selectFrom('inventories as i')
    .innerJoin('resource_classes as rc', 'rc.id', 'i.resource_class_id')
    .select(['rc.name', 'i.resource_class_id', ...FIELDS.map((f) => `i.${f}` as const), 'i.used', 'i.updated_at'])
    .where('i.resource_provider_id', '=', providerId)
    .orderBy('rc.name')
    .execute();
}

export async function readInventories(db: Db, uuid: string): Promise<ProviderInventories> {
  const provider = await requireProvider(db, uuid);
  const rows = await inventoryRows(db, provider.id);
  let lastModified: string | null = null;
  for (const r of rows) if (!lastModified || r.updated_at > lastModified) lastModified = r.updated_at;
  return { generation: provider.generation, inventories: new Map(rows.map((r) => [r.name, record(r)])), lastModified };
}

export type InventoryChange =
  | { kind: 'replace-all'; inventories: Map<string, InventoryRecord> }
  | { kind: 'add'; resourceClass: string; inventory: InventoryRecord }
  | { kind: 'update'; resourceClass: string; inventory: InventoryRecord }
  | { kind: 'delete'; resourceClass: string }
  | { kind: 'delete-all' };

type CurrentInventory = Map<string, InventoryRecord & { resource_class_id: number; used: number }>;

const notFound = (provider: ProviderView, resourceClass: string) =>
  placementDomainError('inventory_not_found', { provider: provider.uuid, class: resourceClass }, `provider ${provider.uuid} has no ${resourceClass} inventory`);

export async function currentInventories(db: Db, providerId: number): Promise<CurrentInventory> {
  return new Map((await inventoryRows(db, providerId)).map((r) => [r.name, { ...record(r), resource_class_id: r.resource_class_id, used: r.used }]));
}

/** The inventories a change asks for, given what is there now. */
function desiredAfter(provider: ProviderView, current: CurrentInventory, change: InventoryChange): Map<string, InventoryRecord> {
  const desired = new Map<string, InventoryRecord>([...current].map(([name, r]) => [name, record(r)]));
  switch (change.kind) {
    case 'replace-all':
      return new Map(change.inventories);
    case 'add':
      if (current.has(change.resourceClass)) {
        throw placementDomainError(
          'inventory_exists',
          { provider: provider.uuid, class: change.resourceClass },
          `provider ${provider.uuid} has ${change.resourceClass} inventory`,
        );
      }
      desired.set(change.resourceClass, change.inventory);
      return desired;
    case 'update':
      if (!current.has(change.resourceClass)) throw notFound(provider, change.resourceClass);
      desired.set(change.resourceClass, change.inventory);
      return desired;
    case 'delete':
      if (!current.has(change.resourceClass)) throw notFound(provider, change.resourceClass);
      desired.delete(change.resourceClass);
      return desired;
    case 'delete-all':
      return new Map();
  }
}

/** resource class name → id for every desired class; unknown_inventory_class for names that are not classes. */
export async function resolveInventoryClasses(db: Db, provider: ProviderView, desired: Map<string, InventoryRecord>): Promise<Map<string, number>> {
  const classIds = await idsByName(db, 'resource_classes', [...desired.keys()]);
  const unknown = [...desired.keys()].filter((n) => !classIds.has(n));
  if (unknown.length) {
    throw placementDomainError('unknown_inventory_class', { provider: provider.uuid, names: unknown.sort() }, `no resource classes ${unknown.join(', ')}`);
  }
  return classIds;
}

/**
 * inventory_in_use when going from `current` to `desired` removes a class that has allocations.
 * Every such class is named, in the order Placement names them (by resource class id).
 */
export function checkRemovalsUnused(provider: ProviderView, current: CurrentInventory, desired: Map<string, InventoryRecord>): void {
  const removedInUse = [...current.entries()]
    .filter(([name, r]) => !desired.has(name) && r.used > 0)
    .sort(([, a], [, b]) => a.resource_class_id - b.resource_class_id)
    .map(([name]) => name);
  if (removedInUse.length) {
    throw placementDomainError(
      'inventory_in_use',
      { provider: provider.uuid, classes: removedInUse },
      `provider ${provider.uuid} has allocations of ${removedInUse.join(', ')}`,
    );
  }
}

/** Make the provider's inventory rows say `desired` (insert, update and delete as needed). */
export async function writeInventoryRows(
  tx: Tx,
  provider: ProviderView,
  current: CurrentInventory,
  desired: Map<string, InventoryRecord>,
  classIds: Map<string, number>,
): Promise<void> {
  const now = tx.clock.nowIso();
  const gone = [...current].filter(([name]) => !desired.has(name)).map(([, r]) => r.resource_class_id);
  if (gone.length) await tx.db.deleteFrom('inventories').where('resource_provider_id', '=', provider.id).where('resource_class_id', 'in', gone).execute();
  for (const [name, inv] of desired) {
    const before = current.get(name);
    if (!before) {
      await tx.db
        .insertInto('inventories')
        .values({ resource_provider_id: provider.id, resource_class_id: classIds.get(name)!, ...inv, created_at: now, updated_at: now })
        .execute();
    } else if (FIELDS.some((f) => before[f] !== inv[f])) {
      await tx.db
        .updateTable('inventories')
        .set({ ...inv, updated_at: now })
        .where('resource_provider_id', '=', provider.id)
        .where('resource_class_id', '=', before.resource_class_id)
        .execute();
    }
  }
}

/**
 * Apply one inventory change to a locked provider inside `tx`: check the classes exist and that no
 * allocation is left without room, write, and bump the generation (the client's when given).
 */
export async function changeInventories(tx: Tx, provider: ProviderView, change: InventoryChange, clientGeneration?: number): Promise<number> {
  checkGeneration(provider, clientGeneration);
  const current = await currentInventories(tx, provider.id);
  const desired = desiredAfter(provider, current, change);
  const classIds = await resolveInventoryClasses(tx, provider, desired);
  checkRemovalsUnused(provider, current, desired);
  await writeInventoryRows(tx, provider, current, desired, classIds);
  return bumpProvider(tx, provider, { clientGeneration });
}
