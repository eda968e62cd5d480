// Every JSON schema of the identifier API: bodies and query strings, and the responses the
// OpenAPI document describes. The same objects validate requests (core/json-schema.ts) and
// describe them in the OpenAPI document (openapi.ts), so the two cannot drift apart.
import type { JsonSchema } from '../core/json-schema.js';
import { PROBLEM_CODES } from './errors.js';
import { MAX_LABELS } from './core/metadata.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';

/** Paging parameters of every list. */
const PAGE_QUERY: Record<string, JsonSchema> = {
  limit: { type: 'string', pattern: '^([1-9]\\d{0,2}|1000)$', description: 'page size, 1–1000 (default 100)' },
  cursor: { type: 'string', maxLength: 512, description: 'next_cursor of the previous page' },
};

const name: JsonSchema = { type: 'string', pattern: NAME_PATTERN, description: 'letters, digits, ".", "_", "-"; up to 100' };
const text = (max: number): JsonSchema => ({ type: 'string', maxLength: max });
const owner: JsonSchema = { type: 'string', minLength: 1, maxLength: 255, description: 'who holds the value (any string: a service id, a device name, …)' };
const purpose: JsonSchema = { type: 'string', maxLength: 255, description: 'what the owner holds it for; owner + purpose is the idempotency key (default "")' };
const metadata: JsonSchema = { type: 'object', maxProperties: MAX_LABELS, description: 'free-form labels, kept as given' };
const strategy: JsonSchema = { type: 'string', enum: ['lowest', 'highest', 'random', 'next_after_last'] };
const poolKind: JsonSchema = { type: 'string', enum: ['integer', 'address', 'prefix'] };
const bound: JsonSchema = { type: ['integer', 'string'], description: 'an integer (integer pools) or an address (address/prefix pools)' };
const rangeItem: JsonSchema = {
  anyOf: [
    { type: 'integer', minimum: 0, maximum: MAX_SAFE },
    { type: 'string', minLength: 1, maxLength: 100 },
    { type: 'object', properties: { lower: bound, upper: bound }, required: ['lower', 'upper'], additionalProperties: false },
  ],
  description:
    'integer pools: 42, "100-200" or {"lower":100,"upper":200}; address/prefix pools: "10.0.0.0/24", "10.0.0.5", "10.0.0.10-10.0.0.20" or {"lower","upper"}',
};
const value: JsonSchema = {
  anyOf: [
    { type: 'integer', minimum: 0, maximum: MAX_SAFE },
    { type: 'string', minLength: 1, maxLength: 64 },
  ],
  description: 'an explicit value: an integer, an address, or a CIDR prefix for prefix pools',
};
const count: JsonSchema = {
  type: 'integer',
  minimum: 1,
  maximum: 4294967296,
  description: 'a contiguous block of this many values (a power of two), aligned on its size',
};
const prefixLength: JsonSchema = { type: 'integer', minimum: 0, maximum: 128 };
const ttl: JsonSchema = {
  type: 'integer',
  minimum: 1,
  maximum: 31536000,
  description: 'reserve for this many seconds: released unless confirmed with PATCH {"state":"allocated"}',
};

export const poolCreateSchema: JsonSchema = {
  type: 'object',
  properties: {
    name,
    kind: poolKind,
    ranges: { type: 'array', minItems: 1, maxItems: 1000, items: rangeItem },
    excluded: { type: 'array', maxItems: 10000, items: rangeItem },
    static: { type: 'array', maxItems: 1000, items: rangeItem, description: 'values automatic allocation never hands out; explicit requests may take them' },
    prefix_length: { ...prefixLength, description: 'prefix pools: length of the prefixes carved (requests may ask for another)' },
    exclude_network_and_broadcast: { type: 'boolean', description: 'IPv4 address pools given as CIDR: keep the first and last address out (default true)' },
    strategy: { ...strategy, description: 'default strategy of automatic allocation (default lowest)' },
    description: text(1000),
    metadata,
    project_id: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 64,
      description: 'the Keystone project that owns the pool (its readers read it, its members allocate from it); absent or null: shared by every project',
    },
  },
  required: ['name', 'kind', 'ranges'],
  additionalProperties: false,
};

