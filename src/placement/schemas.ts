// Every JSON schema of the Placement API — request bodies and query strings — each a table keyed by
// the microversion that introduced that form (the request's version picks the entry, see
// core/microversion.ts `byVersion`).
//
// These are Placement's own schemas as data, key for key and in the order Placement builds them:
// clients read the text of a validation error, which prints the failing schema and is chosen by
// walking the keywords in order (core/json-schema.ts). scripts/schema-differential.py checks
// every one against Placement's validator.
import { CANDIDATE_STRATEGIES } from '../core/candidate-strategies.js';
import { MAX_FLOAT, MAX_INT } from '../core/capacity.js';
import type { JsonSchema } from '../core/json-schema.js';

export const UUID_PATTERN = '^[0-9a-fA-F-]{36}$';
export const RESOURCE_CLASS_PATTERN = '^[A-Z0-9_]+$';
const CUSTOM_PATTERN = '^CUSTOM_[A-Z0-9_]+$';
const CONSUMER_TYPE_GET_PATTERN = `${RESOURCE_CLASS_PATTERN}|^all|^unknown$`;
/** request group suffixes: numbers before 1.33, then up to 64 of these characters */
const GROUP_PAT = '[1-9][0-9]*';
const GROUP_PAT_1_33 = '[a-zA-Z0-9_-]{1,64}';

const uuid = (): JsonSchema => ({ type: 'string', format: 'uuid' });
const idField = (): JsonSchema => ({ type: 'string', minLength: 1, maxLength: 255 });

// --- resource providers ---

const providerBase = (): JsonSchema => ({
  type: 'object',
  properties: { name: { type: 'string', maxLength: 200 }, uuid: uuid() },
  required: ['name'],
  additionalProperties: false,
});
const parentUuid = (): JsonSchema => ({ anyOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }] });
const withParent = (s: JsonSchema): JsonSchema => ({ ...s, properties: { ...s.properties, parent_provider_uuid: parentUuid() } });
const withoutUuid = (s: JsonSchema): JsonSchema => {
  const { uuid: _, ...properties } = s.properties!;
  return { ...s, properties };
};

export const providerCreate: Record<string, JsonSchema> = {
  '1.0': providerBase(),
  '1.14': withParent(providerBase()),
};

export const providerUpdate: Record<string, JsonSchema> = {
  '1.0': withoutUuid(providerBase()),
  '1.14': withoutUuid(withParent(providerBase())),
};

const providerQuery = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { name: { type: 'string' }, uuid: uuid(), ...extra },
  additionalProperties: false,
});
export const providerListQuery: Record<string, JsonSchema> = {
  '1.0': providerQuery({}),
  '1.3': providerQuery({ member_of: { type: 'string' } }),
  '1.4': providerQuery({ member_of: { type: 'string' }, resources: { type: 'string' } }),
  '1.14': providerQuery({ member_of: { type: 'string' }, resources: { type: 'string' }, in_tree: uuid() }),
  '1.18': providerQuery({ member_of: { type: 'string' }, resources: { type: 'string' }, in_tree: uuid(), required: { type: 'string' } }),
};

// --- inventories ---

const amount = (minimum: number): JsonSchema => ({ type: 'integer', maximum: MAX_INT, minimum });
const inventoryBase = (required: string[]): JsonSchema => ({
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    total: amount(1),
    reserved: amount(0),
    min_unit: amount(1),
    max_unit: amount(1),
    step_size: amount(1),
    allocation_ratio: { type: 'number', maximum: MAX_FLOAT },
  },
  required,
  additionalProperties: false,
});

/** PUT of one class: `total` and the provider's generation. */
export const inventoryUpdate: JsonSchema = inventoryBase(['total', 'resource_provider_generation']);

/** POST of one class: the generation may be given, and is not checked. */
export const inventoryCreate: JsonSchema = (() => {
  const base = inventoryBase(['total', 'resource_class']);
  return { ...base, properties: { ...base.properties, resource_class: { type: 'string', pattern: RESOURCE_CLASS_PATTERN } } };
})();

