// Row types of every table, as Kysely sees them. Timestamps are ISO-8601 UTC strings (portable
// between SQLite and PostgreSQL, and they sort); booleans are 0/1 integers for the same reason.
import type { Generated, Selectable } from 'kysely';

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
  /** who holds this consumer's allocations besides Placement's clients (migration 013), or null */
  held_by: Generated<string | null>;
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

// ---- bare metal (src/baremetal) ------------------------------------------------------------
// JSON documents (instance_info, properties, …, candidate_nodes) are stored as JSON text.

export interface BaremetalConductorTable {
  id: Generated<number>;
  hostname: string;
  online: number;
  heartbeat_at: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalNodeTable {
  id: Generated<number>;
  uuid: string;
  name: string | null;
  driver: string;
  resource_class: string | null;
  provision_state: string;
  target_provision_state: string | null;
  provision_updated_at: string | null;
  power_state: string | null;
  target_power_state: string | null;
  maintenance: number;
  maintenance_reason: string | null;
  fault: string | null;
  instance_uuid: string | null;
  allocation_id: number | null;
  /** the conductor holding the node's lock (an allocation or a transition in progress) */
  reservation: string | null;
  last_error: string | null;
  owner: string | null;
  lessee: string | null;
  description: string | null;
  conductor_group: string;
  automated_clean: number | null;
  protected: number;
  protected_reason: string | null;
  retired: number;
  retired_reason: string | null;
  shard: string | null;
  instance_info: string;
  properties: string;
  extra: string;
  driver_info: string;
  network_data: string;
  /** the node's hardware interfaces that differ from fake-hardware's defaults */
  interfaces: string;
  inspection_started_at: string | null;
  inspection_finished_at: string | null;
  created_at: string;
  updated_at: string | null;
  chassis_id: number | null;
  /** what fake hardware records: 1 while the console is on */
  console_enabled: Generated<number>;
  raid_config: Generated<string>;
  target_raid_config: Generated<string>;
}

export interface BaremetalChassisTable {
  id: Generated<number>;
  uuid: string;
  description: string | null;
  extra: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalPortgroupTable {
  id: Generated<number>;
  uuid: string;
  name: string | null;
  node_id: number;
  address: string | null;
  mode: string;
  standalone_ports_supported: number;
  properties: string;
  internal_info: string;
  extra: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalPortTable {
  id: Generated<number>;
  uuid: string;
  address: string;
  node_id: number;
  portgroup_id: number | null;
  local_link_connection: string;
  pxe_enabled: number;
  physical_network: string | null;
  is_smartnic: number;
  internal_info: string;
  extra: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalDeployTemplateTable {
  id: Generated<number>;
  uuid: string;
  name: string;
  steps: string;
  extra: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalVolumeConnectorTable {
  id: Generated<number>;
  uuid: string;
  node_id: number;
  type: string;
  connector_id: string;
  extra: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalVolumeTargetTable {
  id: Generated<number>;
  uuid: string;
  node_id: number;
  volume_type: string;
  properties: string;
  boot_index: number;
  volume_id: string;
  extra: string;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalNodeTraitTable {
  node_id: number;
  trait: string;
}

export interface BaremetalAllocationTable {
  id: Generated<number>;
  uuid: string;
  name: string | null;
  node_id: number | null;
  resource_class: string | null;
  state: string;
  last_error: string | null;
  conductor_affinity: string | null;
  candidate_nodes: string;
  extra: string;
  owner: string | null;
  /** who holds this allocation besides the bare-metal API's clients (migration 013), or null */
  held_by: Generated<string | null>;
  created_at: string;
  updated_at: string | null;
}

export interface BaremetalAllocationTraitTable {
  allocation_id: number;
  trait: string;
}

export type BaremetalNodeRow = Selectable<BaremetalNodeTable>;
export type BaremetalAllocationRow = Selectable<BaremetalAllocationTable>;

// ---- all tables -----------------------------------------------------------------------------

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
  baremetal_conductors: BaremetalConductorTable;
  baremetal_nodes: BaremetalNodeTable;
  baremetal_node_traits: BaremetalNodeTraitTable;
  baremetal_allocations: BaremetalAllocationTable;
  baremetal_allocation_traits: BaremetalAllocationTraitTable;
  baremetal_chassis: BaremetalChassisTable;
  baremetal_portgroups: BaremetalPortgroupTable;
  baremetal_ports: BaremetalPortTable;
  baremetal_deploy_templates: BaremetalDeployTemplateTable;
  baremetal_volume_connectors: BaremetalVolumeConnectorTable;
  baremetal_volume_targets: BaremetalVolumeTargetTable;
  // identifier pools (src/ids)
  ids_pools: IdsPoolTable;
  ids_free_ranges: IdsFreeRangeTable;
  ids_allocations: IdsAllocationTable;
  ids_allocation_specs: IdsAllocationSpecTable;
  ids_service_instances: IdsServiceInstanceTable;
  ids_external_holdings: IdsExternalHoldingTable;
  ids_outbox: IdsOutboxTable;
  // readiness probes (server/health.ts, migration 005-health)
  allot_health: { id: number; checked_at: string };
}

// ---------------------------------------------------------------------------------------------
// Identifier pools (src/ids, migration 003-ids). Values are 32-digit hex keys (see
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
  /** the Keystone project that owns the pool; null: shared by every project */
  project_id: string | null;
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
  /** the Keystone project the spec belongs to; null: shared by every project (migration 013) */
  project_id: Generated<string | null>;
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
  /** JSON list of ForcedRelease (src/ids/store/service-instances.ts), or null */
  forced_releases: string | null;
  /** the create request's attributes as canonical JSON (migration 012); null for older instances */
  requested_attributes: string | null;
  /** the Keystone project the instance belongs to (migration 013), null for none */
  project_id: string | null;
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