export const poolPatchSchema: JsonSchema = {
  type: 'object',
  minProperties: 1,
  properties: {
    ranges: poolCreateSchema.properties!.ranges!,
    excluded: poolCreateSchema.properties!.excluded!,
    static: poolCreateSchema.properties!.static!,
    prefix_length: prefixLength,
    strategy,
    description: text(1000),
    metadata,
  },
  additionalProperties: false,
};

const requestProperties: Record<string, JsonSchema> = {
  owner,
  purpose,
  value,
  count,
  prefix_length: prefixLength,
  strategy,
  ttl_seconds: ttl,
  metadata,
};

export const allocateSchema: JsonSchema = {
  type: 'object',
  properties: { ...requestProperties, dry_run: { type: 'boolean', description: 'answer what would be allocated; hold nothing' } },
  required: ['owner'],
  additionalProperties: false,
};

const batchItem: JsonSchema = { type: 'object', properties: { pool: name, ...requestProperties }, required: ['pool', 'owner'], additionalProperties: false };

export const batchSchema: JsonSchema = {
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: batchItem,
    },
    dry_run: { type: 'boolean' },
  },
  required: ['allocations'],
  additionalProperties: false,
};

export const allocationPatchSchema: JsonSchema = {
  type: 'object',
  minProperties: 1,
  properties: {
    state: { type: 'string', enum: ['allocated'], description: 'confirm a reservation' },
    ttl_seconds: { ...ttl, description: 'extend a reservation to now + this many seconds' },
    metadata,
  },
  additionalProperties: false,
};

/** `schema`, or null (what removes a member in a merge patch). */
const orNull = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });

/**
 * The same changes as a JSON merge patch (`application/merge-patch+json`, RFC 7396): `metadata`
 * is merged into what is kept (null removes a label, or all of them), `description: null` clears it.
 */
export const poolMergePatchSchema: JsonSchema = {
  ...poolPatchSchema,
  properties: { ...poolPatchSchema.properties, description: orNull(text(1000)), metadata: orNull(metadata) },
};

export const allocationMergePatchSchema: JsonSchema = {
  ...allocationPatchSchema,
  properties: { ...allocationPatchSchema.properties, metadata: orNull(metadata) },
};

/** Items of one import: all of them are checked and written in one transaction. */
const MAX_IMPORT_ITEMS = 100_000;

const importItem: JsonSchema = {
  type: 'object',
  properties: { value, owner, purpose, count, prefix_length: prefixLength, metadata },
  required: ['value', 'owner'],
  additionalProperties: false,
};

export const importSchema: JsonSchema = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_IMPORT_ITEMS,
      items: importItem,
    },
    on_conflict: { type: 'string', enum: ['abort', 'skip'], description: 'abort (default): any conflict imports nothing; skip: import the rest' },
  },
  required: ['items'],
  additionalProperties: false,
};

