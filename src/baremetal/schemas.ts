// Every JSON schema of the bare-metal API, in one place. Property order is Ironic's where it
// decides which of two errors is reported (the validator reports the first, as Ironic's does).
import type { JsonSchema } from '../core/json-schema.js';
import { CUSTOM_TRAIT_PATTERN, INTERFACES, STANDARD_TRAITS } from './core/rules.js';

const nullableString = (maxLength?: number): JsonSchema => (maxLength ? { type: ['string', 'null'], maxLength } : { type: ['string', 'null'] });
/** The longest resource class a node or an allocation may name (Ironic's column; Placement's own names may be 255). */
export const RESOURCE_CLASS_MAX_LENGTH = 80;
const boolish: JsonSchema = { type: ['string', 'boolean', 'null'] };

/** A trait: CUSTOM_[A-Z0-9_]+ or one of the standard (os-traits) names, at most 255 characters (Ironic's schema, key for key). */
export const trait: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  anyOf: [{ pattern: CUSTOM_TRAIT_PATTERN }, { enum: [...STANDARD_TRAITS] }],
};

/** A JSON Patch: Ironic's schema, in Ironic's order. */
export const patch: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      path: { type: 'string', pattern: '^(/[\\w-]+)+$' },
      op: { type: 'string', enum: ['add', 'replace', 'remove'] },
      value: {},
    },
    additionalProperties: false,
    required: ['op', 'path'],
  },
};

// ---- nodes -----------------------------------------------------------------------------------

/** The node document a patched node must satisfy. */
export const node: JsonSchema = {
  type: 'object',
  properties: {
    uuid: nullableString(),
    name: nullableString(),
    driver: { type: 'string' },
    resource_class: nullableString(RESOURCE_CLASS_MAX_LENGTH),
    properties: { type: ['object', 'null'] },
    extra: { type: ['object', 'null'] },
    driver_info: { type: ['object', 'null'] },
    instance_info: { type: ['object', 'null'] },
    instance_uuid: nullableString(),
    chassis_uuid: nullableString(),
    network_data: { type: ['object', 'null'] },
    owner: nullableString(255),
    lessee: nullableString(255),
    description: nullableString(),
    conductor_group: nullableString(255),
    automated_clean: { type: ['boolean', 'null'] },
    maintenance: boolish,
    protected: boolish,
    protected_reason: nullableString(),
    retired: boolish,
    retired_reason: nullableString(),
    shard: nullableString(255),
    ...Object.fromEntries(Object.keys(INTERFACES).map((name) => [name, nullableString()])),
  },
  required: ['driver'],
  additionalProperties: false,
};

/** A create body: the node document without what only PATCH may set. */
export const nodeCreate: JsonSchema = {
  ...node,
  properties: Object.fromEntries(Object.entries(node.properties!).filter(([k]) => k !== 'protected' && k !== 'protected_reason')),
};

/** PUT /v1/nodes/{node}/traits */
export const nodeTraits: JsonSchema = {
  type: 'object',
  properties: { traits: { type: 'array', items: trait } },
  required: ['traits'],
  additionalProperties: false,
};

/** PUT /v1/nodes/{node}/states/provision (unknown keys are refused before, as Ironic's keyword arguments) */
export const provision: JsonSchema = {
  type: 'object',
  properties: {
    target: { type: 'string' },
    configdrive: { type: ['string', 'object', 'null'] },
    clean_steps: { type: ['array', 'null'], items: { type: 'object' } },
    deploy_steps: { type: ['array', 'null'], items: { type: 'object' } },
    rescue_password: { type: ['string', 'null'] },
    disable_ramdisk: { type: ['boolean', 'null'] },
  },
};

/** PUT /v1/nodes/{node}/states/power */
export const power: JsonSchema = { type: 'object', properties: { target: { type: 'string' }, timeout: { type: ['integer', 'null'] } } };

/** PUT /v1/nodes/{node}/maintenance */
export const maintenance: JsonSchema = { type: 'object', properties: { reason: { type: ['string', 'null'] } } };

// ---- allocations -----------------------------------------------------------------------------