export const inventoriesReplace: JsonSchema = {
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    inventories: { type: 'object', patternProperties: { [RESOURCE_CLASS_PATTERN]: inventoryBase(['total']) } },
  },
  required: ['resource_provider_generation', 'inventories'],
  additionalProperties: false,
};

// --- traits, resource classes, aggregates ---

export const traitListQuery: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, associated: { type: 'string' } },
  additionalProperties: false,
};

/** A provider's traits: any name here; names that are not traits are refused afterwards. */
export const providerTraits: JsonSchema = {
  type: 'object',
  properties: {
    traits: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 255 } },
    resource_provider_generation: { type: 'integer' },
  },
  required: ['traits', 'resource_provider_generation'],
  additionalProperties: false,
};

export const customResourceClass: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string', pattern: CUSTOM_PATTERN, maxLength: 255 } },
  required: ['name'],
  additionalProperties: false,
};

const aggregateList = (): JsonSchema => ({ type: 'array', items: { type: 'string', format: 'uuid' }, uniqueItems: true });
export const providerAggregates: Record<string, JsonSchema> = {
  '1.1': aggregateList(),
  '1.19': {
    type: 'object',
    properties: { aggregates: aggregateList(), resource_provider_generation: { type: 'integer' } },
    required: ['aggregates', 'resource_provider_generation'],
    additionalProperties: false,
  },
};

// --- allocations ---

const resources = (): JsonSchema => ({
  type: 'object',
  minProperties: 1,
  patternProperties: { [RESOURCE_CLASS_PATTERN]: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
});

/** 1.0–1.11: a list of {resource_provider: {uuid}, resources}; from 1.8 with the owner. */
const allocationList = (withOwner: boolean): JsonSchema => ({
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: { type: 'object', properties: { uuid: uuid() }, additionalProperties: false, required: ['uuid'] },
          resources: resources(),
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
    ...(withOwner ? { project_id: idField(), user_id: idField() } : {}),
  },
  required: withOwner ? ['allocations', 'project_id', 'user_id'] : ['allocations'],
  additionalProperties: false,
});

/** 1.12+: a dict keyed by provider uuid, plus what each later microversion added. */
function allocationDict(opts: { minProviders: number; generation?: boolean; mappings?: boolean; consumerType?: boolean }): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    allocations: {
      type: 'object',
      minProperties: opts.minProviders,
      patternProperties: {
        [UUID_PATTERN]: {
          type: 'object',
          properties: { generation: { type: 'integer' }, resources: resources() },
          required: ['resources'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    project_id: idField(),
    user_id: idField(),
  };
  const required = ['allocations', 'project_id', 'user_id'];
  if (opts.generation) {
    // (Placement's schema carries additionalProperties here; it does nothing, and is printed.)
    properties.consumer_generation = { type: ['integer', 'null'], additionalProperties: false };
    required.push('consumer_generation');
  }
  if (opts.mappings) {
    properties.mappings = {
      type: 'object',
      minProperties: 1,
      patternProperties: { [GROUP_PAT_1_33]: { type: 'array', minItems: 1, items: { type: 'string', format: 'uuid' } } },
    };
  }
  if (opts.consumerType) {
    properties.consumer_type = { type: 'string', pattern: RESOURCE_CLASS_PATTERN, minLength: 1, maxLength: 255 };
    required.push('consumer_type');
  }
  return { type: 'object', properties, additionalProperties: false, required };
}

const consumerSection = {
  v1_13: () => allocationDict({ minProviders: 0 }),
  v1_28: () => allocationDict({ minProviders: 0, generation: true }),
  v1_34: () => allocationDict({ minProviders: 0, generation: true, mappings: true }),
  v1_38: () => allocationDict({ minProviders: 0, generation: true, mappings: true, consumerType: true }),
};

export const allocationsPut: Record<string, JsonSchema> = {
  '1.0': allocationList(false),
  '1.8': allocationList(true),
  '1.12': allocationDict({ minProviders: 1 }),
  '1.28': consumerSection.v1_28(),
  '1.34': consumerSection.v1_34(),
  '1.38': consumerSection.v1_38(),
};

const allocationsByConsumer = (section: JsonSchema, minProperties: number): JsonSchema => ({
  type: 'object',
  minProperties,
  additionalProperties: false,
  patternProperties: { [UUID_PATTERN]: section },
});

export const allocationsPost: Record<string, JsonSchema> = {
  '1.13': allocationsByConsumer(consumerSection.v1_13(), 1),
  '1.28': allocationsByConsumer(consumerSection.v1_28(), 1),
  '1.34': allocationsByConsumer(consumerSection.v1_34(), 1),
  '1.38': allocationsByConsumer(consumerSection.v1_38(), 1),
};

// --- reshaper ---

const reshape = (section: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    inventories: { type: 'object', patternProperties: { [UUID_PATTERN]: inventoriesReplace }, minProperties: 1, additionalProperties: false },
    allocations: allocationsByConsumer(section, 0),
  },
  required: ['inventories', 'allocations'],
  additionalProperties: false,
});