const IMPORT_ITEM_KEYS = new Set(Object.keys(importItem.properties!));
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isIntegerIn = (v: unknown, min: number, max: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
/** A string of `min`–`max` characters: UTF-16 length bounds the count of code points the schema counts (only ever accepts). */
const isStringIn = (v: unknown, min: number, max: number) => typeof v === 'string' && v.length >= min && v.length <= max;

function importItemAccepted(item: unknown): boolean {
  if (!isPlainObject(item) || item.value === undefined || item.owner === undefined) return false;
  for (const key in item) if (!IMPORT_ITEM_KEYS.has(key)) return false;
  const v = item.value;
  if (!(isIntegerIn(v, 0, MAX_SAFE) || isStringIn(v, 1, 64))) return false;
  if (!isStringIn(item.owner, 1, 255)) return false;
  if (item.purpose !== undefined && !isStringIn(item.purpose, 0, 255)) return false;
  if (item.count !== undefined && !isIntegerIn(item.count, 1, 4294967296)) return false;
  if (item.prefix_length !== undefined && !isIntegerIn(item.prefix_length, 0, 128)) return false;
  const m = item.metadata;
  return m === undefined || (isPlainObject(m) && Object.keys(m).length <= 64);
}

/**
 * A quick check of an import's body that accepts only what importSchema accepts; when it says no,
 * the schema validator decides and words the error. (The generic validator, walking every keyword
 * of every item, cost ~0.1 s of an import of 10 000 items and much of its garbage: issue 15.)
 */
export function importBodyAccepted(body: unknown): boolean {
  if (!isPlainObject(body)) return false;
  for (const key in body) if (key !== 'items' && key !== 'on_conflict') return false;
  if (body.on_conflict !== undefined && body.on_conflict !== 'abort' && body.on_conflict !== 'skip') return false;
  const items = body.items;
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_IMPORT_ITEMS) return false;
  for (const item of items) if (!importItemAccepted(item)) return false;
  return true;
}

const query = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { ...PAGE_QUERY, ...properties },
  additionalProperties: false,
});

export const poolListQuery = query({ kind: poolKind });
export const allocationListQuery = query({
  pool: { type: 'string', maxLength: 100 },
  owner: { type: 'string', maxLength: 255 },
  purpose: { type: 'string', maxLength: 255 },
  state: { type: 'string', enum: ['allocated', 'reserved'] },
});
const valueParameter: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: "a value as the pool's kind writes it: an integer (105), an address (10.0.0.5), a prefix (10.0.1.0/24; a prefix pool also takes an address)",
};
export const poolAllocationListQuery = query({
  owner: allocationListQuery.properties!.owner!,
  purpose: allocationListQuery.properties!.purpose!,
  state: allocationListQuery.properties!.state!,
  value: { ...valueParameter, description: `only the allocation holding this value (a prefix: those holding part of it); ${valueParameter.description}` },
});
export const freeRangeQuery = query({ band: { type: 'string', enum: ['auto', 'static'] } });
export const releaseQuery = query({
  force: {
    type: 'string',
    enum: ['true', 'false'],
    description: 'release even a value that attribute sets of a live service instance refer to (recorded on the instance)',
  },
});
export const poolReleaseQuery: JsonSchema = {
  type: 'object',
  properties: {
    value: { ...valueParameter, description: `the allocation's value, as it writes it; ${valueParameter.description}` },
    force: releaseQuery.properties!.force!,
  },
  required: ['value'],
  additionalProperties: false,
};
export const emptyQuery: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

// --- allocation specs and service instances ---

const ATTRIBUTE_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,99}$';
const PLACEMENT_NAME = '[A-Z0-9_]{1,255}';
const UUID = '[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}';
const projectId: JsonSchema = { type: ['string', 'null'], minLength: 1, maxLength: 64 };

const poolSpecAttribute: JsonSchema = {
  type: 'object',
  properties: {
    from: { type: 'string', enum: ['pool'] },
    pool: name,
    strategy,
    count,
    prefix_length: prefixLength,
  },
  required: ['from', 'pool'],
  additionalProperties: false,
};

const lookupSpecAttribute: JsonSchema = {
  type: 'object',
  properties: {
    from: { type: 'string', enum: ['lookup'] },
    inventory: name,
    key_attribute: { type: 'string', minLength: 1, maxLength: 255 },
  },
  required: ['from', 'inventory', 'key_attribute'],
  additionalProperties: false,
};

const inventorySpecAttribute: JsonSchema = {
  type: 'object',
  properties: {
    from: { type: 'string', enum: ['inventory'] },
    inventory: name,
    owner_attribute: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'identify the owner in the inventory by this attribute (default: the instance id)',
    },
  },
  required: ['from', 'inventory'],
  additionalProperties: false,
};

