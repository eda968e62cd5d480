// Every JSON schema of the bare-metal API, in one place. Property order is Ironic's where it
// decides which of two errors is reported (the validator reports the first, as Ironic's does).
import type { JsonSchema } from '../core/json-schema.js';
import { CUSTOM_TRAIT_PATTERN, INTERFACES, STANDARD_TRAITS } from './core/rules.js';

const nullableString = (maxLength?: number): JsonSchema => (maxLength ? { type: ['string', 'null'], maxLength } : { type: ['string', 'null'] });
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
    resource_class: nullableString(80),
    properties: { type: ['object', 'null'] },
    extra: { type: ['object', 'null'] },
    driver_info: { type: ['object', 'null'] },
    instance_info: { type: ['object', 'null'] },
    instance_uuid: nullableString(),
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
    resource_class: { type: ['string', 'null'], maxLength: 80 },
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
