// Request and response bodies of the Placement API (from the Placement API reference, at the
// newest microversion allot serves, 1.39). Fields introduced later than 1.0 are optional here,
// with the microversion that brought them.

export type Uuid = string;
/** a resource class name → an amount */
export type Resources = Record<string, number>;

export interface Link {
  rel: string;
  href: string;
}

export interface ResourceProvider {
  uuid: Uuid;
  name: string;
  generation: number;
  /** 1.14+ */
  parent_provider_uuid?: Uuid | null;
  /** 1.14+ */
  root_provider_uuid?: Uuid;
  links: Link[];
}

export interface ProviderCreate {
  name: string;
  uuid?: Uuid;
  /** 1.14+ */
  parent_provider_uuid?: Uuid | null;
}

export interface ProviderUpdate {
  name: string;
  /** 1.14+ */
  parent_provider_uuid?: Uuid | null;
}

export interface ProviderListQuery {
  name?: string;
  uuid?: Uuid;
  /** `in:agg1,agg2`; repeat for AND (1.24+) */
  member_of?: string | string[];
  /** `VCPU:2,MEMORY_MB:512` (1.4+) */
  resources?: string;
  /** 1.14+ */
  in_tree?: Uuid;
  /** traits, `!FORBIDDEN`, `in:A,B` (1.18+) */
  required?: string | string[];
}

export interface Inventory {
  total: number;
  reserved?: number;
  min_unit?: number;
  max_unit?: number;
  step_size?: number;
  allocation_ratio?: number;
}

export interface Inventories {
  resource_provider_generation: number;
  inventories: Record<string, Required<Inventory>>;
}

export type InventoryWithGeneration = Required<Inventory> & { resource_provider_generation: number };

export interface ProviderUsages {
  resource_provider_generation: number;
  usages: Resources;
}

export interface ProviderAggregates {
  aggregates: Uuid[];
  /** 1.19+ */
  resource_provider_generation?: number;
}

export interface ProviderTraits {
  traits: string[];
  resource_provider_generation: number;
}

export interface TraitListQuery {
  /** `in:A,B` or `startswith:CUSTOM_` */
  name?: string;
  associated?: boolean;
}

export interface ResourceClass {
  name: string;
  links: Link[];
}

/** GET /allocations/{consumer_uuid} */
export interface ConsumerAllocations {
  allocations: Record<Uuid, { generation: number; resources: Resources }>;
  /** 1.12+ (absent when the consumer has no allocations) */
  project_id?: string;
  user_id?: string;
  /** 1.28+: null for a consumer that does not exist */
  consumer_generation?: number | null;
  /** 1.38+ */
  consumer_type?: string;
}

/** PUT /allocations/{consumer_uuid} (1.12+ dict form) */
export interface AllocationsPut {
  allocations: Record<Uuid, { resources: Resources }>;
  project_id: string;
  user_id: string;
  /** 1.28+: the generation read, or null for a new consumer */
  consumer_generation?: number | null;
  /** 1.38+ */
  consumer_type?: string;
  /** 1.8+ (1.12 requires project and user) */
  [extra: string]: unknown;
}

/** POST /allocations (1.13+): consumer → its allocations; an empty `allocations` removes them */
export type AllocationsPost = Record<Uuid, AllocationsPut>;

export interface ProviderAllocations {
  allocations: Record<Uuid, { resources: Resources }>;
  resource_provider_generation: number;
}

export interface UsagesQuery {
  project_id: string;
  user_id?: string;
  /** 1.38+ */
  consumer_type?: string;
}

export interface TotalUsages {
  /** before 1.38 a resource class → amount; from 1.38 a consumer type → {consumer_count, RC…} */
  usages: Record<string, number | Record<string, number>>;
}

/** A request group of GET /allocation_candidates: the unsuffixed one, or a numbered/named one (1.25+/1.33+). */
export interface CandidateGroup {
  resources?: string;
  required?: string | string[];
  member_of?: string | string[];
  /** 1.31+ */
  in_tree?: Uuid;
}

export interface CandidatesQuery extends CandidateGroup {
  /** 1.16+ */
  limit?: number;
  /** 1.25+: with several groups, `none` or `isolate` */
  group_policy?: 'none' | 'isolate';
  /** 1.35+ */
  root_required?: string;
  /** 1.36+: group suffixes that must be in one subtree, e.g. `_COMPUTE,_NIC` */
  same_subtree?: string | string[];
  /** allot's own: the order of candidates (stable, pack, spread, random) */
  allot_strategy?: 'stable' | 'pack' | 'spread' | 'random';
  /** suffix (`1`, `_NIC`) → group */
  groups?: Record<string, CandidateGroup>;
}

export interface AllocationRequest {
  allocations: Record<Uuid, { resources: Resources }>;
  /** 1.34+: group suffix → providers that satisfied it */
  mappings?: Record<string, Uuid[]>;
}

export interface ProviderSummary {
  resources: Record<string, { capacity: number; used: number }>;
  /** 1.17+ */
  traits?: string[];
  /** 1.29+ */
  parent_provider_uuid?: Uuid | null;
  root_provider_uuid?: Uuid;
}

export interface AllocationCandidates {
  allocation_requests: AllocationRequest[];
  provider_summaries: Record<Uuid, ProviderSummary>;
}

/** POST /reshaper (1.30+) */
export interface ReshapeRequest {
  inventories: Record<Uuid, { resource_provider_generation: number; inventories: Record<string, Inventory> }>;
  allocations: AllocationsPost;
}

/** GET / */
export interface PlacementVersions {
  versions: Array<{ id: string; min_version: string; max_version: string; status: string; links: Link[] }>;
}