const nodeSpecAttribute: JsonSchema = {
  type: 'object',
  description: "a bare-metal node, allocated as POST /baremetal/v1/allocations would (owner: the instance's project)",
  properties: {
    from: { type: 'string', enum: ['node'] },
    resource_class: { type: 'string', minLength: 1, maxLength: 80 },
    traits: { type: 'array', maxItems: 50, items: { type: 'string', pattern: `^${PLACEMENT_NAME}$` }, description: 'the node must have every one' },
    candidate_nodes: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'nodes (uuids or names) the node is chosen among',
    },
  },
  required: ['from', 'resource_class'],
  additionalProperties: false,
};

const capacitySpecAttribute: JsonSchema = {
  type: 'object',
  description: 'Placement capacity, for the instance as consumer, on providers chosen as GET /allocation_candidates would choose them',
  properties: {
    from: { type: 'string', enum: ['capacity'] },
    resources: {
      type: 'object',
      minProperties: 1,
      maxProperties: 20,
      patternProperties: { [`^${PLACEMENT_NAME}$`]: { type: 'integer', minimum: 1, maximum: 2147483647 } },
      additionalProperties: false,
      description: 'resource class → amount',
    },
    required: {
      type: 'array',
      maxItems: 50,
      items: { type: 'string', pattern: `^(!?${PLACEMENT_NAME}|in:${PLACEMENT_NAME}(,${PLACEMENT_NAME})*)$` },
      description: 'traits, as Placement\'s required parameter: "TRAIT", "!TRAIT" (forbidden), "in:A,B" (one of)',
    },
    member_of: {
      type: 'array',
      maxItems: 50,
      items: { type: 'string', pattern: `^(!?${UUID}|in:${UUID}(,${UUID})*)$` },
      description: 'aggregates, as Placement\'s member_of: "uuid", "in:uuid,uuid" (one of), "!uuid" (not in)',
    },
    in_tree_of: {
      type: 'string',
      pattern: ATTRIBUTE_NAME,
      description: 'a node attribute of the spec: only providers in the tree of the resource provider of that node (its uuid)',
    },
  },
  required: ['from', 'resources'],
  additionalProperties: false,
};

const specAttribute: JsonSchema = {
  oneOf: [poolSpecAttribute, lookupSpecAttribute, inventorySpecAttribute, nodeSpecAttribute, capacitySpecAttribute],
};

export const specCreateSchema: JsonSchema = {
  type: 'object',
  properties: {
    name,
    description: text(1000),
    attributes: {
      type: 'object',
      minProperties: 1,
      maxProperties: 100,
      patternProperties: { [ATTRIBUTE_NAME]: specAttribute },
      additionalProperties: false,
    },
    project_id: { ...projectId, description: "the Keystone project the spec belongs to (its members make instances of it); absent or null: every project's" },
  },
  required: ['name', 'attributes'],
  additionalProperties: false,
};

const attributes: JsonSchema = { type: 'object', maxProperties: 200, description: 'attribute name → JSON value' };

export const instanceCreateSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid', description: 'client-chosen id: creating it again with the same content answers the existing instance' },
    service_type: { type: 'string', minLength: 1, maxLength: 100 },
    allocation_spec: name,
    lifecycle: {
      type: 'string',
      pattern: '^[a-z][a-z0-9_]{0,39}$',
      description: 'simple (default), simple_with_deallocation, or one loaded from --ids-lifecycles',
    },
    attributes,
    project_id: {
      ...projectId,
      description: "the Keystone project the instance belongs to (default: the caller's); another project's only with ids:all_projects",
    },
    validate: { type: 'boolean', description: 'validate at once: reserve every attribute, all or nothing (default false)' },
    promote: { type: 'boolean', description: 'then promote the validated candidate set to active (needs validate; default false)' },
  },
  required: ['allocation_spec', 'attributes'],
  additionalProperties: false,
};

export const instancePatchSchema: JsonSchema = {
  type: 'object',
  properties: { attributes },
  required: ['attributes'],
  additionalProperties: false,
};

