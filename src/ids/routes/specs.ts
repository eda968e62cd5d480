// /v1/allocation-specs and /v1/allocation-specs/{name}
import { type Endpoint, cursorOf, decodeCursor, page, pageLimit, answers, WITH_ETAG, IF_MATCH } from '../request.js';

const specCursor = cursorOf('specs', (v): v is string => typeof v === 'string');
import { specCreateSchema, specListQuery } from '../schemas.js';
import { createSpec, deleteSpec, getSpec, listSpecs } from '../services/specs.js';
import type { SpecCreate } from '../../client/ids-wire.js';
import { specView } from './views.js';

type E = Endpoint;

export const list: E = {
  policy: 'ids:allocation_specs:list',
  summary: 'list allocation specs',
  query: specListQuery,
  ok: [200],
  ...answers('SpecPage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string }>();
    const { items, next } = await listSpecs(ctx, decodeCursor(q.cursor, specCursor), pageLimit(q), req.poolScope());
    return page(req, items.map(specView), specCursor, next);
  }),
};

export const create: E = {
  policy: 'ids:allocation_specs:create',
  summary: 'create an allocation spec (same name and attributes again: 200)',
  body: specCreateSchema,
  ok: [201, 200],
  errors: [400, 409, 422],
  ...WITH_ETAG,
  ...answers('Spec', async (req, ctx) => {
    const input = req.json<SpecCreate>();
    const { spec, created } = await createSpec(ctx, input);
    return {
      status: created ? 201 : 200,
      body: specView(spec),
      etag: spec.version,
      location: req.url(`/v1/allocation-specs/${encodeURIComponent(spec.name)}`),
    };
  }),
};

export const show: E = {
  policy: 'ids:allocation_specs:show',
  summary: 'an allocation spec',
  ok: [200],
  errors: [404],
  ...WITH_ETAG,
  ...answers('Spec', async (req, ctx) => {
    const spec = await getSpec(ctx, req.param('name'), req.poolScope());
    return { body: specView(spec), etag: spec.version };
  }),
};

export const remove: E = {
  policy: 'ids:allocation_specs:delete',
  summary: 'delete an unused allocation spec',
  ok: [204],
  ...IF_MATCH,
  errors: [404, 409, 412],
  async handle(req, ctx) {
    await deleteSpec(ctx, req.param('name'), req.ifMatch(), req.poolScope());
    return {};
  },
};