/** POST /v1/allocations */
export const allocationCreate: JsonSchema = {
  type: 'object',
  properties: {
    candidate_nodes: { type: ['array', 'null'], items: { type: 'string', maxLength: 255 } },
    extra: { type: ['object', 'null'] },
    name: { type: ['string', 'null'] },
    node: { type: ['string', 'null'] },
    owner: { type: ['string', 'null'], maxLength: 255 },
    resource_class: { type: ['string', 'null'], maxLength: RESOURCE_CLASS_MAX_LENGTH },
    traits: { type: ['array', 'null'], items: trait },
    uuid: { type: ['string', 'null'] },
  },
  additionalProperties: false,
};

/** What a patched allocation must satisfy (1.57). */
export const allocationPatched: JsonSchema = {
  type: 'object',
  properties: { name: { type: ['string', 'null'] }, extra: { type: ['object', 'null'] } },
};

// ---- chassis, port groups, ports -------------------------------------------------------------

/** A chassis (create body and patched document). */
export const chassis: JsonSchema = {
  type: 'object',
  properties: { uuid: nullableString(), extra: { type: ['object', 'null'] }, description: nullableString(255) },
  additionalProperties: false,
};

/** A port group (create body and patched document): Ironic's schema. */
export const portgroup: JsonSchema = {
  type: 'object',
  properties: {
    address: nullableString(),
    extra: { type: ['object', 'null'] },
    mode: nullableString(),
    name: nullableString(),
    node_uuid: { type: 'string' },
    properties: { type: ['object', 'null'] },
    standalone_ports_supported: boolish,
    uuid: nullableString(),
  },
  required: ['node_uuid'],
  additionalProperties: false,
};

const localLinkBase = {
  type: 'object',
  properties: {
    port_id: { type: 'string' },
    switch_id: { type: 'string' },
    hostname: { type: 'string' },
    switch_info: { type: 'string' },
    network_type: { type: 'string', enum: ['managed', 'unmanaged'] },
  },
  additionalProperties: false,
} satisfies JsonSchema;

/** A port's local_link_connection: a switch port, a smart NIC's host, an unmanaged link, or nothing. */
export const localLinkConnection: JsonSchema = {
  anyOf: [
    { ...localLinkBase, required: ['port_id', 'switch_id'] },
    { ...localLinkBase, required: ['port_id', 'hostname'] },
    { ...localLinkBase, properties: { ...localLinkBase.properties, network_type: { type: 'string', enum: ['unmanaged'] } }, required: ['network_type'] },
    { type: 'object', additionalProperties: false },
  ],
};

/** A smart NIC port's link names the port and the host. */
export const smartNicLink: JsonSchema = { ...localLinkBase, required: ['port_id', 'hostname'] };

/** A port (create body and patched document): Ironic's schema. */
export const port: JsonSchema = {
  type: 'object',
  properties: {
    address: { type: 'string' },
    extra: { type: ['object', 'null'] },
    is_smartnic: boolish,
    local_link_connection: { type: ['null', 'object'] },
    node_uuid: { type: 'string' },
    physical_network: nullableString(64),
    portgroup_uuid: nullableString(),
    pxe_enabled: boolish,
    uuid: nullableString(),
  },
  required: ['address', 'node_uuid'],
  additionalProperties: false,
};

// ---- what fake hardware records --------------------------------------------------------------

/** POST /v1/nodes/{node}/vifs */
export const vif: JsonSchema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

/** PUT /v1/nodes/{node}/states/raid: Ironic's RAID configuration schema (raid_config_schema.json). */
export const raidConfig: JsonSchema = {
  type: 'object',
  properties: {
    logical_disks: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          raid_level: { type: 'string', enum: ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0'] },
          size_gb: {
            anyOf: [
              { type: 'integer', minimum: 0 },
              { type: 'string', enum: ['MAX'] },
            ],
          },
          volume_name: { type: 'string' },
          is_root_volume: { type: 'boolean' },
          share_physical_disks: { type: 'boolean' },
          disk_type: { type: 'string', enum: ['hdd', 'ssd'] },
          interface_type: { type: 'string', enum: ['sata', 'scsi', 'sas'] },
          number_of_physical_disks: { type: 'integer', minimum: 1 },
          controller: { type: 'string' },
          physical_disks: {
            anyOf: [
              { type: 'array', items: { type: 'string' } },
              { type: 'array', items: { type: 'object' }, minItems: 2 },
            ],
          },
        },
        required: ['raid_level', 'size_gb'],
        additionalProperties: false,
      },
    },
  },
  required: ['logical_disks'],
  additionalProperties: false,
};