export const instanceListQuery = query({
  state: {
    type: 'string',
    pattern: '^[a-z][a-z0-9_]{0,39}$',
    description: "a state of the instances' lifecycles (built in: start, up, update, deallocating, terminated)",
  },
  service_type: { type: 'string', maxLength: 100 },
});
export const outboxListQuery = query({ state: { type: 'string', enum: ['pending', 'done'] }, instance: { type: 'string', maxLength: 36 } });
export const specListQuery = query({});

// --- responses: the server's views are typed by them (WIRE_TYPES below), openapi.ts describes them ---

export const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A value as the API writes it: an integer (integer pools) or an address / CIDR prefix. */
const wireValue: JsonSchema = { type: ['integer', 'string'], description: 'an integer (integer pools) or an address / CIDR prefix (address and prefix pools)' };
const timestamp: JsonSchema = { type: 'string', format: 'date-time' };
const bounds: JsonSchema = { type: 'object', properties: { lower: wireValue, upper: wireValue }, required: ['lower', 'upper'] };
/** a utilization count: an integer, or decimal text when the pool's total exceeds 2^53 − 1 */
const utilizationCount: JsonSchema = {
  oneOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^[0-9]+$' },
  ],
};
const utilization: JsonSchema = {
  type: 'object',
  description:
    'what the pool holds, counted in values (integer and address pools) or in child prefixes of its prefix_length (prefix pools). ' +
    'Counts are JSON integers while the total of the pool is at most 2^53 − 1 (Number.MAX_SAFE_INTEGER) and decimal strings for a larger pool ' +
    '(an IPv6 address pool of a /75 or more); every count of one pool has the same type',
  properties: {
    total: utilizationCount,
    used: utilizationCount,
    free: utilizationCount,
    allocations: { type: 'integer' },
    largest_free_block: utilizationCount,
    used_percent: { type: 'number' },
    static_total: utilizationCount,
  },
  required: ['total', 'used', 'free', 'allocations', 'largest_free_block', 'used_percent', 'static_total'],
};
const labels: JsonSchema = { type: 'object', additionalProperties: {} };
const attributeSetValue: JsonSchema = { type: ['object', 'null'], additionalProperties: {}, description: 'attribute name → value; null: no such set' };
const setName: JsonSchema = { type: 'string', enum: ['candidate', 'active', 'rollback'] };

const nodeValue: JsonSchema = {
  type: 'object',
  description: "a `from: node` attribute's value: the node and the bare-metal allocation (/baremetal/v1/allocations) that holds it",
  properties: { node: { type: 'string', format: 'uuid' }, name: { type: ['string', 'null'] }, allocation: { type: 'string', format: 'uuid' } },
  required: ['node', 'name', 'allocation'],
};
const capacityValue: JsonSchema = {
  type: 'object',
  description: "a `from: capacity` attribute's value: the Placement consumer (the instance's id) and its allocations there",
  properties: {
    consumer: { type: 'string', format: 'uuid' },
    allocations: {
      type: 'object',
      description: "provider uuid → its resources, as `allocations` in Placement's answers",
      additionalProperties: {
        type: 'object',
        properties: { resources: { type: 'object', additionalProperties: { type: 'integer' } } },
        required: ['resources'],
      },
    },
  },
  required: ['consumer', 'allocations'],
};

