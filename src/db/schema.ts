// Row types of every table, as Kysely sees them. Timestamps are ISO-8601 UTC strings (portable
// between SQLite and PostgreSQL, and they sort); booleans are 0/1 integers for the same reason.
import type { Generated, Insertable, Selectable } from 'kysely';

export interface ResourceClassTable {
  id: Generated<number>;
  name: string;
  is_standard: number;
  created_at: string;
  updated_at: string;
}

export interface TraitTable {
  id: Generated<number>;
  name: string;
  is_standard: number;
  created_at: string;
  updated_at: string;
}

export interface ResourceProviderTable {
  id: Generated<number>;
  uuid: string;
  name: string;
  generation: number;
  parent_provider_id: number | null;
  /** null only for the instant between INSERT and the UPDATE that points a root at itself */
  root_provider_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface InventoryTable {
  id: Generated<number>;
  resource_provider_id: number;
  resource_class_id: number;
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
  created_at: string;
  updated_at: string;
}

export interface ProviderTraitTable {
  resource_provider_id: number;
  trait_id: number;
}

export interface AggregateTable {
  id: Generated<number>;
  uuid: string;
}

export interface ProviderAggregateTable {
  resource_provider_id: number;
  aggregate_id: number;
}

export interface ConsumerTypeTable {
  id: Generated<number>;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface ConsumerTable {
  id: Generated<number>;
  uuid: string;
  project_id: string;
  user_id: string;
  generation: number;
  consumer_type_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface AllocationTable {
  id: Generated<number>;
  resource_provider_id: number;
  consumer_id: number;
  resource_class_id: number;
  used: number;
  created_at: string;
  updated_at: string;
}

export interface Schema {
  resource_classes: ResourceClassTable;
  traits: TraitTable;
  resource_providers: ResourceProviderTable;
  inventories: InventoryTable;
  resource_provider_traits: ProviderTraitTable;
  aggregates: AggregateTable;
  resource_provider_aggregates: ProviderAggregateTable;
  consumer_types: ConsumerTypeTable;
  consumers: ConsumerTable;
  allocations: AllocationTable;
  // identifier pools (src/ids)
  ids_pools: IdsPoolTable;
  ids_free_ranges: IdsFreeRangeTable;
  ids_allocations: IdsAllocationTable;
  ids_allocation_specs: IdsAllocationSpecTable;
  ids_service_instances: IdsServiceInstanceTable;
  ids_external_holdings: IdsExternalHoldingTable;
  ids_outbox: IdsOutboxTable;
}

export type ResourceProviderRow = Selectable<ResourceProviderTable>;
export type InventoryRow = Selectable<InventoryTable>;
export type NewInventory = Insertable<InventoryTable>;
export type ConsumerRow = Selectable<ConsumerTable>;

// ---------------------------------------------------------------------------------------------
// Identifier pools (src/ids, migration 002-ids). Values are 32-digit hex keys (see
// src/ids/core/values.ts); counts that may exceed 2^53 (IPv6) are decimal strings.

export interface IdsPoolTable {
  id: Generated<number>;
  name: string;
  kind: string;
  /** the parsed value space, JSON (src/ids/core/pool-space.ts serializeSpace) */
  definition: string;
  strategy: string;
  description: string;
  metadata: string;
  generation: number;
  total_count: string;
  used_count: string;
  allocation_count: number;
  /** where `next_after_last` continues from */
  last_key: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdsFreeRangeTable {
  pool_id: number;
  band: string;
  first_key: string;
  last_key: string;
  size_key: string;
  /** log2 of the largest aligned power-of-two block inside the span */
  aligned: number;
}

export interface IdsAllocationTable {
  id: string;
  pool_id: number;
  first_key: string;
  last_key: string;
  block_log2: number;
  owner: string;
  purpose: string;
  state: string;
  expires_at: string | null;
  version: number;
  source: string;
  request_hash: string;
  metadata: string;
  created_at: string;
  updated_at: string;
}

export interface IdsAllocationSpecTable {
  id: Generated<number>;
  name: string;
  description: string;
  attributes: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface IdsServiceInstanceTable {
  id: string;
  service_type: string;
  spec_id: number;
  lifecycle: string;
  state: string;
  version: number;
  candidate: string | null;
  candidate_validated: number;
  active: string | null;
  rollback: string | null;
  last_error: string | null;
  terminated_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdsExternalHoldingTable {
  id: Generated<number>;
  instance_id: string;
  attribute: string;
  inventory: string;
  owner_key: string;
  /** JSON of the value the inventory gave; null while the call is in flight or failed */
  value: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdsOutboxTable {
  id: Generated<number>;
  inventory: string;
  operation: string;
  owner_key: string;
  attribute: string;
  instance_id: string | null;
  value: string | null;
  state: string;
  attempts: number;
  next_attempt_at: string;
  claimed_by: string | null;
  claimed_until: string | null;
  last_error: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}
