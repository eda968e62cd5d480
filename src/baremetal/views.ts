// How bare metal's resources look on the wire at a microversion: which fields exist and from which
// version, in Ironic's order (their response schemas' members, schemas.ts), the value of each
// (typed by the wire types generated from those schemas, src/client/baremetal-wire.ts), links,
// and `fields` selection. Pure formatting of rows the store read.
import type * as Wire from '../client/baremetal-wire.js';
import type { Microversion } from '../core/microversion.js';
import { INTERFACES } from './core/rules.js';
import { badRequest, notAcceptable } from './errors.js';
import { ALLOCATION, CHASSIS, DEPLOY_TEMPLATE, type Members, NODE, PORT, PORTGROUP, VOLUME_CONNECTOR, VOLUME_TARGET } from './schemas.js';
import type { AllocationRecord } from './services/allocation-reads.js';
import type { ChassisRecord } from './services/chassis.js';
import type { DeployTemplateRecord } from './services/deploy-templates.js';
import type { PortRecord, PortgroupRecord } from './services/ports.js';
import type { NodeRecord } from './services/node-reads.js';
import type { ConnectorRecord, TargetRecord } from './services/volumes.js';

const json = (text: string): unknown => JSON.parse(text);
/** Timestamps as Ironic writes them: microseconds and an explicit UTC offset. */
export function ironicTime(iso: string): string;
export function ironicTime(iso: string | null): string | null;
export function ironicTime(iso: string | null): string | null {
  return iso === null ? null : iso.replace(/(\.\d{3})Z$/, '$1000+00:00').replace(/Z$/, '+00:00');
}
const bool = (v: number | null): boolean | null => (v === null ? null : v === 1);

export interface ViewContext {
  mv: Microversion;
  /** API base URL (scheme, host, prefix) for links */
  base: string;
  /** the conductor answering (Ironic's `conductor` field: who services the node) */
  conductor: string;
}

const links = (base: string, kind: string, id: string, sub = ''): Wire.Link[] => [
  { href: `${base}/v1/${kind}/${id}${sub}`, rel: 'self' },
  { href: `${base}/${kind}/${id}${sub}`, rel: 'bookmark' },
];

/**
 * A node's provision state as an older version names it (Ironic's update_state_in_older_versions):
 * before 1.2 `available` was no state at all (null), before 1.39 `inspect wait` was `inspecting`.
 */
export function provisionStateAt(state: string, mv: Microversion): string | null {
  if (state === 'available' && !mv.atLeast('1.2')) return null;
  if (state === 'inspect wait' && !mv.atLeast('1.39')) return 'inspecting';
  return state;
}

const iface = (name: string) => (n: NodeRecord) => (json(n.interfaces) as Record<string, string>)[name] ?? INTERFACES[name]![0]!;
const doc = (text: string) => json(text) as Record<string, unknown>;

/**
 * How a resource writes each member its response schema declares (schemas.ts): one function per
 * member, no more, no fewer, each returning the member's wire type — so a view that misses a
 * member or writes one its schema does not document does not compile.
 */
type Values<R, W> = { readonly [K in keyof W]-?: (r: R, c: ViewContext) => Required<W>[K] };

/** A resource's field names and the versions that brought them (what `fields=` and sort keys are checked against). */
export type FieldVersions = readonly (readonly [name: string, since: string, value: unknown])[];

/** A resource's fields in its schema's order: name, the version that brought it, its value. */
export type FieldTable<R> = readonly (readonly [name: string, since: string, value: (r: R, c: ViewContext) => unknown])[];

function fieldTable<R, W>(resource: Members, values: Values<R, W>): FieldTable<R> {
  const byName = values as Record<string, (r: R, c: ViewContext) => unknown>;
  return Object.entries(resource.members).map(([name, [since]]) => [name, since, byName[name]!] as const);
}