export const reshaper: Record<string, JsonSchema> = {
  '1.30': reshape(consumerSection.v1_28()),
  '1.34': reshape(consumerSection.v1_34()),
  '1.38': reshape(consumerSection.v1_38()),
};

// --- usages ---

const usages = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { project_id: idField(), user_id: idField(), ...extra },
  required: ['project_id'],
  additionalProperties: false,
});
export const usagesQuery: Record<string, JsonSchema> = {
  '1.9': usages({}),
  '1.38': usages({ consumer_type: { type: 'string', pattern: CONSUMER_TYPE_GET_PATTERN, minLength: 1, maxLength: 255 } }),
};

// --- allocation candidates ---

/** allot's own parameter, checked on its own so that Placement's schemas print as Placement prints them. */
export const ALLOT_STRATEGY = 'allot_strategy';
export const strategyQuery: JsonSchema = { type: 'string', enum: [...CANDIDATE_STRATEGIES] };
const limit: JsonSchema = { type: ['integer', 'string'], pattern: '^[1-9][0-9]*$', minimum: 1, minLength: 1 };

const flat = (props: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { resources: { type: 'string' }, ...props },
  required: ['resources'],
  additionalProperties: false,
});
const grouped = (suffix: string, kinds: string[], props: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { limit, group_policy: { type: 'string', enum: ['none', 'isolate'] }, ...props },
  additionalProperties: false,
  patternProperties: Object.fromEntries(kinds.map((k) => [`^${k}(${suffix})?$`, { type: 'string' }])),
});
const GROUP_KINDS = ['resources', 'required', 'member_of'];

export const candidatesQuery: Record<string, JsonSchema> = {
  '1.10': flat({}),
  '1.16': flat({ limit }),
  '1.17': flat({ limit, required: { type: ['string'] } }),
  '1.21': flat({ limit, required: { type: ['string'] }, member_of: { type: ['string'] } }),
  '1.25': grouped(GROUP_PAT, GROUP_KINDS, {}),
  '1.31': grouped(GROUP_PAT, [...GROUP_KINDS, 'in_tree'], {}),
  '1.33': grouped(GROUP_PAT_1_33, [...GROUP_KINDS, 'in_tree'], {}),
  '1.35': grouped(GROUP_PAT_1_33, [...GROUP_KINDS, 'in_tree'], { root_required: { type: ['string'] } }),
  '1.36': grouped(GROUP_PAT_1_33, [...GROUP_KINDS, 'in_tree'], { root_required: { type: ['string'] }, same_subtree: { type: ['string'] } }),
};
