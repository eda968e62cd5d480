// Every error the identifier domain raises (core, stores, services, the inventory clients): a
// stable code and the facts it carries, nothing of HTTP. src/ids/errors.ts is the one table that
// turns each code into its problem on the wire; its type makes a code left out a compile error.
import { DomainError } from '../../core/errors.js';

/** A value as the API writes it (pool-space.ts WireValue): an integer, an address or a prefix. */
type Value = number | string;

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
  pool_change_strands_allocations: { count: number; allocations: Array<{ id: string; owner: string; purpose: string; value: Value }> };
  invalid_pool_definition: { reason: string };
  /** item `index` of `field` (ranges, excluded, static) is not a range, or does not fit with the others */
  malformed_range: { field: string; index: number; value: unknown; reason: string };
  // values and allocations
  invalid_value: { reason: string };
  pool_exhausted: { pool: string; size: string };
  value_outside_pool: { pool: string; value: Value };
  value_excluded: { pool: string; value: Value };
  value_in_use: { pool: string; value: Value; allocation_id: string; owner: string; purpose: string };
  value_crosses_static_band: { pool: string; value: Value };
  /** `differs`: the request's parameters that are not those of the request that made the allocation */
  idempotency_mismatch: { pool: string; owner: string; purpose: string; held: Value; allocation_id: string; differs: readonly string[] };
  /** the request at `index` of a batch failed with `error`; nothing of the batch was kept */
  in_batch: { index: number; error: DomainError };
  /** validating a service instance, the value of `attribute` could not be had: `error` says why */
  in_attribute: { attribute: string; error: DomainError };
  /** creating instance `id` (and validating it in the same request) failed with `error`; the instance exists */
  in_instance: { id: string; error: DomainError };
  allocation_not_found: { id: string };
  /** a `?value=` that is not a value of the pool's kind (an integer, an address, a prefix) */
  invalid_value_parameter: { value: string; reason: string };
  /** no live allocation of the pool has this value; `overlapping`: one that holds part of it */
  value_not_allocated: { pool: string; value: Value; overlapping: { allocation_id: string; value: Value } | null };
  /** releasing the allocation would free a value that attribute sets of a live instance refer to */
  value_held_by_instance: { pool: string; value: Value; allocation_id: string; instance: string; attribute: string; sets: readonly string[] };
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
  /** the inventory answered that it has nothing left to allocate */
  inventory_exhausted: { inventory: string; attribute: string; reason: string };
  // service instances
  instance_not_found: { id: string };
  /** a new instance names an allocation spec that does not exist */
  unknown_spec: { spec: string };
  instance_exists: { id: string };
  attribute_read_only: { attribute: string; from: string };
  action_not_allowed: { action: string; state: string; allowed: readonly string[] };
  /** a new instance names a lifecycle that is neither built in nor loaded from --ids-lifecycles */
  unknown_lifecycle: { lifecycle: string; known: readonly string[] };
  candidate_not_validated: { state: string };
  no_rollback_set: { state: string };
  changed_during_validation: Record<string, never>;
  /** an attribute used as an inventory's owner key is longer than an owner key can be */
  owner_key_too_long: { attribute: string; owner_attribute: string; length: number; max: number };
  missing_lookup_key: { attribute: string; key_attribute: string };
  missing_owner_attribute: { attribute: string; owner_attribute: string; inventory: string };
  lookup_not_found: { inventory: string; attribute: string; key: unknown };
  // what service instances hold in the other engines (nodes, capacity) and projects
  /** a `from: node` attribute: no node can be had now (the bare-metal API's reason) */
  node_unavailable: { reason: string };
  /** a `from: capacity` attribute: no provider can take the resources now */
  capacity_unavailable: { reason: string };
  /** a spec attribute names another (`in_tree_of`) that is not of the kind it needs */
  invalid_attribute_reference: { attribute: string; refers_to: string; reason: string };
  /** the instance cannot let go of a node it holds now (deployed, or moving): terminate refused */
  node_in_use: { attribute: string | null; node: string; allocation: string; reason: string };
  /** a caller without ids:all_projects named another project than its own */
  project_not_allowed: { project: string | null };
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
