// The external inventory plugin interface. An inventory is configured by name (see
// inventories/registry.ts) and offers any of: lookup (a value found by a key, e.g. router name → management
// IP), allocate-for-owner (the inventory owns allocation; the owner is the idempotency key, so
// asking again after a failure returns what the owner already got), has-allocation and
// deallocate (delivered through the durable outbox and retried until the inventory confirms).
import type { Logger } from 'pino';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export interface InventoryCall {
  /** the attribute being filled, e.g. `vlan_id` */
  attribute: string;
  /** the service instance asking (absent for calls not tied to one) */
  instanceId?: string;
  /** aborted when the call's time is up; pass it to fetch/queries */
  signal: AbortSignal;
}

export interface ExternalInventory {
  lookup?(key: string, call: InventoryCall): Promise<JsonValue | null>;
  allocateForOwner?(owner: string, call: InventoryCall): Promise<JsonValue>;
  hasAllocation?(owner: string, call: InventoryCall): Promise<boolean>;
  /** must succeed when the owner holds nothing (deallocation is retried and may repeat) */
  deallocate?(owner: string, call: InventoryCall): Promise<void>;
  close?(): Promise<void>;
}

export interface InventoryEnvironment {
  name: string;
  log: Logger;
}

/**
 * What a plugin module exports (as `default` or `createInventory`): build an inventory from the
 * options given in the configuration file.
 */
export type InventoryFactory = (options: Record<string, unknown>, env: InventoryEnvironment) => ExternalInventory | Promise<ExternalInventory>;

/** Thrown by inventories for an answer that will not get better by retrying (bad config, nonsense). */
export class InventoryError extends Error {
  override name = 'InventoryError';
}
