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
  /** sum of allocations.used for this provider and class, maintained by allocation writes */
  used: Generated<number>;
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
}

export type ResourceProviderRow = Selectable<ResourceProviderTable>;
export type InventoryRow = Selectable<InventoryTable>;
export type NewInventory = Insertable<InventoryTable>;
export type ConsumerRow = Selectable<ConsumerTable>;
