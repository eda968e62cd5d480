// /resource_providers/{uuid}/aggregates. Aggregate uuids are kept and answered as the client sent
// them (upper case, without dashes), as Placement does.
import type * as Wire from '../../client/placement-wire.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import * as schemas from '../schemas.js';
import * as aggregates from '../services/aggregates.js';
import * as providers from '../services/providers.js';

function answer(req: PlacementRequest, set: aggregates.ProviderSet) {
  const body: Wire.ProviderAggregates = { aggregates: set.members };
  if (req.mv.atLeast('1.19')) body.resource_provider_generation = set.generation;
  return { body, lastModified: set.updatedAt };
}

export const list: Endpoint = {
  summary: "a provider's aggregates",
  ok: [200],
  response: schemas.schemaRef('ProviderAggregates'),
  since: '1.1',
  policy: 'placement:resource_providers:aggregates:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    return answer(req, await aggregates.read(ctx, req.param('uuid')));
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
    let data: Wire.AggregatesPut;
    try {
      data = req.json();
    } catch (err) {
      await providers.show(ctx, uuid); // a missing provider is a 404 before any body check
      throw err;
    }
    const written = Array.isArray(data)
      ? await aggregates.setForProvider(ctx, uuid, data, { mode: 'keep' })
      : await aggregates.setForProvider(ctx, uuid, data.aggregates, { mode: 'bump', client: data.resource_provider_generation });
    return answer(req, written);
  },
};