/** One thing an instance holds, by source. */
const holdingOf = (source: string, value: JsonSchema, href: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    attribute: { type: ['string', 'null'], description: 'the attribute whose value it is (null: held by no set any more, being released)' },
    source: { const: source },
    value,
    href,
  },
  required: ['attribute', 'source', 'value', 'href'],
});
const href: JsonSchema = {
  type: 'string',
  description:
    'where it is in its own API, a path from the server root: /ids/v1/allocations/{id}, /baremetal/v1/allocations/{uuid}, /placement/allocations/{consumer}',
};
const holding: JsonSchema = {
  description: 'something the instance holds now, in whichever engine, with a link to it in its own API (an external inventory has none)',
  oneOf: [
    holdingOf('pool', wireValue, href),
    holdingOf('inventory', { description: 'what the inventory gave' }, { type: 'null' }),
    holdingOf('node', schemaRef('NodeValue'), href),
    holdingOf('capacity', schemaRef('CapacityValue'), href),
  ],
};
const forcedRelease: JsonSchema = {
  description:
    'what was released while a set referred to it, since the last validation: a pool value released with ?force=true (still named in the sets; validation takes it again if free, else allocates another), or a node or capacity another API released or a reshape took away (taken out of the sets; validation reserves the attribute again, the same node first)',
  oneOf: [
    {
      type: 'object',
      properties: {
        source: { const: 'pool' },
        allocation_id: { type: 'string', description: 'the allocation released' },
        pool: { type: 'string' },
        attribute: { type: 'string' },
        value: wireValue,
        sets: { type: 'array', items: setName },
        released_at: timestamp,
      },
      required: ['source', 'allocation_id', 'pool', 'attribute', 'value', 'sets', 'released_at'],
    },
    {
      type: 'object',
      properties: {
        source: { type: 'string', enum: ['node', 'capacity'] },
        allocation_id: { type: 'string', description: "a node's bare-metal allocation" },
        attribute: { type: 'string' },
        value: { oneOf: [schemaRef('NodeValue'), schemaRef('CapacityValue')] },
        sets: { type: 'array', items: setName },
        reason: { type: 'string', description: 'what released it' },
        released_at: timestamp,
      },
      required: ['source', 'attribute', 'value', 'sets', 'reason', 'released_at'],
    },
  ],
};

const problem: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details; `code` is stable and `type` is urn:allot:problem:<code>',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(PROBLEM_CODES) },
    instance: { type: 'string' },
    request_id: { type: 'string' },
    errors: { type: 'array', items: { type: 'object' } },
  },
  required: ['type', 'title', 'status', 'detail', 'code'],
};

const pool: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    kind: poolKind,
    project_id: { type: ['string', 'null'], description: 'the Keystone project owning the pool; null: shared by every project' },
    family: { type: ['string', 'null'], enum: ['ipv4', 'ipv6', null] },
    ranges: { type: 'array', items: bounds },
    excluded: { type: 'array', items: bounds },
    static: { type: 'array', items: bounds },
    prefix_length: { type: ['integer', 'null'] },
    strategy,
    description: { type: 'string' },
    metadata: labels,
    generation: { type: 'integer', description: 'also the ETag' },
    utilization: schemaRef('Utilization'),
    created_at: timestamp,
    updated_at: timestamp,
  },
  required: [
    'name',
    'kind',
    'project_id',
    'family',
    'ranges',
    'excluded',
    'static',
    'prefix_length',
    'strategy',
    'description',
    'metadata',
    'generation',
    'utilization',
    'created_at',
    'updated_at',
  ],
};

const allocation: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    pool: { type: 'string' },
    owner: { type: 'string' },
    purpose: { type: 'string' },
    value: wireValue,
    last_value: wireValue,
    count: { type: 'integer', description: 'integer and address pools: the values it holds' },
    prefix_length: { type: 'integer', description: 'prefix pools: the length of the prefix it holds' },
    state: { type: 'string', enum: ['allocated', 'reserved'] },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    version: { type: 'integer', description: 'also the ETag' },
    source: { type: 'string', enum: ['api', 'import', 'service-instance'] },
    metadata: labels,
    dry_run: { type: 'boolean', description: 'only in a dry run' },
    created_at: timestamp,
    updated_at: timestamp,
  },
  required: ['id', 'pool', 'owner', 'purpose', 'value', 'last_value', 'state', 'expires_at', 'version', 'source', 'metadata', 'created_at', 'updated_at'],
};