/** Every node field, in the order Ironic writes them, with the version that introduced it (schemas.ts NODE). */
export const NODE_FIELDS = fieldTable<NodeRecord, Wire.Node>(NODE, {
  uuid: (n) => n.uuid,
  created_at: (n) => ironicTime(n.created_at),
  updated_at: (n) => ironicTime(n.updated_at),
  automated_clean: (n) => bool(n.automated_clean),
  bios_interface: iface('bios_interface'),
  boot_interface: iface('boot_interface'),
  boot_mode: () => null,
  clean_step: () => ({}),
  conductor_group: (n) => n.conductor_group,
  console_enabled: (n) => n.console_enabled === 1,
  console_interface: iface('console_interface'),
  deploy_interface: iface('deploy_interface'),
  deploy_step: () => ({}),
  description: (n) => n.description,
  driver: (n) => n.driver,
  driver_info: (n) => doc(n.driver_info),
  driver_internal_info: () => ({}),
  extra: (n) => doc(n.extra),
  fault: (n) => n.fault,
  inspection_finished_at: (n) => ironicTime(n.inspection_finished_at),
  inspection_started_at: (n) => ironicTime(n.inspection_started_at),
  inspect_interface: iface('inspect_interface'),
  instance_info: (n) => doc(n.instance_info),
  instance_uuid: (n) => n.instance_uuid,
  last_error: (n) => n.last_error,
  lessee: (n) => n.lessee,
  maintenance: (n) => n.maintenance === 1,
  maintenance_reason: (n) => n.maintenance_reason,
  management_interface: iface('management_interface'),
  name: (n) => n.name,
  network_data: (n) => doc(n.network_data),
  network_interface: iface('network_interface'),
  owner: (n) => n.owner,
  power_interface: iface('power_interface'),
  power_state: (n) => n.power_state,
  properties: (n) => doc(n.properties),
  protected: (n) => n.protected === 1,
  protected_reason: (n) => n.protected_reason,
  provision_state: (n, c) => provisionStateAt(n.provision_state, c.mv),
  provision_updated_at: (n) => ironicTime(n.provision_updated_at),
  raid_config: (n) => doc(n.raid_config),
  raid_interface: iface('raid_interface'),
  rescue_interface: iface('rescue_interface'),
  reservation: (n) => n.reservation,
  resource_class: (n) => n.resource_class,
  retired: (n) => n.retired === 1,
  retired_reason: (n) => n.retired_reason,
  secure_boot: () => null,
  shard: (n) => n.shard,
  storage_interface: iface('storage_interface'),
  target_power_state: (n) => n.target_power_state,
  target_provision_state: (n) => n.target_provision_state,
  target_raid_config: (n) => doc(n.target_raid_config),
  traits: (n) => n.traits,
  vendor_interface: iface('vendor_interface'),
  links: (n, c) => links(c.base, 'nodes', n.uuid),
  conductor: (_n, c) => c.conductor,
  allocation_uuid: (n) => n.allocation_uuid,
  chassis_uuid: (n) => n.chassis_uuid,
  ports: (n, c) => links(c.base, 'nodes', n.uuid, '/ports'),
  states: (n, c) => links(c.base, 'nodes', n.uuid, '/states'),
  portgroups: (n, c) => links(c.base, 'nodes', n.uuid, '/portgroups'),
  volume: (n, c) => links(c.base, 'nodes', n.uuid, '/volume'),
});

/** What GET /v1/nodes shows without `fields` or `detail`. */
export const NODE_LIST_FIELDS = ['uuid', 'instance_uuid', 'maintenance', 'power_state', 'provision_state', 'name'];

export function nodeFieldSince(name: string): string | undefined {
  return NODE.members[name]?.[0];
}

/** Fields Ironic's API fills in after the node's own (they follow `links`). */
const API_FILLED = ['conductor', 'allocation_uuid', 'chassis_uuid'];

/**
 * A node as the API shows it; `fields` (already checked) limits it, links always included. With
 * `fields`, in Ironic's order: uuid, created_at, updated_at, the other fields in the order asked,
 * links, then conductor, allocation_uuid, chassis_uuid.
 */
