// /resource_providers/{uuid}/aggregates
import type { JsonSchema } from '../../core/json-schema.js';
import { normalizeUuid } from '../../core/uuid.js';
import type { PlacementContext } from '../context.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import { readProviderAggregates, setProviderAggregates } from '../store/aggregates.js';
import { requireProvider } from '../store/providers.js';

const aggregateList: JsonSchema = { type: 'array', items: { type: 'string', format: 'uuid' }, uniqueItems: true };
const putSchemas: Record<string, JsonSchema> = {
  '1.1': aggregateList,
  '1.19': {
    type: 'object',
    properties: { aggregates: aggregateList, resource_provider_generation: { type: 'integer' } },
    required: ['aggregates', 'resource_provider_generation'],
    additionalProperties: false,
  },
};

async function respond(req: PlacementRequest, ctx: PlacementContext) {
  const { provider, aggregates } = await readProviderAggregates(ctx.database, req.param('uuid'));
  const body: Record<string, unknown> = { aggregates };
  if (req.mv.atLeast('1.19')) body.resource_provider_generation = provider.generation;
  return { body, lastModified: provider.updated_at };
}

export const list: Endpoint = {
  since: '1.1',
  policy: 'placement:resource_providers:aggregates:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    return respond(req, ctx);
  },
};

export const put: Endpoint = {
  since: '1.1',
  policy: 'placement:resource_providers:aggregates:update',
  async handle(req, ctx) {
    const uuid = req.param('uuid');
    await requireProvider(ctx.database, uuid); // a missing provider is a 404 before any body check
    const data = req.json<string[] | { aggregates: string[]; resource_provider_generation: number }>(putSchemas);
    if (Array.isArray(data)) {
      await setProviderAggregates(ctx.database, uuid, data.map(normalizeUuid), { mode: 'keep' });
    } else {
      await setProviderAggregates(ctx.database, uuid, data.aggregates.map(normalizeUuid), { mode: 'bump', client: data.resource_provider_generation });
    }
    return respond(req, ctx);
  },
};
