// /allocations/{consumer_uuid}, POST /allocations and /resource_providers/{uuid}/allocations
import type { JsonSchema } from '../../core/json-schema.js';
import { isUuid, normalizeUuid } from '../../core/uuid.js';
import { placementError } from '../errors.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import { byVersion } from '../../core/microversion.js';
import {
  type ConsumerAllocations,
  INCOMPLETE_CONSUMER_ID,
  deleteConsumerAllocations,
  providerAllocations,
  readConsumer,
  replaceAllocations,
} from '../store/allocations.js';
import { requireProvider } from '../store/providers.js';
import { RESOURCE_CLASS_PATTERN } from './inventories.js';

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$';
/** request group suffixes in `mappings`; '' is the unsuffixed group */
const GROUP_SUFFIX_PATTERN = '^[a-zA-Z0-9_-]{0,64}$';

const resources: JsonSchema = {
  type: 'object',
  minProperties: 1,
  patternProperties: { [RESOURCE_CLASS_PATTERN]: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
};
const idField: JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };

/** 1.0–1.11: a list of {resource_provider: {uuid}, resources} */
const listForm = (withOwner: boolean): JsonSchema => ({
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: {
            type: 'object',
            properties: { uuid: { type: 'string', format: 'uuid' } },
            additionalProperties: false,
            required: ['uuid'],
          },
          resources,
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
    ...(withOwner ? { project_id: idField, user_id: idField } : {}),
  },
  required: withOwner ? ['allocations', 'project_id', 'user_id'] : ['allocations'],
  additionalProperties: false,
});

