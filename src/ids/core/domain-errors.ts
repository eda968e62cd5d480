// Every error the identifier domain raises (core, stores, services, the inventory clients): a
// stable code and the facts it carries, nothing of HTTP. src/ids/errors.ts is the one table that
// turns each code into its problem on the wire; its type makes a code left out a compile error.
import { DomainError } from '../../core/errors.js';
import type { InstanceAction, InstanceState } from './lifecycle.js';
import type { WireValue } from './pool-space.js';

/** One refused item of an import: where it was, what it asked for, why not. */
export interface ImportConflict {
  index: number;
  value: unknown;
  error: DomainError;
}

export interface IdsDomainErrors {
  // pools
  pool_not_found: { pool: string };
  pool_exists: { pool: string };
  pool_created_concurrently: { pool: string };
  pool_not_empty: { pool: string; allocations: number };
  pool_change_strands_allocations: { count: number; allocations: Array<{ id: string; owner: string; purpose: string; value: WireValue }> };
  invalid_pool_definition: { reason: string };
  // values and allocations
  invalid_value: { reason: string };
  pool_exhausted: { pool: string; size: string };
  value_outside_pool: { pool: string; value: WireValue };
  value_excluded: { pool: string; value: WireValue };
  value_in_use: { pool: string; value: WireValue; allocation_id: string; owner: string; purpose: string };
  value_crosses_static_band: { pool: string; value: WireValue };
  idempotency_mismatch: { pool: string; owner: string; purpose: string; held: WireValue; allocation_id: string };
  /** the request at `index` of a batch failed with `error`; nothing of the batch was kept */
  in_batch: { index: number; error: DomainError };
  allocation_not_found: { id: string };
  not_reserved: Record<string, never>;
  /** the client's version (If-Match) is not the current one */
  version_mismatch: { current: number };
  /** a compare-and-set under the resource's lock lost, more often than the retries allow */
  changed_concurrently: { resource: 'pool' | 'allocation' | 'instance' };
  /** the transaction helper's (src/core/errors.ts): retries after races ran out */
  concurrent_update: { what: string };
  // imports
  import_conflicts: { conflicts: ImportConflict[] };
  import_repeats_owner: { owner: string; purpose: string };
  import_overlaps_item: { item: number };
  owner_holds_other_value: { owner: string; pool: string };
  /** beyond the detailed conflicts of one import: the value is simply not free */
  value_not_free: Record<string, never>;
  // allocation specs
  spec_not_found: { spec: string };
  spec_exists: { spec: string };
  spec_created_concurrently: { spec: string };
  spec_in_use: { spec: string };
  key_attribute_allocated: { attribute: string; key_attribute: string };
  // external inventories
  unknown_inventory: { inventory: string };
  inventory_lacks_operation: { inventory: string; operation: string; attribute?: string };
  inventory_timeout: { inventory: string; operation: string; timeout_ms: number };
  inventory_failed: { inventory: string; operation: string; reason: string };
  // service instances
  instance_not_found: { id: string };
  /** a new instance names an allocation spec that does not exist */
  unknown_spec: { spec: string };
  instance_exists: { id: string };
  instance_created_concurrently: { id: string };
  attribute_read_only: { attribute: string; from: string };
  action_not_allowed: { action: InstanceAction; state: InstanceState; allowed: readonly InstanceState[] };
  candidate_not_validated: { state: string };
  no_rollback_set: { state: string };
  changed_during_validation: Record<string, never>;
  missing_lookup_key: { attribute: string; key_attribute: string };
  missing_owner_attribute: { attribute: string; owner_attribute: string; inventory: string };
  lookup_not_found: { inventory: string; attribute: string; key: unknown };
  // outbox
  outbox_entry_not_found: { id: number };
  outbox_entry_delivered: { id: number; state: string };
}

export type IdsErrorCode = keyof IdsDomainErrors;

/** A domain error of the identifier domain, its facts checked against its code. */
export function idsDomainError<C extends IdsErrorCode>(code: C, params: IdsDomainErrors[C], message: string = code): DomainError {
  return new DomainError(code, params, message);
}

/** Is this a domain error of the identifier domain with this code? (narrows its params) */
export function isIdsError<C extends IdsErrorCode>(err: unknown, code: C): err is DomainError & { params: IdsDomainErrors[C] } {
  return err instanceof DomainError && err.code === code;
}
