// /resource_providers/{uuid}/aggregates. Aggregate uuids are kept and answered as the client sent
// them (upper case, without dashes), as Placement does.
import type * as Wire from '../../client/placement-wire.js';
import type { PlacementContext } from '../context.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import * as schemas from '../schemas.js';
import * as aggregates from '../services/aggregates.js';
import { readProviderAggregates } from '../store/aggregates.js';
import { requireProvider } from '../store/providers.js';

async function respond(req: PlacementRequest, ctx: PlacementContext) {
  const { provider, aggregates: uuids } = await readProviderAggregates(ctx.database, req.param('uuid'));
  const body: Wire.ProviderAggregates = { aggregates: uuids };
  if (req.mv.atLeast('1.19')) body.resource_provider_generation = provider.generation;
  return { body, lastModified: provider.updated_at };
}

export const list: Endpoint = {
  summary: "a provider's aggregates",
  ok: [200],
  response: schemas.schemaRef('ProviderAggregates'),
  since: '1.1',
  policy: 'placement:resource_providers:aggregates:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    return respond(req, ctx);
  },
};

export const put: Endpoint = {
  summary: "replace a provider's aggregates",
  body: schemas.providerAggregates,
  ok: [200],
  response: schemas.schemaRef('ProviderAggregates'),
  since: '1.1',
  policy: 'placement:resource_providers:aggregates:update',
  async handle(req, ctx) {
    const uuid = req.param('uuid');
    await requireProvider(ctx.database, uuid); // a missing provider is a 404 before any body check
    const data = req.json<Wire.AggregatesPut>();
    if (Array.isArray(data)) {
      await aggregates.setForProvider(ctx, uuid, data, { mode: 'keep' });
    } else {
      await aggregates.setForProvider(ctx, uuid, data.aggregates, { mode: 'bump', client: data.resource_provider_generation });
    }
    return respond(req, ctx);
  },
};
