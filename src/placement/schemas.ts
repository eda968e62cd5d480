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

// --- responses: the server's views are typed by them (WIRE_TYPES below), openapi.ts describes them ---
//
// Each describes the answer at the newest microversion; a member that only some microversions
// write is optional, its description says from which (and where an older answer has another
// shape, as the candidates' allocation requests before 1.12, both shapes are a oneOf), so the
// types say what is true at whichever microversion a client asks for.

/** `#/components/schemas/<name>`: a response schema of the document. */
export const schemaRef = (name: ResponseName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const link: JsonSchema = { type: 'object', properties: { rel: { type: 'string' }, href: { type: 'string' } }, required: ['rel', 'href'] };
const links = (description: string): JsonSchema => ({ type: 'array', items: link, description });
/** a resource class → an amount */
const resourceAmounts: JsonSchema = { type: 'object', additionalProperties: { type: 'integer' }, description: 'resource class → amount' };
const generation: JsonSchema = { type: 'integer' };

const errors: JsonSchema = {
  type: 'object',
  description: "Placement's error document",
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          status: { type: 'integer' },
          title: { type: 'string' },
          detail: { type: 'string' },
          request_id: { type: 'string' },
          code: { type: 'string', description: '1.23+: placement.*' },
        },
        required: ['status', 'title', 'detail', 'request_id'],
      },
    },
  },
  required: ['errors'],
};

const versions: JsonSchema = {
  type: 'object',
  properties: {
    versions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          min_version: { type: 'string' },
          max_version: { type: 'string' },
          status: { type: 'string' },
          links: { type: 'array', items: link },
        },
        required: ['id', 'min_version', 'max_version', 'status', 'links'],
      },
    },
  },
  required: ['versions'],
};

const provider: JsonSchema = {
  type: 'object',
  properties: {
    uuid: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    generation,
    parent_provider_uuid: { type: ['string', 'null'], description: '1.14+' },
    root_provider_uuid: { type: 'string', description: '1.14+' },
    links: links('self, inventories, usages; aggregates 1.1+, traits 1.6+, allocations 1.11+'),
  },
  required: ['uuid', 'name', 'generation', 'links'],
};

const inventoryRecord: JsonSchema = {
  type: 'object',
  properties: {
    total: { type: 'integer' },
    reserved: { type: 'integer' },
    min_unit: { type: 'integer' },
    max_unit: { type: 'integer' },
    step_size: { type: 'integer' },
    allocation_ratio: { type: 'number', description: 'written as a float (1.0)' },
  },
  required: ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'],
};

const providerGeneration = { resource_provider_generation: generation };

/** A class's inventory with the provider's generation (GET, PUT and POST of one class). */
const inventoryWithGeneration: JsonSchema = {
  type: 'object',
  properties: { ...providerGeneration, ...inventoryRecord.properties },
  required: ['resource_provider_generation', ...inventoryRecord.required!],
};

const inventories: JsonSchema = {
  type: 'object',
  properties: { ...providerGeneration, inventories: { type: 'object', additionalProperties: inventoryRecord, description: 'resource class → inventory' } },
  required: ['resource_provider_generation', 'inventories'],
};

const providerUsages: JsonSchema = {
  type: 'object',
  properties: { ...providerGeneration, usages: resourceAmounts },
  required: ['resource_provider_generation', 'usages'],
};

const totalUsages: JsonSchema = {
  type: 'object',
  properties: {
    usages: {
      type: 'object',
      description: 'before 1.38 resource class → amount; 1.38+ consumer type (or `all`, `unknown`) → its consumer count and amounts',
      additionalProperties: {
        oneOf: [
          { type: 'integer' },
          { type: 'object', properties: { consumer_count: { type: 'integer' } }, required: ['consumer_count'], additionalProperties: { type: 'integer' } },
        ],
      },
    },
  },
  required: ['usages'],
};

const providerAggregatesView: JsonSchema = {
  type: 'object',
  properties: {
    aggregates: { type: 'array', items: { type: 'string' }, description: 'aggregate uuids as they were sent' },
    resource_provider_generation: { type: 'integer', description: '1.19+' },
  },
  required: ['aggregates'],
};

const traitNames: JsonSchema = { type: 'array', items: { type: 'string' } };
const providerTraitsView: JsonSchema = {
  type: 'object',
  properties: { ...providerGeneration, traits: traitNames },
  required: ['resource_provider_generation', 'traits'],
};
const traitList: JsonSchema = { type: 'object', properties: { traits: traitNames }, required: ['traits'] };

const resourceClass: JsonSchema = { type: 'object', properties: { name: { type: 'string' }, links: links('self') }, required: ['name', 'links'] };
const resourceClassList: JsonSchema = {
  type: 'object',
  properties: { resource_classes: { type: 'array', items: resourceClass } },
  required: ['resource_classes'],
};
const providerList: JsonSchema = { type: 'object', properties: { resource_providers: { type: 'array', items: provider } }, required: ['resource_providers'] };