export function nodeView(n: NodeRecord, c: ViewContext): Wire.Node;
export function nodeView(n: NodeRecord, c: ViewContext, fields?: readonly string[]): Wire.NodeSelection;
export function nodeView(n: NodeRecord, c: ViewContext, fields?: readonly string[]): Wire.NodeSelection {
  const out: Record<string, unknown> = {};
  const byName = new Map(NODE_FIELDS.map((f) => [f[0], f]));
  const order = fields
    ? [
        ...['uuid', 'created_at', 'updated_at'].filter((f) => fields.includes(f)),
        ...fields.filter((f) => !['uuid', 'created_at', 'updated_at', 'links', ...API_FILLED].includes(f)),
        'links',
        ...API_FILLED.filter((f) => fields.includes(f)),
      ]
    : NODE_FIELDS.map((f) => f[0]);
  for (const name of order) {
    const [, since, value] = byName.get(name)!;
    if (c.mv.atLeast(since)) out[name] = value(n, c);
  }
  return out as Wire.NodeSelection;
}

/** Every allocation field, in the order Ironic writes them. */
export const ALLOCATION_FIELDS = fieldTable<AllocationRecord, Wire.Allocation>(ALLOCATION, {
  uuid: (a) => a.uuid,
  created_at: (a) => ironicTime(a.created_at),
  updated_at: (a) => ironicTime(a.updated_at),
  candidate_nodes: (a) => json(a.candidate_nodes) as string[],
  extra: (a) => doc(a.extra),
  last_error: (a) => a.last_error,
  name: (a) => a.name,
  owner: (a) => a.owner,
  resource_class: (a) => a.resource_class,
  state: (a) => a.state as Wire.Allocation['state'],
  traits: (a) => a.traits,
  links: (a, c) => links(c.base, 'allocations', a.uuid),
  node_uuid: (a) => a.node_uuid,
});

/**
 * A record through its field table, in the table's order: the fields of the request's version,
 * `fields` if given (links always). `everyVersion`: every field is shown whatever the request's
 * version (their versions gate `fields` and writes only).
 */
function tableView<R, W>(table: FieldTable<R>, r: R, c: ViewContext, fields?: readonly string[], everyVersion = false): W {
  const out: Record<string, unknown> = {};
  for (const [name, since, value] of table) {
    if (!everyVersion && !c.mv.atLeast(since)) continue;
    if (fields && name !== 'links' && !fields.includes(name)) continue;
    out[name] = value(r, c);
  }
  return out as W;
}

/** A view of a resource: whole without `fields`, a selection with them. */
export interface View<R, W, S> {
  (r: R, c: ViewContext): W;
  (r: R, c: ViewContext, fields?: readonly string[]): S;
}
const view = <R, W, S>(table: FieldTable<R>, everyVersion = false): View<R, W, S> =>
  ((r: R, c: ViewContext, fields?: readonly string[]) => tableView<R, W | S>(table, r, c, fields, everyVersion)) as View<R, W, S>;

export const allocationView = view<AllocationRecord, Wire.Allocation, Wire.AllocationSelection>(ALLOCATION_FIELDS);

export const CHASSIS_FIELDS = fieldTable<ChassisRecord, Wire.Chassis>(CHASSIS, {
  uuid: (r) => r.uuid,
  created_at: (r) => ironicTime(r.created_at),
  updated_at: (r) => ironicTime(r.updated_at),
  description: (r) => r.description,
  extra: (r) => doc(r.extra),
  links: (r, c) => links(c.base, 'chassis', r.uuid),
  nodes: (r, c) => [links(c.base, 'chassis', r.uuid, '/nodes')],
});

export const PORTGROUP_FIELDS = fieldTable<PortgroupRecord, Wire.Portgroup>(PORTGROUP, {
  uuid: (r) => r.uuid,
  created_at: (r) => ironicTime(r.created_at),
  updated_at: (r) => ironicTime(r.updated_at),
  address: (r) => r.address,
  extra: (r) => doc(r.extra),
  internal_info: (r) => doc(r.internal_info),
  mode: (r) => r.mode,
  name: (r) => r.name,
  properties: (r) => doc(r.properties),
  standalone_ports_supported: (r) => r.standalone_ports_supported === 1,
  node_uuid: (r) => r.node_uuid,
  links: (r, c) => links(c.base, 'portgroups', r.uuid),
  ports: (r, c) => links(c.base, 'portgroups', r.uuid, '/ports'),
});

