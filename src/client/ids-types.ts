// Request and response bodies of allot's identifier API (`/ids/v1`), from src/ids/schemas.ts and
// the OpenAPI document (GET /ids/v1/openapi.json), which are built from the same schemas.

/** an integer (integer pools) or an address / CIDR prefix (address and prefix pools) */
export type Value = number | string;
/** `42`, `"100-200"`, `{lower, upper}`, `"10.0.0.0/24"`, `"10.0.0.5"`, `"10.0.0.10-10.0.0.20"` */
export type RangeItem = Value | { lower: Value; upper: Value };
export type PoolKind = 'integer' | 'address' | 'prefix';
export type Strategy = 'lowest' | 'highest' | 'random' | 'next_after_last';

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface PageQuery {
  /** 1–1000 (default 100) */
  limit?: number;
  cursor?: string;
}

export interface PoolCreate {
  name: string;
  kind: PoolKind;
  ranges: RangeItem[];
  excluded?: RangeItem[];
  static?: RangeItem[];
  prefix_length?: number;
  exclude_network_and_broadcast?: boolean;
  strategy?: Strategy;
  description?: string;
  metadata?: Record<string, unknown>;
  /** the Keystone project owning the pool; absent or null: shared */
  project_id?: string | null;
}

export type PoolUpdate = Partial<Omit<PoolCreate, 'name' | 'kind' | 'exclude_network_and_broadcast' | 'project_id'>>;

/**
 * A count of a pool's utilization: a number while the pool's total is at most 2^53 − 1, a decimal
 * string for a larger pool (an IPv6 address pool of a /75 or more); every count of one pool has
 * the same type.
 */
export type Count = number | string;

/** What a pool holds, in values (integer and address pools) or child prefixes of its prefix_length (prefix pools). */
export interface Utilization {
  total: Count;
  used: Count;
  free: Count;
  allocations: number;
  largest_free_block: Count;
  used_percent: number;
  static_total: Count;
}

export interface Pool {
  name: string;
  kind: PoolKind;
  /** the Keystone project owning the pool; null: shared by every project */
  project_id: string | null;
  family: 'ipv4' | 'ipv6' | null;
  ranges: Array<{ lower: Value; upper: Value }>;
  excluded: Array<{ lower: Value; upper: Value }>;
  static: Array<{ lower: Value; upper: Value }>;
  prefix_length: number | null;
  strategy: Strategy;
  description: string;
  metadata: Record<string, unknown>;
  /** also the ETag */
  generation: number;
  utilization: Utilization;
  created_at: string;
  updated_at: string;
}

export interface AllocationRequest {
  owner: string;
  /** owner + purpose is the idempotency key (default "") */
  purpose?: string;
  value?: Value;
  count?: number;
  prefix_length?: number;
  strategy?: Strategy;
  /** a reservation that ends by itself unless confirmed */
  ttl_seconds?: number;
  metadata?: Record<string, unknown>;
}

export interface Allocation {
  id: string;
  pool: string;
  owner: string;
  purpose: string;
  value: Value;
  last_value: Value;
  count: number;
  prefix_length?: number;
  state: 'allocated' | 'reserved';
  expires_at: string | null;
  /** also the ETag */
  version: number;
  source: 'api' | 'import' | 'service-instance';
  metadata: Record<string, unknown>;
  dry_run?: boolean;
  created_at: string;
  updated_at: string;
}

export interface AllocationUpdate {
  /** confirm a reservation */
  state?: 'allocated';
  /** extend a reservation to now + this many seconds */
  ttl_seconds?: number;
  metadata?: Record<string, unknown>;
}

export interface AllocationListQuery extends PageQuery {
  pool?: string;
  owner?: string;
  purpose?: string;
  state?: 'allocated' | 'reserved';
}

/** A pool's allocations: besides the filters of every list, `value` (the allocation holding it; a prefix: those holding part of it). */
export interface PoolAllocationListQuery extends Omit<AllocationListQuery, 'pool'> {
  value?: Value;
}

/** A release: `force` releases even a value that attribute sets of a live service instance refer to. */
export interface ReleaseOptions extends Guard {
  force?: boolean;
}

export interface BatchItem extends AllocationRequest {
  pool: string;
}

export interface BatchResult {
  allocations: Allocation[];
  dry_run?: boolean;
}

export interface FreeRange {
  first: Value;
  last: Value;
  size: string;
  band: 'auto' | 'static';
}

export interface ImportItem {
  value: Value;
  owner: string;
  purpose?: string;
  count?: number;
  prefix_length?: number;
  metadata?: Record<string, unknown>;
}

export interface ImportOutcome {
  imported: number;
  unchanged: number;
  conflicts: Array<{ index: number; value: Value; code: string; detail: string; held_by?: Record<string, unknown> }>;
}

export type SpecAttribute =
  | { from: 'pool'; pool: string; strategy?: Strategy; count?: number; prefix_length?: number }
  | { from: 'lookup'; inventory: string; key_attribute: string }
  | { from: 'inventory'; inventory: string; owner_attribute?: string }
  | NodeSpecAttribute
  | CapacitySpecAttribute;

