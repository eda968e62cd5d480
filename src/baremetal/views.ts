// How nodes and allocations look on the wire at a microversion: which fields exist (a field table
// keyed by the version that introduced each), their order (Ironic's), links, and `fields`
// selection. Pure formatting of rows the store read.
import type { Microversion } from '../core/microversion.js';
import { INTERFACES } from './core/rules.js';
import { badRequest, notAcceptable } from './errors.js';
import type { AllocationRecord } from './services/allocation-reads.js';
import type { ChassisRecord } from './services/chassis.js';
import type { DeployTemplateRecord } from './services/deploy-templates.js';
import type { PortRecord, PortgroupRecord } from './services/ports.js';
import type { NodeRecord } from './services/node-reads.js';
import type { ConnectorRecord, TargetRecord } from './services/volumes.js';

const json = (text: string): unknown => JSON.parse(text);
/** Timestamps as Ironic writes them: microseconds and an explicit UTC offset. */
export const ironicTime = (iso: string | null): string | null => (iso === null ? null : iso.replace(/(\.\d{3})Z$/, '$1000+00:00').replace(/Z$/, '+00:00'));
const bool = (v: number | null): boolean | null => (v === null ? null : v === 1);

export interface ViewContext {
  mv: Microversion;
  /** API base URL (scheme, host, prefix) for links */
  base: string;
  /** the conductor answering (Ironic's `conductor` field: who services the node) */
  conductor: string;
}