const instance: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    project_id: { type: ['string', 'null'] },
    service_type: { type: 'string' },
    allocation_spec: { type: 'string' },
    lifecycle: { type: 'string' },
    state: { type: 'string', description: 'built in: start, up, update, deallocating, terminated; others come from --ids-lifecycles' },
    version: { type: 'integer', description: 'also the ETag' },
    candidate_attributes: attributeSetValue,
    candidate_validated: { type: 'boolean' },
    active_attributes: attributeSetValue,
    rollback_attributes: attributeSetValue,
    last_error: { type: ['string', 'null'] },
    forced_releases: { type: 'array', items: schemaRef('ForcedRelease') },
    pending_deallocations: { type: 'integer' },
    holdings: { type: 'array', items: schemaRef('Holding'), description: 'everything the instance holds now, in every engine' },
    created_at: timestamp,
    updated_at: timestamp,
    terminated_at: { type: ['string', 'null'], format: 'date-time' },
  },
  required: [
    'id',
    'project_id',
    'service_type',
    'allocation_spec',
    'lifecycle',
    'state',
    'version',
    'candidate_attributes',
    'candidate_validated',
    'active_attributes',
    'rollback_attributes',
    'last_error',
    'forced_releases',
    'pending_deallocations',
    'holdings',
    'created_at',
    'updated_at',
    'terminated_at',
  ],
};

const outboxEntry: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    inventory: { type: 'string' },
    operation: { type: 'string' },
    owner: { type: 'string' },
    attribute: { type: 'string' },
    instance_id: { type: ['string', 'null'] },
    value: { description: 'what is given back (null: not known)' },
    state: { type: 'string', enum: ['pending', 'done'] },
    attempts: { type: 'integer' },
    next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
    last_error: { type: ['string', 'null'] },
    created_at: timestamp,
    updated_at: timestamp,
    completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
  required: [
    'id',
    'inventory',
    'operation',
    'owner',
    'attribute',
    'instance_id',
    'value',
    'state',
    'attempts',
    'next_attempt_at',
    'last_error',
    'created_at',
    'updated_at',
    'completed_at',
  ],
};

const spec: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    attributes: { type: 'object', additionalProperties: specAttribute, description: 'attribute name → where its value comes from' },
    project_id: { type: ['string', 'null'] },
    version: { type: 'integer' },
    created_at: timestamp,
    updated_at: timestamp,
  },
  required: ['name', 'description', 'attributes', 'project_id', 'version', 'created_at', 'updated_at'],
};

const freeRange: JsonSchema = {
  type: 'object',
  properties: {
    first: wireValue,
    last: wireValue,
    size: { type: 'string', description: 'values (or child prefixes) in it, as decimal text' },
    band: { type: 'string', enum: ['auto', 'static'] },
  },
  required: ['first', 'last', 'size', 'band'],
};

const importOutcome: JsonSchema = {
  type: 'object',
  properties: {
    imported: { type: 'integer' },
    unchanged: { type: 'integer' },
    conflicts: {
      type: 'array',
      items: {
        type: 'object',
        properties: { index: { type: 'integer' }, value: {}, code: { type: 'string' }, detail: { type: 'string' }, held_by: labels },
        required: ['index', 'value', 'code', 'detail'],
      },
    },
  },
  required: ['imported', 'unchanged', 'conflicts'],
};

/** One allocation of a batch's answer: the allocation, and whether this request made it. */
const batchAllocation: JsonSchema = {
  ...allocation,
  properties: { ...allocation.properties, created: { type: 'boolean', description: 'false: the owner and purpose held it already (an idempotent repeat)' } },
  required: [...allocation.required!, 'created'],
};

const batchResult: JsonSchema = {
  type: 'object',
  properties: { allocations: { type: 'array', items: schemaRef('BatchAllocation') }, dry_run: { type: 'boolean' } },
  required: ['allocations', 'dry_run'],
};