/** A bare-metal node, allocated as `POST /baremetal/v1/allocations` would (owner: the instance's project). */
export interface NodeSpecAttribute {
  from: 'node';
  resource_class: string;
  /** the node must have every one */
  traits?: string[];
  /** nodes (uuids or names) the node is chosen among */
  candidate_nodes?: string[];
}

/** Placement capacity for the instance as consumer, on providers chosen as `GET /allocation_candidates` would. */
export interface CapacitySpecAttribute {
  from: 'capacity';
  /** resource class → amount */
  resources: Record<string, number>;
  /** as Placement's `required`: `TRAIT`, `!TRAIT` (forbidden), `in:A,B` (one of) */
  required?: string[];
  /** as Placement's `member_of`: `uuid`, `in:uuid,uuid` (one of), `!uuid` (not in) */
  member_of?: string[];
  /** a node attribute of the spec: only providers in the tree of that node's resource provider */
  in_tree_of?: string;
}

export interface SpecCreate {
  name: string;
  description?: string;
  attributes: Record<string, SpecAttribute>;
  /** the Keystone project the spec belongs to; absent or null: every project's */
  project_id?: string | null;
}

export interface Spec extends SpecCreate {
  project_id: string | null;
  version: number;
  [field: string]: unknown;
}

/** A `from: node` attribute's value: the node and the bare-metal allocation that holds it. */
export interface NodeValue {
  node: string;
  name: string | null;
  /** the allocation's uuid at `/baremetal/v1/allocations` */
  allocation: string;
}

/** A `from: capacity` attribute's value: the Placement consumer (the instance's id) and its allocations. */
export interface CapacityValue {
  consumer: string;
  /** provider uuid → its resources, as `allocations` in Placement's answers */
  allocations: Record<string, { resources: Record<string, number> }>;
}

/**
 * Something an instance holds, in whichever engine, with `href`: where it is in its own API
 * (`/ids/v1/allocations/<id>`, `/baremetal/v1/allocations/<uuid>`, `/placement/allocations/<consumer>`).
 * `attribute` null: no set names it any more and it is being released.
 */
export type Holding =
  | { attribute: string | null; source: 'pool'; value: Value; href: string }
  | { attribute: string | null; source: 'inventory'; value: unknown; href: null }
  | { attribute: string | null; source: 'node'; value: NodeValue; href: string }
  | { attribute: string | null; source: 'capacity'; value: CapacityValue; href: string };

/**
 * What was released while a set referred to it, since the last validation: a pool value released
 * with `?force=true` (still named in the sets), or a node or capacity another API released or a
 * reshape took away (taken out of the sets; `reason` says what).
 */
export type ForcedRelease =
  | { source: 'pool'; allocation_id: string; pool: string; attribute: string; value: Value; sets: AttributeSetName[]; released_at: string }
  | {
      source: 'node' | 'capacity';
      /** a node's bare-metal allocation */
      allocation_id?: string;
      attribute: string;
      value: NodeValue | CapacityValue;
      sets: AttributeSetName[];
      reason: string;
      released_at: string;
    };

export type AttributeSetName = 'candidate' | 'active' | 'rollback';

/** The built-in lifecycles' states; a lifecycle loaded from --ids-lifecycles has its own. */
export type InstanceState = 'start' | 'up' | 'update' | 'deallocating' | 'terminated' | (string & {});

export interface InstanceCreate {
  allocation_spec: string;
  attributes: Record<string, unknown>;
  /** client-chosen id: creation becomes idempotent */
  id?: string;
  service_type?: string;
  /** simple (default), simple_with_deallocation, or one the server loaded from --ids-lifecycles */
  lifecycle?: string;
  /** the Keystone project it belongs to (default: the caller's); another project's only with ids:all_projects */
  project_id?: string | null;
  /** validate at once: reserve every attribute, all or nothing */
  validate?: boolean;
  /** then promote the validated candidate set to active (needs `validate`) */
  promote?: boolean;
}

export interface Instance {
  id: string;
  project_id: string | null;
  service_type: string;
  allocation_spec: string;
  lifecycle: string;
  state: InstanceState;
  version: number;
  candidate_attributes: Record<string, unknown> | null;
  candidate_validated: boolean;
  active_attributes: Record<string, unknown> | null;
  rollback_attributes: Record<string, unknown> | null;
  last_error: string | null;
  forced_releases: ForcedRelease[];
  pending_deallocations: number;
  /** everything it holds now, in every engine */
  holdings: Holding[];
  created_at: string;
  updated_at: string;
  terminated_at: string | null;
  [field: string]: unknown;
}

export interface InstanceListQuery extends PageQuery {
  state?: InstanceState;
  service_type?: string;
}

export interface OutboxEntry {
  id: number;
  inventory: string;
  operation: string;
  owner: string;
  attribute: string;
  instance_id: string | null;
  state: 'pending' | 'done';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  [field: string]: unknown;
}

export interface InventoryInfo {
  name: string;
  type: string;
  timeout_ms: number;
  operations: string[];
  outbox: { pending: number; done: number };
}

/** If-Match: the version (ETag) the change was based on */
export interface Guard {
  ifMatch?: number;
}