const consumerAllocations: JsonSchema = {
  type: 'object',
  description: 'a consumer without allocations answers `{"allocations": {}}` alone',
  properties: {
    allocations: {
      type: 'object',
      description: 'provider uuid → its generation and the resources held there',
      additionalProperties: { type: 'object', properties: { generation, resources: resourceAmounts }, required: ['generation', 'resources'] },
    },
    project_id: { type: 'string', description: '1.12+' },
    user_id: { type: 'string', description: '1.12+' },
    consumer_generation: { type: 'integer', description: '1.28+' },
    consumer_type: { type: 'string', description: '1.38+ (`unknown` for a consumer written without one)' },
  },
  required: ['allocations'],
};

const heldResources: JsonSchema = { type: 'object', properties: { resources: resourceAmounts }, required: ['resources'] };

const providerAllocations: JsonSchema = {
  type: 'object',
  properties: {
    ...providerGeneration,
    allocations: { type: 'object', additionalProperties: heldResources, description: 'consumer uuid → the resources it holds here' },
  },
  required: ['resource_provider_generation', 'allocations'],
};

const allocationRequest: JsonSchema = {
  type: 'object',
  description: '1.12+',
  properties: {
    allocations: { type: 'object', additionalProperties: heldResources, description: 'provider uuid → resources' },
    mappings: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      description: '1.34+: request group suffix → the providers that satisfied it',
    },
  },
  required: ['allocations'],
};

const legacyAllocationRequest: JsonSchema = {
  type: 'object',
  description: '1.10–1.11: a list of providers and resources',
  properties: {
    allocations: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          resource_provider: { type: 'object', properties: { uuid: { type: 'string' } }, required: ['uuid'] },
          resources: resourceAmounts,
        },
        required: ['resource_provider', 'resources'],
      },
    },
  },
  required: ['allocations'],
};

const providerSummary: JsonSchema = {
  type: 'object',
  properties: {
    resources: {
      type: 'object',
      description: 'resource class → capacity and use: the requested classes before 1.27, every inventory from 1.27',
      additionalProperties: { type: 'object', properties: { capacity: { type: 'integer' }, used: { type: 'integer' } }, required: ['capacity', 'used'] },
    },
    traits: { type: 'array', items: { type: 'string' }, description: '1.17+' },
    parent_provider_uuid: { type: ['string', 'null'], description: '1.29+' },
    root_provider_uuid: { type: 'string', description: '1.29+' },
  },
  required: ['resources'],
};

const allocationCandidates: JsonSchema = {
  type: 'object',
  properties: {
    allocation_requests: { type: 'array', items: { oneOf: [allocationRequest, legacyAllocationRequest] } },
    provider_summaries: {
      type: 'object',
      additionalProperties: providerSummary,
      description: 'provider uuid → summary: of the providers the requests use; 1.29+ of every provider in their trees',
    },
  },
  required: ['allocation_requests', 'provider_summaries'],
};

/** The responses' schemas, as components of the OpenAPI document. */
export const RESPONSE_SCHEMAS = {
  Errors: errors,
  PlacementVersions: versions,
  ResourceProvider: provider,
  ResourceProviderList: providerList,
  InventoryRecord: inventoryRecord,
  InventoryWithGeneration: inventoryWithGeneration,
  Inventories: inventories,
  ProviderUsages: providerUsages,
  TotalUsages: totalUsages,
  ProviderAggregates: providerAggregatesView,
  ProviderTraits: providerTraitsView,
  TraitList: traitList,
  ResourceClass: resourceClass,
  ResourceClassList: resourceClassList,
  ConsumerAllocations: consumerAllocations,
  ProviderAllocations: providerAllocations,
  AllocationRequest: allocationRequest,
  LegacyAllocationRequest: legacyAllocationRequest,
  ProviderSummary: providerSummary,
  AllocationCandidates: allocationCandidates,
} satisfies Record<string, JsonSchema>;

/** The name of a response schema (what an endpoint's `response` names). */
export type ResponseName = keyof typeof RESPONSE_SCHEMAS;

/**
 * Placement's wire types by name, in the order scripts/wire-types.ts writes them to
 * src/client/placement-wire.ts (what the server's views and the typed client use): request bodies
 * — a version table is the union of its entries, a body some microversion accepts — and
 * responses. A schema named here is written by its name wherever it appears.
 */
export const WIRE_TYPES: Record<string, JsonSchema | Record<string, JsonSchema>> = {
  Link: link,
  Resources: resourceAmounts,
  ProviderCreate: providerCreate,
  ProviderUpdate: providerUpdate,
  Inventory: inventoriesReplace.properties!.inventories!.patternProperties![RESOURCE_CLASS_PATTERN]!,
  InventoriesPut: inventoriesReplace,
  InventoryPut: inventoryUpdate,
  InventoryPost: inventoryCreate,
  AggregatesPut: providerAggregates,
  ProviderTraitsPut: providerTraits,
  ResourceClassCreate: customResourceClass,
  AllocationsPut: allocationsPut,
  AllocationsPost: allocationsPost,
  ReshapeRequest: reshaper,
  ...RESPONSE_SCHEMAS,
};