export const PORT_FIELDS = fieldTable<PortRecord, Wire.Port>(PORT, {
  uuid: (r) => r.uuid,
  created_at: (r) => ironicTime(r.created_at),
  updated_at: (r) => ironicTime(r.updated_at),
  address: (r) => r.address,
  extra: (r) => doc(r.extra),
  internal_info: (r) => doc(r.internal_info),
  is_smartnic: (r) => r.is_smartnic === 1,
  local_link_connection: (r) => doc(r.local_link_connection),
  physical_network: (r) => r.physical_network,
  pxe_enabled: (r) => r.pxe_enabled === 1,
  node_uuid: (r) => r.node_uuid,
  links: (r, c) => links(c.base, 'ports', r.uuid),
  portgroup_uuid: (r) => r.portgroup_uuid,
});

export const chassisView = view<ChassisRecord, Wire.Chassis, Wire.ChassisSelection>(CHASSIS_FIELDS);
/**
 * Ironic 21.4 hides no field of a port group by version (unlike a port's): `mode`, `properties`
 * (1.26) and the `ports` links (1.24) show at 1.23 too, though `?fields=` and writes of them need
 * their versions.
 */
export const portgroupView = view<PortgroupRecord, Wire.Portgroup, Wire.PortgroupSelection>(PORTGROUP_FIELDS, PORTGROUP.everyVersion);
export const portView = view<PortRecord, Wire.Port, Wire.PortSelection>(PORT_FIELDS);

/**
 * Parse `fields=a,b`: every name must be a field of the resource (400 otherwise); a field newer
 * than the request's version is a 406, as Ironic answers for versioned fields.
 */
export function parseFields(raw: string | undefined, table: FieldVersions, mv: Microversion): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const bad = names.filter((n) => !table.some(([name]) => name === n));
  if (bad.length) throw badRequest(`Field(s) "${bad.join(', ')}" are not valid`);
  const tooNew = names.filter((n) => !mv.atLeast(table.find(([name]) => name === n)![1]));
  if (tooNew.length) throw notAcceptable();
  return names;
}

export const DEPLOY_TEMPLATE_FIELDS = fieldTable<DeployTemplateRecord, Wire.DeployTemplate>(DEPLOY_TEMPLATE, {
  uuid: (r) => r.uuid,
  created_at: (r) => ironicTime(r.created_at),
  updated_at: (r) => ironicTime(r.updated_at),
  name: (r) => r.name,
  extra: (r) => doc(r.extra),
  links: (r, c) => links(c.base, 'deploy_templates', r.uuid),
  steps: (r) => json(r.steps) as Wire.DeployTemplate['steps'],
});

export const deployTemplateView = view<DeployTemplateRecord, Wire.DeployTemplate, Wire.DeployTemplateSelection>(DEPLOY_TEMPLATE_FIELDS);

export const CONNECTOR_FIELDS = fieldTable<ConnectorRecord, Wire.VolumeConnector>(VOLUME_CONNECTOR, {
  uuid: (r) => r.uuid,
  created_at: (r) => ironicTime(r.created_at),
  updated_at: (r) => ironicTime(r.updated_at),
  connector_id: (r) => r.connector_id,
  extra: (r) => doc(r.extra),
  type: (r) => r.type,
  links: (r, c) => links(c.base, 'volume/connectors', r.uuid),
  node_uuid: (r) => r.node_uuid,
});

export const TARGET_FIELDS = fieldTable<TargetRecord, Wire.VolumeTarget>(VOLUME_TARGET, {
  uuid: (r) => r.uuid,
  created_at: (r) => ironicTime(r.created_at),
  updated_at: (r) => ironicTime(r.updated_at),
  boot_index: (r) => r.boot_index,
  extra: (r) => doc(r.extra),
  properties: (r) => doc(r.properties),
  volume_id: (r) => r.volume_id,
  volume_type: (r) => r.volume_type,
  links: (r, c) => links(c.base, 'volume/targets', r.uuid),
  node_uuid: (r) => r.node_uuid,
});

export const connectorView = view<ConnectorRecord, Wire.VolumeConnector, Wire.VolumeConnectorSelection>(CONNECTOR_FIELDS);
export const targetView = view<TargetRecord, Wire.VolumeTarget, Wire.VolumeTargetSelection>(TARGET_FIELDS);
