// /v1/allocation-specs and /v1/allocation-specs/{name}
import { type Endpoint, cursorOf, decodeCursor, page, pageLimit } from '../request.js';

const specCursor = cursorOf('specs', (v): v is string => typeof v === 'string');
import { specCreateSchema, specListQuery } from '../schemas.js';
import { createSpec, deleteSpec, getSpec, listSpecs } from '../services/specs.js';
import type { SpecInput } from '../store/specs.js';
import { specView } from './views.js';

type E = Endpoint;

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string }>(specListQuery);
    const { items, next } = await listSpecs(ctx, decodeCursor(q.cursor, specCursor), pageLimit(q), req.poolScope());
    return page(req, items.map(specView), specCursor, next);
  },
};

export const create: E = {
  async handle(req, ctx) {
    const input = req.json<SpecInput>(specCreateSchema);
    const { spec, created } = await createSpec(ctx, input);
    return {
      status: created ? 201 : 200,
      body: specView(spec),
      etag: spec.version,
      location: req.url(`/v1/allocation-specs/${encodeURIComponent(spec.name)}`),
    };
  },
};

export const show: E = {
  async handle(req, ctx) {
    const spec = await getSpec(ctx, req.param('name'), req.poolScope());
    return { body: specView(spec), etag: spec.version };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    await deleteSpec(ctx, req.param('name'), req.ifMatch(), req.poolScope());
    return {};
  },
};