const links = (base: string, kind: string, id: string, sub = '') => [
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

type NodeField = [name: string, since: string, value: (n: NodeRecord, c: ViewContext) => unknown];

const iface = (name: string) => (n: NodeRecord) => (json(n.interfaces) as Record<string, string>)[name] ?? INTERFACES[name]![0];

/** Every node field, in the order Ironic writes them, with the version that introduced it. */
export const NODE_FIELDS: readonly NodeField[] = [
  ['uuid', '1.1', (n) => n.uuid],
  ['created_at', '1.1', (n) => ironicTime(n.created_at)],
  ['updated_at', '1.1', (n) => ironicTime(n.updated_at)],
  ['automated_clean', '1.47', (n) => bool(n.automated_clean)],
  ['bios_interface', '1.40', iface('bios_interface')],
  ['boot_interface', '1.31', iface('boot_interface')],
  ['boot_mode', '1.75', () => null],
  ['clean_step', '1.7', () => ({})],
  ['conductor_group', '1.46', (n) => n.conductor_group],
  ['console_enabled', '1.1', (n) => n.console_enabled === 1],
  ['console_interface', '1.31', iface('console_interface')],
  ['deploy_interface', '1.31', iface('deploy_interface')],
  ['deploy_step', '1.44', () => ({})],
  ['description', '1.51', (n) => n.description],
  ['driver', '1.1', (n) => n.driver],
  ['driver_info', '1.1', (n) => json(n.driver_info)],
  ['driver_internal_info', '1.3', () => ({})],
  ['extra', '1.1', (n) => json(n.extra)],
  ['fault', '1.42', (n) => n.fault],
  ['inspection_finished_at', '1.6', (n) => ironicTime(n.inspection_finished_at)],
  ['inspection_started_at', '1.6', (n) => ironicTime(n.inspection_started_at)],
  ['inspect_interface', '1.31', iface('inspect_interface')],
  ['instance_info', '1.1', (n) => json(n.instance_info)],
  ['instance_uuid', '1.1', (n) => n.instance_uuid],
  ['last_error', '1.1', (n) => n.last_error],
  ['lessee', '1.65', (n) => n.lessee],
  ['maintenance', '1.1', (n) => n.maintenance === 1],
  ['maintenance_reason', '1.1', (n) => n.maintenance_reason],
  ['management_interface', '1.31', iface('management_interface')],
  ['name', '1.5', (n) => n.name],
  ['network_data', '1.66', (n) => json(n.network_data)],
  ['network_interface', '1.20', iface('network_interface')],
  ['owner', '1.50', (n) => n.owner],
  ['power_interface', '1.31', iface('power_interface')],
  ['power_state', '1.1', (n) => n.power_state],
  ['properties', '1.1', (n) => json(n.properties)],
  ['protected', '1.48', (n) => n.protected === 1],
  ['protected_reason', '1.48', (n) => n.protected_reason],
  ['provision_state', '1.1', (n, c) => provisionStateAt(n.provision_state, c.mv)],
  ['provision_updated_at', '1.1', (n) => ironicTime(n.provision_updated_at)],
  ['raid_config', '1.12', (n) => json(n.raid_config)],
  ['raid_interface', '1.31', iface('raid_interface')],
  ['rescue_interface', '1.38', iface('rescue_interface')],
  ['reservation', '1.1', (n) => n.reservation],
  ['resource_class', '1.21', (n) => n.resource_class],
  ['retired', '1.61', (n) => n.retired === 1],
  ['retired_reason', '1.61', (n) => n.retired_reason],
  ['secure_boot', '1.75', () => null],
  ['shard', '1.82', (n) => n.shard],
  ['storage_interface', '1.33', iface('storage_interface')],
  ['target_power_state', '1.1', (n) => n.target_power_state],
  ['target_provision_state', '1.1', (n) => n.target_provision_state],
  ['target_raid_config', '1.12', (n) => json(n.target_raid_config)],
  ['traits', '1.37', (n) => n.traits],
  ['vendor_interface', '1.31', iface('vendor_interface')],
  ['links', '1.1', (n, c) => links(c.base, 'nodes', n.uuid)],
  ['conductor', '1.49', (_n, c) => c.conductor],
  ['allocation_uuid', '1.52', (n) => n.allocation_uuid],
  ['chassis_uuid', '1.1', (n) => n.chassis_uuid],
  ['ports', '1.1', (n, c) => links(c.base, 'nodes', n.uuid, '/ports')],
  ['states', '1.14', (n, c) => links(c.base, 'nodes', n.uuid, '/states')],
  ['portgroups', '1.24', (n, c) => links(c.base, 'nodes', n.uuid, '/portgroups')],
  ['volume', '1.32', (n, c) => links(c.base, 'nodes', n.uuid, '/volume')],
];

/** What GET /v1/nodes shows without `fields` or `detail`. */
export const NODE_LIST_FIELDS = ['uuid', 'instance_uuid', 'maintenance', 'power_state', 'provision_state', 'name'];

export function nodeFieldSince(name: string): string | undefined {
  return NODE_FIELDS.find(([n]) => n === name)?.[1];
}

/** Fields Ironic's API fills in after the node's own (they follow `links`). */
const API_FILLED = ['conductor', 'allocation_uuid', 'chassis_uuid'];

/**
 * A node as the API shows it; `fields` (already checked) limits it, links always included. With
 * `fields`, in Ironic's order: uuid, created_at, updated_at, the other fields in the order asked,
 * links, then conductor, allocation_uuid, chassis_uuid.
 */
export function nodeView(n: NodeRecord, c: ViewContext, fields?: readonly string[]): Record<string, unknown> {
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
  return out;
}

/** Every allocation field, in the order Ironic writes them. */
export const ALLOCATION_FIELDS: readonly FieldOf<AllocationRecord>[] = [
  ['uuid', '1.52', (a) => a.uuid],
  ['created_at', '1.52', (a) => ironicTime(a.created_at)],
  ['updated_at', '1.52', (a) => ironicTime(a.updated_at)],
  ['candidate_nodes', '1.52', (a) => json(a.candidate_nodes)],
  ['extra', '1.52', (a) => json(a.extra)],
  ['last_error', '1.52', (a) => a.last_error],
  ['name', '1.52', (a) => a.name],
  ['owner', '1.60', (a) => a.owner],
  ['resource_class', '1.52', (a) => a.resource_class],
  ['state', '1.52', (a) => a.state],
  ['traits', '1.52', (a) => a.traits],
  ['links', '1.52', (a, c) => links(c.base, 'allocations', a.uuid)],
  ['node_uuid', '1.52', (a) => a.node_uuid],
];

export const allocationView = (a: AllocationRecord, c: ViewContext, fields?: readonly string[]) => tableView(ALLOCATION_FIELDS, a, c, fields);

/** A record through its field table, in the table's order: the fields of the request's version, `fields` if given (links always). */
/** `everyVersion`: every field is shown whatever the request's version (their versions gate `fields` and writes only). */
function tableView<R>(table: readonly FieldOf<R>[], r: R, c: ViewContext, fields?: readonly string[], everyVersion = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, since, value] of table) {
    if (!everyVersion && !c.mv.atLeast(since)) continue;
    if (fields && name !== 'links' && !fields.includes(name)) continue;
    out[name] = value(r, c);
  }
  return out;
}

type FieldOf<R> = [name: string, since: string, value: (r: R, c: ViewContext) => unknown];

export const CHASSIS_FIELDS: readonly FieldOf<ChassisRecord>[] = [
  ['uuid', '1.1', (r) => r.uuid],
  ['created_at', '1.1', (r) => ironicTime(r.created_at)],
  ['updated_at', '1.1', (r) => ironicTime(r.updated_at)],
  ['description', '1.1', (r) => r.description],
  ['extra', '1.1', (r) => json(r.extra)],
  ['links', '1.1', (r, c) => links(c.base, 'chassis', r.uuid)],
  // a list holding the list of links: Ironic's own answer (a stray tuple in its chassis view)
  ['nodes', '1.1', (r, c) => [links(c.base, 'chassis', r.uuid, '/nodes')]],
];

export const PORTGROUP_FIELDS: readonly FieldOf<PortgroupRecord>[] = [
  ['uuid', '1.23', (r) => r.uuid],
  ['created_at', '1.23', (r) => ironicTime(r.created_at)],
  ['updated_at', '1.23', (r) => ironicTime(r.updated_at)],
  ['address', '1.23', (r) => r.address],
  ['extra', '1.23', (r) => json(r.extra)],
  ['internal_info', '1.23', (r) => json(r.internal_info)],
  ['mode', '1.26', (r) => r.mode],
  ['name', '1.23', (r) => r.name],
  ['properties', '1.26', (r) => json(r.properties)],
  ['standalone_ports_supported', '1.23', (r) => r.standalone_ports_supported === 1],
  ['node_uuid', '1.23', (r) => r.node_uuid],
  ['links', '1.23', (r, c) => links(c.base, 'portgroups', r.uuid)],
  ['ports', '1.24', (r, c) => links(c.base, 'portgroups', r.uuid, '/ports')],
];

