// POST /reshaper (1.30)
import type { ReshapeRequest } from '../../client/placement-wire.js';
import { INVENTORY_DEFAULTS } from '../../core/capacity.js';
import type { Endpoint } from '../request.js';
import * as schemas from '../schemas.js';
import { reshape } from '../services/reshaper.js';
import { toConsumerAllocations } from './allocations.js';

export const post: Endpoint = {
  summary: 'move inventories and allocations atomically',
  body: schemas.reshaper,
  ok: [204],
  since: '1.30',
  policy: 'placement:reshaper:reshape',
  async handle(req, ctx) {
    const data = req.json<ReshapeRequest>();
    const providers = Object.entries(data.inventories).map(([uuid, body]) => ({
      providerUuid: uuid,
      generation: body.resource_provider_generation,
      inventories: new Map(Object.entries(body.inventories).map(([rc, inv]) => [rc, { ...INVENTORY_DEFAULTS, ...inv }])),
    }));
    const allocations = Object.entries(data.allocations).map(([consumer, section]) => toConsumerAllocations(consumer, section, true));
    await reshape(ctx, providers, allocations);
    return { status: 204 };
  },
};