const inventory: JsonSchema = {
  type: 'object',
  description: 'an external inventory (--ids-inventories) and its outbox',
  properties: {
    name: { type: 'string' },
    type: { type: 'string', description: 'http or postgres-table' },
    timeout_ms: { type: 'integer' },
    operations: { type: 'array', items: { type: 'string' }, description: 'what it implements: lookup, allocateForOwner, deallocate, …' },
    outbox: {
      type: 'object',
      properties: { pending: { type: 'integer' }, done: { type: 'integer' } },
      required: ['pending', 'done'],
      description: 'its deallocations, by state',
    },
  },
  required: ['name', 'type', 'timeout_ms', 'operations', 'outbox'],
};

/** What the root links to, each a path. */
const rootLinks = ['openapi', 'pools', 'allocations', 'allocation_specs', 'service_instances', 'inventories', 'outbox'];
const root: JsonSchema = {
  type: 'object',
  description: "the API's root: its name, version and where its collections are",
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    links: { type: 'object', properties: Object.fromEntries(rootLinks.map((k) => [k, { type: 'string' }])), required: rootLinks },
  },
  required: ['name', 'version', 'links'],
};

/** A list's page: its items and the cursor of the next page (null: the last). */
const page = (item: string): JsonSchema => ({
  type: 'object',
  properties: { items: { type: 'array', items: schemaRef(item) }, next_cursor: { type: ['string', 'null'] } },
  required: ['items', 'next_cursor'],
});

/** The responses' schemas, as components of the OpenAPI document. */
export const RESPONSE_SCHEMAS = {
  Problem: problem,
  Root: root,
  Pool: pool,
  Utilization: utilization,
  Allocation: allocation,
  Batch: batchResult,
  BatchAllocation: batchAllocation,
  FreeRange: freeRange,
  ImportOutcome: importOutcome,
  Spec: spec,
  NodeValue: nodeValue,
  CapacityValue: capacityValue,
  Holding: holding,
  ForcedRelease: forcedRelease,
  Instance: instance,
  OutboxEntry: outboxEntry,
  Inventory: inventory,
  PoolPage: page('Pool'),
  AllocationPage: page('Allocation'),
  FreeRangePage: page('FreeRange'),
  SpecPage: page('Spec'),
  InstancePage: page('Instance'),
  OutboxPage: page('OutboxEntry'),
  InventoryPage: page('Inventory'),
} satisfies Record<string, JsonSchema>;

/** The name of a response schema (what an endpoint's `answers` names). */
export type ResponseName = keyof typeof RESPONSE_SCHEMAS;

/**
 * The identifier API's wire types by name, in the order scripts/wire-types.ts writes them to
 * src/client/ids-wire.ts (what the server's views and the typed client use): request bodies, then
 * the responses by the names the OpenAPI document gives them (RESPONSE_SCHEMAS), by which an
 * endpoint's `answers` types its body. A schema named here is written by its name wherever it appears.
 */
export const WIRE_TYPES: Record<string, JsonSchema> = {
  Value: wireValue,
  PoolKind: poolKind,
  Strategy: strategy,
  RangeItem: rangeItem,
  Bounds: bounds,
  PoolCreate: poolCreateSchema,
  PoolUpdate: poolPatchSchema,
  AllocationRequest: allocateSchema,
  BatchItem: batchItem,
  BatchRequest: batchSchema,
  AllocationUpdate: allocationPatchSchema,
  ImportItem: importItem,
  ImportRequest: importSchema,
  PoolSpecAttribute: poolSpecAttribute,
  LookupSpecAttribute: lookupSpecAttribute,
  InventorySpecAttribute: inventorySpecAttribute,
  NodeSpecAttribute: nodeSpecAttribute,
  CapacitySpecAttribute: capacitySpecAttribute,
  SpecAttribute: specAttribute,
  SpecCreate: specCreateSchema,
  InstanceCreate: instanceCreateSchema,
  InstancePatch: instancePatchSchema,
  AttributeSetName: setName,
  ...RESPONSE_SCHEMAS,
};
