// /v1/service-instances: create, read, change candidate attributes, validate (allocate), promote,
// roll back, clear a set, terminate.
import { idsError } from '../errors.js';
import { type Endpoint, type IdsRequest, decodeCursor, page, pageLimit } from '../request.js';
import { UUID_PATTERN, emptyQuery, instanceCreateSchema, instanceListQuery, instancePatchSchema } from '../schemas.js';
import * as store from '../store/service-instances.js';

type E = Endpoint;
const uuidRe = new RegExp(UUID_PATTERN);

function instanceId(req: IdsRequest): string {
  const raw = req.param('id');
  if (!uuidRe.test(raw)) throw idsError(404, 'ids.not_found', `service instance ${JSON.stringify(raw)} not found (ids are UUIDs)`);
  return raw.toLowerCase();
}

const answer = (view: store.InstanceView) => ({ body: view, etag: view.version });

/** Actions take no body (an empty JSON object is accepted too). */
function noBody(req: IdsRequest): void {
  const body = req.raw.body as Buffer | undefined;
  if (body && body.length > 0) req.json(emptyQuery);
}

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; state?: string; service_type?: string }>(instanceListQuery);
    const { items, next } = await store.listInstances(ctx.database, q, decodeCursor(q.cursor, (v): v is string => typeof v === 'string'), pageLimit(q));
    return page(req, items, next);
  },
};

export const create: E = {
  async handle(req, ctx) {
    const input = req.json<store.InstanceInput>(instanceCreateSchema);
    const { view, created } = await store.createInstance(ctx.database, input);
    return { status: created ? 201 : 200, ...answer(view), location: req.url(`/v1/service-instances/${view.id}`) };
  },
};

export const show: E = {
  async handle(req, ctx) {
    return answer(await store.getInstance(ctx.database, instanceId(req)));
  },
};

export const update: E = {
  async handle(req, ctx) {
    const { attributes } = req.json<{ attributes: store.Attributes }>(instancePatchSchema);
    return answer(await store.updateAttributes(ctx.database, instanceId(req), attributes, req.ifMatch()));
  },
};

export const validate: E = {
  async handle(req, ctx) {
    noBody(req);
    return answer(await store.validate(ctx.database, ctx.runtime, instanceId(req), req.ifMatch()));
  },
};

export const promote: E = {
  async handle(req, ctx) {
    noBody(req);
    return answer(await store.promote(ctx.database, instanceId(req), req.ifMatch()));
  },
};

export const rollback: E = {
  async handle(req, ctx) {
    noBody(req);
    return answer(await store.rollback(ctx.database, instanceId(req), req.ifMatch()));
  },
};

export const clearSet: E = {
  async handle(req, ctx) {
    const set = req.param('set');
    if (set !== 'candidate' && set !== 'rollback') {
      throw idsError(404, 'ids.not_found', `attribute set ${JSON.stringify(set)}: only candidate and rollback can be cleared (terminate clears active)`);
    }
    return answer(await store.clearSet(ctx.database, instanceId(req), set, req.ifMatch()));
  },
};

export const terminate: E = {
  async handle(req, ctx) {
    return answer(await store.terminate(ctx.database, instanceId(req), req.ifMatch()));
  },
};