export const PORT_FIELDS: readonly FieldOf<PortRecord>[] = [
  ['uuid', '1.1', (r) => r.uuid],
  ['created_at', '1.1', (r) => ironicTime(r.created_at)],
  ['updated_at', '1.1', (r) => ironicTime(r.updated_at)],
  ['address', '1.1', (r) => r.address],
  ['extra', '1.1', (r) => json(r.extra)],
  ['internal_info', '1.18', (r) => json(r.internal_info)],
  ['is_smartnic', '1.53', (r) => r.is_smartnic === 1],
  ['local_link_connection', '1.19', (r) => json(r.local_link_connection)],
  ['physical_network', '1.34', (r) => r.physical_network],
  ['pxe_enabled', '1.19', (r) => r.pxe_enabled === 1],
  ['node_uuid', '1.1', (r) => r.node_uuid],
  ['links', '1.1', (r, c) => links(c.base, 'ports', r.uuid)],
  ['portgroup_uuid', '1.24', (r) => r.portgroup_uuid],
];

export const chassisView = (r: ChassisRecord, c: ViewContext, fields?: readonly string[]) => tableView(CHASSIS_FIELDS, r, c, fields);
/**
 * Ironic 21.4 hides no field of a port group by version (unlike a port's): `mode`, `properties`
 * (1.26) and the `ports` links (1.24) show at 1.23 too, though `?fields=` and writes of them need
 * their versions.
 */
export const portgroupView = (r: PortgroupRecord, c: ViewContext, fields?: readonly string[]) => tableView(PORTGROUP_FIELDS, r, c, fields, true);
export const portView = (r: PortRecord, c: ViewContext, fields?: readonly string[]) => tableView(PORT_FIELDS, r, c, fields);

/**
 * Parse `fields=a,b`: every name must be a field of the resource (400 otherwise); a field newer
 * than the request's version is a 406, as Ironic answers for versioned fields.
 */
export function parseFields(raw: string | undefined, table: readonly [string, string, unknown][], mv: Microversion): string[] | undefined {
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

export const DEPLOY_TEMPLATE_FIELDS: readonly FieldOf<DeployTemplateRecord>[] = [
  ['uuid', '1.55', (r) => r.uuid],
  ['created_at', '1.55', (r) => ironicTime(r.created_at)],
  ['updated_at', '1.55', (r) => ironicTime(r.updated_at)],
  ['name', '1.55', (r) => r.name],
  ['extra', '1.55', (r) => json(r.extra)],
  ['links', '1.55', (r, c) => links(c.base, 'deploy_templates', r.uuid)],
  ['steps', '1.55', (r) => json(r.steps)],
];

export const deployTemplateView = (r: DeployTemplateRecord, c: ViewContext, fields?: readonly string[]) => tableView(DEPLOY_TEMPLATE_FIELDS, r, c, fields);

export const CONNECTOR_FIELDS: readonly FieldOf<ConnectorRecord>[] = [
  ['uuid', '1.32', (r) => r.uuid],
  ['created_at', '1.32', (r) => ironicTime(r.created_at)],
  ['updated_at', '1.32', (r) => ironicTime(r.updated_at)],
  ['connector_id', '1.32', (r) => r.connector_id],
  ['extra', '1.32', (r) => json(r.extra)],
  ['type', '1.32', (r) => r.type],
  ['links', '1.32', (r, c) => links(c.base, 'volume/connectors', r.uuid)],
  ['node_uuid', '1.32', (r) => r.node_uuid],
];

export const TARGET_FIELDS: readonly FieldOf<TargetRecord>[] = [
  ['uuid', '1.32', (r) => r.uuid],
  ['created_at', '1.32', (r) => ironicTime(r.created_at)],
  ['updated_at', '1.32', (r) => ironicTime(r.updated_at)],
  ['boot_index', '1.32', (r) => r.boot_index],
  ['extra', '1.32', (r) => json(r.extra)],
  ['properties', '1.32', (r) => json(r.properties)],
  ['volume_id', '1.32', (r) => r.volume_id],
  ['volume_type', '1.32', (r) => r.volume_type],
  ['links', '1.32', (r, c) => links(c.base, 'volume/targets', r.uuid)],
  ['node_uuid', '1.32', (r) => r.node_uuid],
];

export const connectorView = (r: ConnectorRecord, c: ViewContext, fields?: readonly string[]) => tableView(CONNECTOR_FIELDS, r, c, fields);
export const targetView = (r: TargetRecord, c: ViewContext, fields?: readonly string[]) => tableView(TARGET_FIELDS, r, c, fields);