// ---- deploy templates ------------------------------------------------------------------------

/** The interfaces a deploy step may belong to (Ironic's DEPLOYING_INTERFACE_PRIORITY), in its order. */
export const DEPLOY_STEP_INTERFACES = ['power', 'management', 'deploy', 'bios', 'raid'];

/** A deploy template (create body and patched document): Ironic's schema; the name is a trait. */
export const deployTemplate: JsonSchema = {
  type: 'object',
  properties: {
    extra: { type: ['object', 'null'] },
    name: trait,
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          args: { type: 'object' },
          interface: { type: 'string', enum: DEPLOY_STEP_INTERFACES },
          priority: {
            anyOf: [
              { type: 'integer', minimum: 0 },
              { type: 'string', minLength: 1, pattern: '^[0-9]+$' },
            ],
          },
          step: { type: 'string', minLength: 1 },
        },
        required: ['interface', 'step', 'args', 'priority'],
        additionalProperties: false,
      },
      minItems: 1,
    },
    uuid: nullableString(),
  },
  required: ['steps', 'name'],
  additionalProperties: false,
};

// ---- volume connectors and targets -----------------------------------------------------------

/** A volume connector (create body and patched document): Ironic's schema. */
export const volumeConnector: JsonSchema = {
  type: 'object',
  properties: {
    connector_id: { type: 'string' },
    extra: { type: ['object', 'null'] },
    node_uuid: { type: 'string' },
    type: { type: 'string' },
    uuid: nullableString(),
  },
  required: ['connector_id', 'node_uuid', 'type'],
  additionalProperties: false,
};

/** A volume target (create body and patched document): Ironic's schema. */
export const volumeTarget: JsonSchema = {
  type: 'object',
  properties: {
    boot_index: { type: 'integer' },
    extra: { type: ['object', 'null'] },
    node_uuid: { type: 'string' },
    properties: { type: ['object', 'null'] },
    volume_id: { type: 'string' },
    volume_type: { type: 'string' },
    uuid: nullableString(),
  },
  required: ['boot_index', 'node_uuid', 'volume_id', 'volume_type'],
  additionalProperties: false,
};

// ---- responses: the server's views are typed by them (WIRE_TYPES below), openapi.ts describes them ----
//
// A resource's members are declared once, in Ironic's order, each with the microversion that
// brought it (`members`): the response schema is built from them — a member the resource has had
// from its first version is required, a newer one is optional and says from which — and views.ts
// shows them by the same versions (and checks `fields=` against them). A resource answered with
// `fields=`, or in a list without `detail` (Ironic's short form), is a selection: its schema (e.g.
// `NodeSelection`) has the same members, every one optional but `links`, which Ironic always
// writes. A `/detail` list holds whole resources.

