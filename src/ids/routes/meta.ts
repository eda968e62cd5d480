// /v1 (root), /v1/inventories, /v1/outbox (the OpenAPI document is api.ts's: it reads the route table)
import { INVENTORY_OPERATIONS } from '../inventories/registry.js';
import { idsError } from '../errors.js';
import { type Endpoint, type IdsRequest, cursorOf, decodeCursor, page, pageLimit, answers } from '../request.js';

const outboxCursor = cursorOf('outbox', (v): v is number => Number.isInteger(v));
import type * as Wire from '../../client/ids-wire.js';
import { outboxListQuery } from '../schemas.js';
import { getOutboxEntry, listOutbox, outboxCounts, retryNow } from '../services/outbox.js';
import { outboxView } from './views.js';

type E = Endpoint;

export const root: E = {
  public: true,
  summary: 'API root: version and links',
  ok: [200],
  ...answers('Root', async (req) => {
    req.queryObject();
    const link = (p: string) => req.url(`/v1${p}`);
    return {
      body: {
        name: 'allot identifier API',
        version: 'v1',
        links: {
          openapi: link('/openapi.json'),
          pools: link('/pools'),
          allocations: link('/allocations'),
          allocation_specs: link('/allocation-specs'),
          service_instances: link('/service-instances'),
          inventories: link('/inventories'),
          outbox: link('/outbox'),
        },
      },
    };
  }),
};

export const inventories: E = {
  policy: 'ids:inventories:list',
  summary: 'configured external inventories and their outbox counts',
  ok: [200],
  ...answers('InventoryPage', async (req, ctx) => {
    req.queryObject();
    const counts = await outboxCounts(ctx);
    const items = ctx.inventories.list().map(
      (e): Wire.Inventory => ({
        name: e.name,
        type: e.type,
        timeout_ms: e.timeoutMs,
        operations: INVENTORY_OPERATIONS.filter((op) => typeof e.inventory[op] === 'function'),
        outbox: counts.get(e.name) ?? { pending: 0, done: 0 },
      }),
    );
    return { body: { items, next_cursor: null } };
  }),
};

const entryId = (req: IdsRequest) => {
  const raw = req.param('id');
  if (!/^\d{1,15}$/.test(raw)) throw idsError(404, 'ids.not_found', `outbox entry ${JSON.stringify(raw)} not found`);
  return Number(raw);
};

export const outbox: E = {
  policy: 'ids:outbox:list',
  summary: 'deallocations owed to external inventories',
  query: outboxListQuery,
  ok: [200],
  ...answers('OutboxPage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string; state?: string; instance?: string }>();
    const after = decodeCursor(q.cursor, outboxCursor);
    const { items, next } = await listOutbox(ctx, q, after, pageLimit(q));
    return page(req, items.map(outboxView), outboxCursor, next);
  }),
};

export const outboxEntry: E = {
  policy: 'ids:outbox:list',
  summary: 'one outbox entry',
  ok: [200],
  errors: [404],
  ...answers('OutboxEntry', async (req, ctx) => {
    return { body: outboxView(await getOutboxEntry(ctx, entryId(req))) };
  }),
};

export const retryOutboxEntry: E = {
  policy: 'ids:outbox:retry',
  summary: 'make a pending entry due now',
  ok: [200],
  errors: [404, 409],
  ...answers('OutboxEntry', async (req, ctx) => {
    return { body: outboxView(await retryNow(ctx, entryId(req))) };
  }),
};
