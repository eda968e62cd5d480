// POST /reshaper (1.30)
import { INVENTORY_DEFAULTS } from '../../core/capacity.js';
import type { JsonSchema } from '../../core/json-schema.js';
import { normalizeUuid } from '../../core/uuid.js';
import type { Endpoint } from '../request.js';
import { reshape } from '../store/reshaper.js';
import { UUID_PATTERN, consumerSectionSchemas, toConsumerAllocations } from './allocations.js';
import { replaceAllSchema } from './inventories.js';

const schemaFor = (consumerSection: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    inventories: { type: 'object', patternProperties: { [UUID_PATTERN]: replaceAllSchema }, minProperties: 1, additionalProperties: false },
    allocations: { type: 'object', patternProperties: { [UUID_PATTERN]: consumerSection }, additionalProperties: false },
  },
  required: ['inventories', 'allocations'],
  additionalProperties: false,
});

const schemas: Record<string, JsonSchema> = {
  '1.30': schemaFor(consumerSectionSchemas['1.28']!),
  '1.34': schemaFor(consumerSectionSchemas['1.34']!),
  '1.38': schemaFor(consumerSectionSchemas['1.38']!),
};

type InventoryInput = { total: number } & Partial<typeof INVENTORY_DEFAULTS>;

export const post: Endpoint = {
  since: '1.30',
  policy: 'placement:reshaper:reshape',
  async handle(req, ctx) {
    const data = req.json<{
      inventories: Record<string, { resource_provider_generation: number; inventories: Record<string, InventoryInput> }>;
      allocations: Record<string, Parameters<typeof toConsumerAllocations>[1]>;
    }>(schemas);
    const providers = Object.entries(data.inventories).map(([uuid, body]) => ({
      providerUuid: normalizeUuid(uuid),
      generation: body.resource_provider_generation,
      inventories: new Map(Object.entries(body.inventories).map(([rc, inv]) => [rc, { ...INVENTORY_DEFAULTS, ...inv }])),
    }));
    const allocations = Object.entries(data.allocations).map(([consumer, section]) => toConsumerAllocations(normalizeUuid(consumer), section, true));
    await reshape(ctx.database, providers, allocations);
    return { status: 204 };
  },
};
