// Request and response bodies of the bare-metal (Ironic) API, from the Ironic API reference, at
// the newest microversion allot serves (1.82). Nodes have many more fields than named here;
// they are all in the index signature.

export interface Link {
  href: string;
  rel: string;
}

export type ProvisionState =
  | 'enroll'
  | 'verifying'
  | 'manageable'
  | 'inspecting'
  | 'inspect wait'
  | 'inspect failed'
  | 'cleaning'
  | 'clean wait'
  | 'clean failed'
  | 'available'
  | 'deploying'
  | 'wait call-back'
  | 'deploy failed'
  | 'active'
  | 'deleting'
  | 'error'
  | 'adopting'
  | 'adopt failed'
  | 'rescuing'
  | 'rescue wait'
  | 'rescue failed'
  | 'rescue'
  | 'unrescuing'
  | 'unrescue failed'
  | 'servicing'
  | 'service wait'
  | 'service failed'
  | (string & {});

/** targets of PUT /v1/nodes/{node}/states/provision */
export type ProvisionTarget =
  | 'manage'
  | 'provide'
  | 'inspect'
  | 'active'
  | 'deploy'
  | 'rebuild'
  | 'deleted'
  | 'undeploy'
  | 'clean'
  | 'abort'
  | 'adopt'
  | 'rescue'
  | 'unrescue'
  | 'service'
  | 'unhold';

export type PowerTarget = 'power on' | 'power off' | 'rebooting' | 'soft power off' | 'soft rebooting';

export interface Node {
  uuid: string;
  name: string | null;
  provision_state: ProvisionState;
  target_provision_state: ProvisionState | null;
  power_state: string | null;
  target_power_state: string | null;
  maintenance: boolean;
  maintenance_reason?: string | null;
  instance_uuid: string | null;
  driver?: string;
  resource_class?: string | null;
  traits?: string[];
  allocation_uuid?: string | null;
  last_error?: string | null;
  properties?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  owner?: string | null;
  lessee?: string | null;
  description?: string | null;
  conductor?: string | null;
  links: Link[];
  [field: string]: unknown;
}

export interface NodeCreate {
  driver: string;
  name?: string | null;
  uuid?: string;
  resource_class?: string | null;
  properties?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  driver_info?: Record<string, unknown>;
  instance_info?: Record<string, unknown>;
  owner?: string | null;
  lessee?: string | null;
  description?: string | null;
  conductor_group?: string;
  automated_clean?: boolean | null;
  network_data?: Record<string, unknown>;
  shard?: string | null;
  [field: string]: unknown;
}

export interface NodeListQuery {
  maintenance?: boolean;
  associated?: boolean;
  provision_state?: string;
  driver?: string;
  resource_class?: string;
  fault?: string;
  conductor_group?: string;
  conductor?: string;
  owner?: string;
  lessee?: string;
  description_contains?: string;
  shard?: string | string[];
  /** every field instead of the short list */
  detail?: boolean;
  fields?: string | string[];
  limit?: number;
  marker?: string;
  sort_key?: string;
  sort_dir?: 'asc' | 'desc';
}

export interface NodeStates {
  power_state: string | null;
  target_power_state: string | null;
  provision_state: ProvisionState;
  target_provision_state: ProvisionState | null;
  provision_updated_at: string | null;
  last_error: string | null;
  console_enabled: boolean;
  raid_config?: unknown;
  target_raid_config?: unknown;
  boot_mode?: string | null;
  secure_boot?: boolean | null;
  [field: string]: unknown;
}

/** RFC 6902 JSON patch, as Ironic takes it (paths like `/extra/foo`, `/name`) */
export type PatchOperation = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export type AllocationState = 'allocating' | 'active' | 'error';

export interface Allocation {
  uuid: string;
  name: string | null;
  state: AllocationState;
  node_uuid: string | null;
  resource_class: string | null;
  traits: string[];
  candidate_nodes: string[];
  last_error: string | null;
  extra: Record<string, unknown>;
  /** 1.60+ */
  owner?: string | null;
  created_at: string;
  updated_at: string | null;
  links: Link[];
}

export interface AllocationCreate {
  resource_class?: string;
  traits?: string[];
  candidate_nodes?: string[];
  name?: string;
  uuid?: string;
  extra?: Record<string, unknown>;
  /** 1.58+: backfill an allocation for a node already deployed */
  node?: string;
  /** 1.60+ */
  owner?: string;
}

export interface AllocationListQuery {
  node?: string;
  resource_class?: string;
  state?: AllocationState;
  owner?: string;
  fields?: string | string[];
  limit?: number;
  marker?: string;
  sort_key?: string;
  sort_dir?: 'asc' | 'desc';
}

export interface Conductor {
  hostname: string;
  conductor_group: string;
  alive: boolean;
  drivers?: string[];
  links: Link[];
  [field: string]: unknown;
}

export interface BaremetalVersion {
  id: string;
  links: Link[];
  status: string;
  min_version: string;
  version: string;
}

/** GET / */
export interface BaremetalRoot {
  name: string;
  description: string;
  default_version: BaremetalVersion;
  versions: BaremetalVersion[];
}
