// /v1/allocation-specs and /v1/allocation-specs/{name}
import { type Endpoint, decodeCursor, page, pageLimit } from '../request.js';
import { specCreateSchema, specListQuery } from '../schemas.js';
import { type SpecInput, createSpec, deleteSpec, getSpec, listSpecs, specView } from '../store/specs.js';

type E = Endpoint;

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string }>(specListQuery);
    const limit = pageLimit(q);
    const specs = await listSpecs(ctx.database, decodeCursor(q.cursor, (v): v is string => typeof v === 'string'), limit + 1);
    return page(req, specs.slice(0, limit).map(specView), specs.length > limit ? specs[limit - 1]!.name : null);
  },
};

export const create: E = {
  async handle(req, ctx) {
    const input = req.json<SpecInput>(specCreateSchema);
    const { spec, created } = await createSpec(ctx.database, ctx.runtime, input);
    return { status: created ? 201 : 200, body: specView(spec), etag: spec.version, location: req.url(`/v1/allocation-specs/${encodeURIComponent(spec.name)}`) };
  },
};

export const show: E = {
  async handle(req, ctx) {
    const spec = await getSpec(ctx.database, req.param('name'));
    return { body: specView(spec), etag: spec.version };
  },
};

export const remove: E = {
  async handle(req, ctx) {
    await deleteSpec(ctx.database, req.param('name'), req.ifMatch());
    return {};
  },
};
