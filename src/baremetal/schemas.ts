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