/** `#/components/schemas/<name>`: a response schema of the document. */
export const schemaRef = (name: ResponseName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const str: JsonSchema = { type: 'string' };
const nstr: JsonSchema = { type: ['string', 'null'] };
const bool: JsonSchema = { type: 'boolean' };
const nbool: JsonSchema = { type: ['boolean', 'null'] };
const doc: JsonSchema = { type: 'object' };
const strings: JsonSchema = { type: 'array', items: str };
/** ISO 8601 with microseconds and +00:00 */
const time: JsonSchema = { type: 'string' };
const ntime: JsonSchema = { type: ['string', 'null'] };

const link: JsonSchema = { type: 'object', properties: { href: str, rel: str }, required: ['href', 'rel'] };
const links: JsonSchema = { type: 'array', items: link, description: 'self and bookmark' };

/** A member of a resource: the microversion that brought it and its schema. */
type Member = readonly [since: string, schema: JsonSchema];
/** A resource's members in Ironic's order, and the version the resource itself came with. */
export interface Members {
  first: string;
  members: Readonly<Record<string, Member>>;
  /** every member is written at every version (port groups: their versions gate `fields` and writes only) */
  everyVersion?: boolean;
}

const isNewer = (since: string, first: string) => {
  const [a, b] = since.split('.').map(Number);
  const [c, d] = first.split('.').map(Number);
  return a! > c! || (a === c && b! > d!);
};

/** A resource's response schema, from its members. */
function resource(description: string, r: Members): JsonSchema {
  const newer = (since: string) => !r.everyVersion && isNewer(since, r.first);
  return {
    type: 'object',
    description,
    properties: Object.fromEntries(
      Object.entries(r.members).map(([name, [since, schema]]) => {
        const note = newer(since) ? `from ${since}` : r.everyVersion && isNewer(since, r.first) ? `\`fields=\` and writes from ${since}` : undefined;
        return [name, note ? { ...schema, description: schema.description ? `${note}: ${schema.description}` : note } : schema];
      }),
    ),
    required: Object.entries(r.members)
      .filter(([, [since]]) => !newer(since))
      .map(([name]) => name),
  };
}

/** The same members, as `fields=` or a list's short form shows them: any may be absent but `links`. */
function selection(of: JsonSchema, what: string): JsonSchema {
  return {
    type: 'object',
    description: `${what} as \`fields=\` or a list without detail shows it: the members asked for (or the list's defaults), links always`,
    properties: of.properties!,
    required: ['links'],
  };
}

/** `{"<key>": [...], "next": "<url>"}` */
const list = (key: string, items: JsonSchema, what: string): JsonSchema => ({
  type: 'object',
  properties: { [key]: { type: 'array', items }, next: { type: 'string', description: `the next page's URL, when this page is full` } },
  required: [key],
  description: what,
});

/** The version that brought each of a node's interface fields (most came with 1.31). */
const INTERFACE_SINCE: Record<string, string> = {
  bios_interface: '1.40',
  network_interface: '1.20',
  rescue_interface: '1.38',
  storage_interface: '1.33',
};
/** an interface's name; null in the reference's samples of a node whose driver does not set it (allot's nodes always name one) */
const iface = (name: string): Member => [INTERFACE_SINCE[name] ?? '1.31', nstr];

/** A node's members, in the order Ironic writes them. */
export const NODE: Members = {
  first: '1.1',
  members: {
    uuid: ['1.1', str],
    created_at: ['1.1', time],
    updated_at: ['1.1', ntime],
    automated_clean: ['1.47', nbool],
    bios_interface: iface('bios_interface'),
    boot_interface: iface('boot_interface'),
    boot_mode: ['1.75', nstr],
    clean_step: ['1.7', doc],
    conductor_group: ['1.46', str],
    console_enabled: ['1.1', bool],
    console_interface: iface('console_interface'),
    deploy_interface: iface('deploy_interface'),
    deploy_step: ['1.44', doc],
    description: ['1.51', nstr],
    driver: ['1.1', str],
    driver_info: ['1.1', { type: 'object', description: 'secrets masked as ******' }],
    driver_internal_info: ['1.3', doc],
    extra: ['1.1', doc],
    fault: ['1.42', nstr],
    inspection_finished_at: ['1.6', ntime],
    inspection_started_at: ['1.6', ntime],
    inspect_interface: iface('inspect_interface'),
    instance_info: ['1.1', { type: 'object', description: 'secrets masked as ******' }],
    instance_uuid: ['1.1', nstr],
    last_error: ['1.1', nstr],
    lessee: ['1.65', nstr],
    maintenance: ['1.1', bool],
    maintenance_reason: ['1.1', nstr],
    management_interface: iface('management_interface'),
    name: ['1.5', nstr],
    network_data: ['1.66', doc],
    network_interface: iface('network_interface'),
    owner: ['1.50', nstr],
    power_interface: iface('power_interface'),
    power_state: ['1.1', nstr],
    properties: ['1.1', doc],
    protected: ['1.48', bool],
    protected_reason: ['1.48', nstr],
    provision_state: ['1.1', { type: ['string', 'null'], description: 'null for `available` before 1.2; `inspecting` for `inspect wait` before 1.39' }],
    provision_updated_at: ['1.1', ntime],
    raid_config: ['1.12', doc],
    raid_interface: iface('raid_interface'),
    rescue_interface: iface('rescue_interface'),
    reservation: ['1.1', { type: ['string', 'null'], description: 'the conductor holding the node, while an operation runs' }],
    resource_class: ['1.21', nstr],
    retired: ['1.61', bool],
    retired_reason: ['1.61', nstr],
    secure_boot: ['1.75', nbool],
    shard: ['1.82', nstr],
    storage_interface: iface('storage_interface'),
    target_power_state: ['1.1', nstr],
    target_provision_state: ['1.1', nstr],
    target_raid_config: ['1.12', doc],
    traits: ['1.37', strings],
    vendor_interface: iface('vendor_interface'),
    links: ['1.1', links],
    conductor: ['1.49', { type: ['string', 'null'], description: 'the conductor servicing the node' }],
    allocation_uuid: ['1.52', nstr],
    chassis_uuid: ['1.1', nstr],
    ports: ['1.1', links],
    states: ['1.14', links],
    portgroups: ['1.24', links],
    volume: ['1.32', links],
  },
};

export const ALLOCATION: Members = {
  first: '1.52',
  members: {
    uuid: ['1.52', str],
    created_at: ['1.52', time],
    updated_at: ['1.52', ntime],
    candidate_nodes: ['1.52', strings],
    extra: ['1.52', doc],
    last_error: ['1.52', nstr],
    name: ['1.52', nstr],
    owner: ['1.60', nstr],
    resource_class: ['1.52', nstr],
    state: ['1.52', { type: 'string', enum: ['allocating', 'active', 'error'] }],
    traits: ['1.52', strings],
    links: ['1.52', links],
    node_uuid: ['1.52', nstr],
  },
};

export const CHASSIS: Members = {
  first: '1.1',
  members: {
    uuid: ['1.1', str],
    created_at: ['1.1', time],
    updated_at: ['1.1', ntime],
    description: ['1.1', nstr],
    extra: ['1.1', doc],
    links: ['1.1', links],
    // a list holding the list of links: Ironic's own answer (a stray tuple in its chassis view)
    nodes: ['1.1', { type: 'array', items: links, description: 'one list: the links to the nodes in the chassis' }],
  },
};

export const PORTGROUP: Members = {
  first: '1.23',
  everyVersion: true,
  members: {
    uuid: ['1.23', str],
    created_at: ['1.23', time],
    updated_at: ['1.23', ntime],
    address: ['1.23', nstr],
    extra: ['1.23', doc],
    internal_info: ['1.23', doc],
    mode: ['1.26', str],
    name: ['1.23', nstr],
    properties: ['1.26', doc],
    standalone_ports_supported: ['1.23', bool],
    node_uuid: ['1.23', str],
    links: ['1.23', links],
    ports: ['1.24', links],
  },
};

export const PORT: Members = {
  first: '1.1',
  members: {
    uuid: ['1.1', str],
    created_at: ['1.1', time],
    updated_at: ['1.1', ntime],
    address: ['1.1', str],
    extra: ['1.1', doc],
    internal_info: ['1.18', doc],
    is_smartnic: ['1.53', bool],
    local_link_connection: ['1.19', doc],
    physical_network: ['1.34', nstr],
    pxe_enabled: ['1.19', bool],
    node_uuid: ['1.1', str],
    links: ['1.1', links],
    portgroup_uuid: ['1.24', nstr],
  },
};

const deployStep: JsonSchema = {
  type: 'object',
  properties: { interface: str, step: str, args: doc, priority: { type: 'integer' } },
  required: ['interface', 'step', 'args', 'priority'],
};

export const DEPLOY_TEMPLATE: Members = {
  first: '1.55',
  members: {
    uuid: ['1.55', str],
    created_at: ['1.55', time],
    updated_at: ['1.55', ntime],
    name: ['1.55', { type: 'string', description: 'a trait' }],
    extra: ['1.55', doc],
    links: ['1.55', links],
    steps: ['1.55', { type: 'array', items: deployStep }],
  },
};

export const VOLUME_CONNECTOR: Members = {
  first: '1.32',
  members: {
    uuid: ['1.32', str],
    created_at: ['1.32', time],
    updated_at: ['1.32', ntime],
    connector_id: ['1.32', str],
    extra: ['1.32', doc],
    type: ['1.32', { type: 'string', description: 'iqn, ip, mac, wwnn or wwpn' }],
    links: ['1.32', links],
    node_uuid: ['1.32', str],
  },
};

export const VOLUME_TARGET: Members = {
  first: '1.32',
  members: {
    uuid: ['1.32', str],
    created_at: ['1.32', time],
    updated_at: ['1.32', ntime],
    boot_index: ['1.32', { type: 'integer' }],
    extra: ['1.32', doc],
    properties: ['1.32', doc],
    volume_id: ['1.32', str],
    volume_type: ['1.32', str],
    links: ['1.32', links],
    node_uuid: ['1.32', str],
  },
};

export const CONDUCTOR: Members = {
  first: '1.49',
  members: {
    created_at: ['1.49', time],
    updated_at: ['1.49', { type: ['string', 'null'], description: 'its last heartbeat' }],
    hostname: ['1.49', str],
    conductor_group: ['1.49', str],
    drivers: ['1.49', strings],
    links: ['1.49', links],
    alive: ['1.49', bool],
  },
};

/** The interfaces a driver names a default and the enabled ones of (in the order Ironic writes them), and from which version. */
export const DRIVER_INTERFACES: Readonly<Record<string, string>> = {
  raid: '1.30',
  vendor: '1.30',
  network: '1.30',
  inspect: '1.30',
  boot: '1.30',
  bios: '1.40',
  rescue: '1.38',
  storage: '1.33',
  deploy: '1.30',
  management: '1.30',
  power: '1.30',
  console: '1.30',
};

const DRIVER: Members = {
  first: '1.1',
  members: {
    name: ['1.1', str],
    hosts: ['1.1', { type: 'array', items: str, description: 'the live conductors' }],
    links: ['1.1', links],
    properties: ['1.14', links],
    type: ['1.30', { type: 'string', description: '`dynamic`: a hardware type' }],
    ...Object.fromEntries(
      Object.entries(DRIVER_INTERFACES).flatMap(([kind, since]) => [
        [`default_${kind}_interface`, [since, { type: 'string', description: 'with detail' }]],
        [`enabled_${kind}_interfaces`, [since, { type: 'array', items: str, description: 'with detail' }]],
      ]),
    ),
  },
};

const nodeResponse = resource('a node; with `fields=`, a NodeSelection', NODE);
const allocation = resource('an allocation; with `fields=`, an AllocationSelection', ALLOCATION);
const chassisResponse = resource('a chassis; with `fields=`, a ChassisSelection', CHASSIS);
const portgroupResponse = resource(
  'a port group; with `fields=`, a PortgroupSelection. Every member is written at every version (from 1.23), as Ironic 21.4 does',
  PORTGROUP,
);
const portResponse = resource('a port; with `fields=`, a PortSelection', PORT);
const deployTemplateResponse = resource('a deploy template; with `fields=`, a DeployTemplateSelection', DEPLOY_TEMPLATE);
const connector = resource('a volume connector; with `fields=`, a VolumeConnectorSelection', VOLUME_CONNECTOR);
const target = resource('a volume target; with `fields=`, a VolumeTargetSelection', VOLUME_TARGET);
const conductor = resource('a conductor (an allot process); with `fields=` or in a list without detail, a ConductorSelection', CONDUCTOR);
const driver = resource('a driver (allot has one: fake-hardware); with `fields=` (1.77), a DriverSelection', DRIVER);

const version: JsonSchema = {
  type: 'object',
  properties: { id: str, links: { type: 'array', items: link }, status: str, min_version: str, version: str },
  required: ['id', 'links', 'status', 'min_version', 'version'],
};

const root: JsonSchema = {
  type: 'object',
  description: 'GET /: the API versions',
  properties: { name: str, description: str, default_version: version, versions: { type: 'array', items: version } },
  required: ['name', 'description', 'default_version', 'versions'],
};

const describedLink: JsonSchema = { type: 'object', properties: { href: str, rel: str, type: str }, required: ['href', 'rel'] };
const v1: JsonSchema = {
  type: 'object',
  description: "GET /v1: links to the resources the request's version has",
  properties: {
    id: str,
    links: { type: 'array', items: describedLink },
    media_types: { type: 'object', properties: { base: str, type: str }, required: ['base', 'type'] },
    chassis: links,
    nodes: links,
    ports: links,
    drivers: links,
    version,
    portgroups: { ...links, description: 'from 1.23' },
    volume: { ...links, description: 'from 1.32' },
    conductors: { ...links, description: 'from 1.49' },
    allocations: { ...links, description: 'from 1.52' },
    deploy_templates: { ...links, description: 'from 1.55' },
  },
  required: ['id', 'links', 'media_types', 'chassis', 'nodes', 'ports', 'drivers', 'version'],
};

const error: JsonSchema = {
  type: 'object',
  description: "Ironic's error document",
  properties: {
    error_message: {
      type: 'string',
      description: 'a JSON document as text: {"faultcode", "faultstring", "debuginfo"} or, for routing and version errors, {"code", "title", "description"}',
    },
  },
  required: ['error_message'],
};

const nodeStates: JsonSchema = {
  type: 'object',
  description: "a node's states",
  properties: {
    console_enabled: bool,
    last_error: nstr,
    power_state: nstr,
    provision_state: NODE.members.provision_state![1],
    target_power_state: nstr,
    target_provision_state: nstr,
    provision_updated_at: ntime,
    raid_config: { ...doc, description: 'from 1.12' },
    target_raid_config: { ...doc, description: 'from 1.12' },
    boot_mode: { ...nstr, description: 'from 1.75' },
    secure_boot: { ...nbool, description: 'from 1.75' },
  },
  required: ['console_enabled', 'last_error', 'power_state', 'provision_state', 'target_power_state', 'target_provision_state', 'provision_updated_at'],
};

const nodeTraitList: JsonSchema = { type: 'object', properties: { traits: strings }, required: ['traits'] };

const nodeValidation: JsonSchema = {
  type: 'object',
  description: 'interface (boot, deploy, management, network, power, bios, console, inspect, raid, rescue, storage) → its validation',
  additionalProperties: {
    type: 'object',
    properties: { result: nbool, reason: { type: 'string', description: 'why it failed, or is not supported' } },
    required: ['result'],
  },
};

const nodeVifs: JsonSchema = {
  type: 'object',
  properties: { vifs: { type: 'array', items: { type: 'object', properties: { id: str }, required: ['id'] } } },
  required: ['vifs'],
};

const bootDevice: JsonSchema = {
  type: 'object',
  properties: { boot_device: nstr, persistent: nbool },
  required: ['boot_device', 'persistent'],
};
const supportedBootDevices: JsonSchema = { type: 'object', properties: { supported_boot_devices: strings }, required: ['supported_boot_devices'] };
const consoleState: JsonSchema = {
  type: 'object',
  properties: { console_enabled: bool, console_info: { type: ['object', 'null'], description: 'how to reach the console, while enabled' } },
  required: ['console_enabled', 'console_info'],
};

const volumeLinks: JsonSchema = {
  type: 'object',
  description: 'GET /v1/volume (or a node’s): links to the connectors and targets',
  properties: { links, connectors: links, targets: links },
  required: ['links', 'connectors', 'targets'],
};

const describedStrings = (description: string): JsonSchema => ({ type: 'object', additionalProperties: str, description });

const nodeSelection = selection(nodeResponse, 'a node');
const allocationSelection = selection(allocation, 'an allocation');
const chassisSelection = selection(chassisResponse, 'a chassis');
const portgroupSelection = selection(portgroupResponse, 'a port group');
const portSelection = selection(portResponse, 'a port');
const deployTemplateSelection = selection(deployTemplateResponse, 'a deploy template');
const connectorSelection = selection(connector, 'a volume connector');
const targetSelection = selection(target, 'a volume target');
const conductorSelection = selection(conductor, 'a conductor');
const driverSelection = selection(driver, 'a driver');

/** The responses' schemas, as components of the OpenAPI document. */
export const RESPONSE_SCHEMAS = {
  IronicError: error,
  Link: link,
  Version: version,
  Root: root,
  V1: v1,
  Node: nodeResponse,
  NodeSelection: nodeSelection,
  NodeList: list('nodes', nodeSelection, 'GET /v1/nodes (and a chassis’s nodes): with detail=True (1.43) whole nodes'),
  NodeDetailList: list('nodes', nodeResponse, 'GET /v1/nodes/detail'),
  NodeStates: nodeStates,
  NodeTraits: nodeTraitList,
  NodeValidation: nodeValidation,
  NodeVifs: nodeVifs,
  BootDevice: bootDevice,
  SupportedBootDevices: supportedBootDevices,
  ConsoleState: consoleState,
  Allocation: allocation,
  AllocationSelection: allocationSelection,
  AllocationList: list('allocations', allocationSelection, 'GET /v1/allocations: whole allocations unless `fields=`'),
  Chassis: chassisResponse,
  ChassisSelection: chassisSelection,
  ChassisList: list('chassis', chassisSelection, 'GET /v1/chassis: with detail=True (1.43) whole chassis'),
  ChassisDetailList: list('chassis', chassisResponse, 'GET /v1/chassis/detail'),
  Portgroup: portgroupResponse,
  PortgroupSelection: portgroupSelection,
  PortgroupList: list('portgroups', portgroupSelection, 'GET /v1/portgroups (and a node’s): with detail=True (1.43) whole port groups'),
  PortgroupDetailList: list('portgroups', portgroupResponse, 'GET /v1/portgroups/detail'),
  Port: portResponse,
  PortSelection: portSelection,
  PortList: list('ports', portSelection, 'GET /v1/ports (and a node’s, a port group’s): with detail=True (1.43) whole ports'),
  PortDetailList: list('ports', portResponse, 'GET /v1/ports/detail'),
  VolumeLinks: volumeLinks,
  VolumeConnector: connector,
  VolumeConnectorSelection: connectorSelection,
  VolumeConnectorList: list('connectors', connectorSelection, 'GET /v1/volume/connectors (and a node’s): with detail=True whole connectors'),
  VolumeTarget: target,
  VolumeTargetSelection: targetSelection,
  VolumeTargetList: list('targets', targetSelection, 'GET /v1/volume/targets (and a node’s): with detail=True whole targets'),
  DeployTemplate: deployTemplateResponse,
  DeployTemplateSelection: deployTemplateSelection,
  DeployTemplateList: list('deploy_templates', deployTemplateSelection, 'GET /v1/deploy_templates: with detail=True whole templates'),
  Conductor: conductor,
  ConductorSelection: conductorSelection,
  ConductorList: list('conductors', conductorSelection, 'GET /v1/conductors: hostname, conductor_group, alive and links; with detail=True whole conductors'),
  Driver: driver,
  DriverSelection: driverSelection,
  DriverList: {
    type: 'object',
    properties: { drivers: { type: 'array', items: driverSelection } },
    required: ['drivers'],
    description: 'GET /v1/drivers: whole drivers unless `fields=` (1.77)',
  },
  DriverProperties: describedStrings("a driver's properties: name → what it means"),
  RaidLogicalDiskProperties: describedStrings("a RAID logical disk's properties: name → what it means"),
} satisfies Record<string, JsonSchema>;

/** The name of a response schema (what an endpoint's `response` names). */
export type ResponseName = keyof typeof RESPONSE_SCHEMAS;

/**
 * Bare metal's wire types by name, in the order scripts/wire-types.ts writes them to
 * src/client/baremetal-wire.ts (what the server's views and the typed client use): the request
 * bodies the client sends, then the responses. A schema named here is written by its name wherever
 * it appears.
 */
export const WIRE_TYPES: Record<string, JsonSchema> = {
  JsonPatch: patch,
  NodeCreate: nodeCreate,
  NodeTraitsPut: nodeTraits,
  AllocationCreate: allocationCreate,
  ...RESPONSE_SCHEMAS,
};
