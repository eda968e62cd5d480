// /allocations/{consumer_uuid}, POST /allocations and /resource_providers/{uuid}/allocations
// Uuids are taken as Placement takes them: the consumer of a PUT is normalized (dashes, lower
// case); GET and DELETE look the consumer up as sent; POST's consumers and every provider
// reference are kept as sent.
import type * as Wire from '../../client/placement-wire.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { placementError } from '../errors.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import * as schemas from '../schemas.js';
import * as allocations from '../services/allocations.js';

/** One consumer's allocations in the dict form (1.12+), as some microversion's schema accepts them. */
type DictSection = Wire.AllocationsPost[string];

/** A validated dict-form section → what the store writes. */
export function toConsumerAllocations(consumerUuid: string, section: DictSection, checkGeneration: boolean): allocations.ConsumerAllocations {
  return {
    consumerUuid,
    allocations: new Map(Object.entries(section.allocations).map(([rp, a]) => [rp, new Map(Object.entries(a.resources))])),
    projectId: section.project_id,
    userId: section.user_id,
    generation: checkGeneration ? (('consumer_generation' in section ? section.consumer_generation : null) ?? null) : undefined,
    consumerType: 'consumer_type' in section ? section.consumer_type : undefined,
  };
}

/** The consumer a PUT writes. */
function consumerToWrite(req: PlacementRequest): string {
  const raw = req.param('consumer_uuid');
  if (!isUuidLike(raw)) throw placementError(400, `Malformed consumer_uuid: ${raw}`);
  return normalizeUuid(raw);
}

export const show: Endpoint = {
  summary: "a consumer's allocations",
  ok: [200],
  response: schemas.schemaRef('ConsumerAllocations'),
  policy: 'placement:allocations:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const consumer = await allocations.ofConsumer(ctx, req.param('consumer_uuid'));
    if (!consumer || consumer.allocations.size === 0) return { body: { allocations: {} } satisfies Wire.ConsumerAllocations };
    const body: Wire.ConsumerAllocations = {
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
  summary: "replace a consumer's allocations (the claim; consumer_generation guards it)",
  body: schemas.allocationsPut,
  ok: [204],
  policy: 'placement:allocations:update',
  async handle(req, ctx) {
    const consumerUuid = consumerToWrite(req);
    let write: allocations.ConsumerAllocations;
    if (!req.mv.atLeast('1.12')) {
      const data = req.json<{
        allocations: Array<{ resource_provider: { uuid: string }; resources: Record<string, number> }>;
        project_id?: string;
        user_id?: string;
      }>();
      const byProvider = new Map<string, Map<string, number>>();
      for (const a of data.allocations) {
        const rp = a.resource_provider.uuid;
        const merged = byProvider.get(rp) ?? new Map<string, number>();
        for (const [rc, n] of Object.entries(a.resources)) merged.set(rc, n);
        byProvider.set(rp, merged);
      }
      write = {
        consumerUuid,
        allocations: byProvider,
        projectId: data.project_id ?? allocations.INCOMPLETE_CONSUMER_ID,
        userId: data.user_id ?? allocations.INCOMPLETE_CONSUMER_ID,
      };
    } else {
      write = toConsumerAllocations(consumerUuid, req.json<DictSection>(), req.mv.atLeast('1.28'));
    }
    await allocations.write(ctx, [write]);
    return { status: 204 };
  },
};

export const post: Endpoint = {
  summary: 'write the allocations of several consumers at once',
  body: schemas.allocationsPost,
  ok: [204],
  since: '1.13',
  policy: 'placement:allocations:manage',
  async handle(req, ctx) {
    const data = req.json<Wire.AllocationsPost>();
    const writes = Object.entries(data).map(([consumer, section]) => toConsumerAllocations(consumer, section, req.mv.atLeast('1.28')));
    await allocations.write(ctx, writes);
    return { status: 204 };
  },
};

export const remove: Endpoint = {
  summary: "delete a consumer's allocations",
  ok: [204],
  policy: 'placement:allocations:delete',
  async handle(req, ctx) {
    await allocations.removeConsumer(ctx, req.param('consumer_uuid'));
    return {};
  },
};

export const listForProvider: Endpoint = {
  summary: 'the allocations against a provider, by consumer',
  ok: [200],
  response: schemas.schemaRef('ProviderAllocations'),
  policy: 'placement:resource_providers:allocations:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const { provider, allocations: byConsumer, lastModified } = await allocations.ofProvider(ctx, req.param('uuid'));
    const body: Wire.ProviderAllocations = {
      resource_provider_generation: provider.generation,
      allocations: Object.fromEntries([...byConsumer].map(([c, a]) => [c, { resources: a.resources }])),
    };
    return { body, lastModified: lastModified ?? provider.updated_at };
  },
};