/** 1.12+: a dict keyed by provider uuid, plus what each later microversion added. */
function dictForm(opts: { minProviders: number; generation: boolean; mappings: boolean; consumerType: boolean }): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    allocations: {
      type: 'object',
      minProperties: opts.minProviders,
      patternProperties: {
        [UUID_PATTERN]: {
          type: 'object',
          properties: { generation: { type: 'integer' }, resources },
          required: ['resources'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    project_id: idField,
    user_id: idField,
  };
  const required = ['allocations', 'project_id', 'user_id'];
  if (opts.generation) {
    properties.consumer_generation = { type: ['integer', 'null'] };
    required.push('consumer_generation');
  }
  if (opts.mappings) {
    properties.mappings = {
      type: 'object',
      minProperties: 1,
      patternProperties: { [GROUP_SUFFIX_PATTERN]: { type: 'array', minItems: 1, items: { type: 'string', pattern: UUID_PATTERN } } },
      additionalProperties: false,
    };
  }
  if (opts.consumerType) {
    properties.consumer_type = { type: 'string', pattern: RESOURCE_CLASS_PATTERN, minLength: 1, maxLength: 255 };
    required.push('consumer_type');
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

const putSchemas: Record<string, JsonSchema> = {
  '1.0': listForm(false),
  '1.8': listForm(true),
  '1.12': dictForm({ minProviders: 1, generation: false, mappings: false, consumerType: false }),
  '1.28': dictForm({ minProviders: 0, generation: true, mappings: false, consumerType: false }),
  '1.34': dictForm({ minProviders: 0, generation: true, mappings: true, consumerType: false }),
  '1.38': dictForm({ minProviders: 0, generation: true, mappings: true, consumerType: true }),
};

/** The per-consumer section of POST /allocations (and of the reshaper's allocations). */
export const consumerSectionSchemas: Record<string, JsonSchema> = {
  '1.13': dictForm({ minProviders: 0, generation: false, mappings: false, consumerType: false }),
  '1.28': dictForm({ minProviders: 0, generation: true, mappings: false, consumerType: false }),
  '1.34': dictForm({ minProviders: 0, generation: true, mappings: true, consumerType: false }),
  '1.38': dictForm({ minProviders: 0, generation: true, mappings: true, consumerType: true }),
};

export const postSchemas: Record<string, JsonSchema> = Object.fromEntries(
  Object.entries(consumerSectionSchemas).map(([v, section]) => [
    v,
    { type: 'object', minProperties: 1, patternProperties: { [UUID_PATTERN]: section }, additionalProperties: false },
  ]),
);

interface DictSection {
  allocations: Record<string, { resources: Record<string, number> }>;
  project_id: string;
  user_id: string;
  consumer_generation?: number | null;
  consumer_type?: string;
}

/** A validated dict-form section → what the store writes. */
export function toConsumerAllocations(consumerUuid: string, section: DictSection, checkGeneration: boolean): ConsumerAllocations {
  return {
    consumerUuid,
    allocations: new Map(Object.entries(section.allocations).map(([rp, a]) => [normalizeUuid(rp), new Map(Object.entries(a.resources))])),
    projectId: section.project_id,
    userId: section.user_id,
    generation: checkGeneration ? (section.consumer_generation ?? null) : undefined,
    consumerType: section.consumer_type,
  };
}

function consumerParam(req: PlacementRequest): string {
  const raw = req.param('consumer_uuid');
  if (!isUuid(raw)) throw placementError(400, `Malformed consumer_uuid: ${raw}`);
  return normalizeUuid(raw);
}

export const show: Endpoint = {
  policy: 'placement:allocations:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const consumer = await readConsumer(ctx.database, consumerParam(req));
    if (!consumer || consumer.allocations.size === 0) return { body: { allocations: {} } };
    const body: Record<string, unknown> = {
      allocations: Object.fromEntries([...consumer.allocations].map(([rp, a]) => [rp, { generation: a.generation, resources: a.resources }])),
    };
    if (req.mv.atLeast('1.12')) {
      body.project_id = consumer.project_id;
      body.user_id = consumer.user_id;
    }
    if (req.mv.atLeast('1.28')) body.consumer_generation = consumer.generation;
    if (req.mv.atLeast('1.38')) body.consumer_type = consumer.consumer_type ?? 'unknown';
    return { body, lastModified: consumer.lastModified };
  },
};

export const put: Endpoint = {
  policy: 'placement:allocations:update',
  async handle(req, ctx) {
    const consumerUuid = consumerParam(req);
    const schema = byVersion(req.mv, putSchemas);
    let write: ConsumerAllocations;
    if (!req.mv.atLeast('1.12')) {
      const data = req.json<{
        allocations: Array<{ resource_provider: { uuid: string }; resources: Record<string, number> }>;
        project_id?: string;
        user_id?: string;
      }>(schema);
      const allocations = new Map<string, Map<string, number>>();
      for (const a of data.allocations) {
        const rp = normalizeUuid(a.resource_provider.uuid);
        const merged = allocations.get(rp) ?? new Map<string, number>();
        for (const [rc, n] of Object.entries(a.resources)) merged.set(rc, n);
        allocations.set(rp, merged);
      }
      write = { consumerUuid, allocations, projectId: data.project_id ?? INCOMPLETE_CONSUMER_ID, userId: data.user_id ?? INCOMPLETE_CONSUMER_ID };
    } else {
      write = toConsumerAllocations(consumerUuid, req.json<DictSection>(schema), req.mv.atLeast('1.28'));
    }
    await replaceAllocations(ctx.database, [write]);
    return { status: 204 };
  },
};

export const post: Endpoint = {
  since: '1.13',
  policy: 'placement:allocations:manage',
  async handle(req, ctx) {
    const data = req.json<Record<string, DictSection>>(postSchemas);
    const writes = Object.entries(data).map(([consumer, section]) => toConsumerAllocations(normalizeUuid(consumer), section, req.mv.atLeast('1.28')));
    await replaceAllocations(ctx.database, writes);
    return { status: 204 };
  },
};

export const remove: Endpoint = {
  policy: 'placement:allocations:delete',
  async handle(req, ctx) {
    await deleteConsumerAllocations(ctx.database, consumerParam(req));
    return {};
  },
};

export const listForProvider: Endpoint = {
  policy: 'placement:resource_providers:allocations:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const provider = await requireProvider(ctx.database, req.param('uuid'));
    const { allocations, lastModified } = await providerAllocations(ctx.database, provider.id);
    return {
      body: {
        resource_provider_generation: provider.generation,
        allocations: Object.fromEntries([...allocations].map(([c, a]) => [c, { resources: a.resources }])),
      },
      lastModified: lastModified ?? provider.updated_at,
    };
  },
};
