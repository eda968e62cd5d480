// /v1/service-instances: create, read, change candidate attributes, validate (allocate), promote,
// roll back, clear a set, terminate.
import type { JsonSchema } from '../../core/json-schema.js';
import { isUuid, normalizeUuid } from '../../core/uuid.js';
import { idsDomainError } from '../core/domain-errors.js';
import type { IdsContext } from '../context.js';
import { idsError } from '../errors.js';
import { type Endpoint, type IdsRequest, cursorOf, decodeCursor, page, pageLimit } from '../request.js';

const instanceCursor = cursorOf('service instances', (v): v is string => typeof v === 'string');
import { emptyQuery, instanceCreateSchema, instanceListQuery, instancePatchSchema } from '../schemas.js';
import * as service from '../services/service-instances.js';
import { instanceView } from './views.js';

type E = Endpoint;

function instanceId(req: IdsRequest): string {
  const raw = req.param('id');
  if (!isUuid(raw)) throw idsError(404, 'ids.not_found', `service instance ${JSON.stringify(raw)} not found (ids are UUIDs)`);
  return normalizeUuid(raw);
}

const answer = (instance: service.InstanceDetails) => {
  const view = instanceView(instance);
  return { body: view, etag: view.version };
};

/** Actions take no body (an empty JSON object is accepted too). */
function noBody(req: IdsRequest): void {
  if (req.bodyBytes.length > 0) req.json(emptyQuery);
}

/** Who asks: the pools and instances it sees, its user. */
const caller = (req: IdsRequest): service.Caller => ({ scope: req.poolScope(), user: req.credentials?.userId ?? null });

/**
 * The list's query: `state` names a state of the process's lifecycles (built in and loaded), as
 * the other lists' closed filters do — one no lifecycle has matches nothing, so it is a mistake.
 */
const listQuery = (ctx: IdsContext): JsonSchema => ({
  ...instanceListQuery,
  properties: { ...instanceListQuery.properties, state: { ...instanceListQuery.properties!.state!, enum: ctx.lifecycles.states() } },
});

export const list: E = {
  async handle(req, ctx) {
    const q = req.queryObject<{ limit?: string; cursor?: string; state?: string; service_type?: string }>(listQuery(ctx));
    const { items, next } = await service.listInstances(ctx, q, decodeCursor(q.cursor, instanceCursor), pageLimit(q), req.poolScope());
    return page(req, items.map(instanceView), instanceCursor, next);
  },
};

export const create: E = {
  async handle(req, ctx) {
    const body = req.json<Omit<service.InstanceInput, 'project_id'> & { project_id?: string | null }>(instanceCreateSchema);
    // the caller's project, unless one allowed every project's names another
    const own = req.credentials?.projectId ?? null;
    const named = body.project_id === undefined ? own : body.project_id;
    if (named !== own && !req.allows('ids:all_projects')) throw idsDomainError('project_not_allowed', { project: named });
    const instance = await service.createInstance(ctx, { ...body, project_id: named }, caller(req));
    return { status: instance.created ? 201 : 200, ...answer(instance), location: req.url(`/v1/service-instances/${instance.row.id}`) };
  },
};

export const show: E = {
  async handle(req, ctx) {
    return answer(await service.getInstance(ctx, instanceId(req), req.poolScope()));
  },
};

export const update: E = {
  async handle(req, ctx) {
    const { attributes } = req.json<{ attributes: service.Attributes }>(instancePatchSchema);
    return answer(await service.updateAttributes(ctx, instanceId(req), attributes, req.ifMatch(), caller(req)));
  },
};

export const validate: E = {
  async handle(req, ctx) {
    noBody(req);
    return answer(await service.validate(ctx, instanceId(req), req.ifMatch(), caller(req)));
  },
};

export const promote: E = {
  async handle(req, ctx) {
    noBody(req);
    return answer(await service.promote(ctx, instanceId(req), req.ifMatch(), caller(req)));
  },
};

export const rollback: E = {
  async handle(req, ctx) {
    noBody(req);
    return answer(await service.rollback(ctx, instanceId(req), req.ifMatch(), caller(req)));
  },
};

export const clearSet: E = {
  async handle(req, ctx) {
    const set = req.param('set');
    if (set !== 'candidate' && set !== 'rollback') {
      throw idsError(404, 'ids.not_found', `attribute set ${JSON.stringify(set)}: only candidate and rollback can be cleared (terminate clears active)`);
    }
    return answer(await service.clearSet(ctx, instanceId(req), set, req.ifMatch(), caller(req)));
  },
};

export const terminate: E = {
  async handle(req, ctx) {
    return answer(await service.terminate(ctx, instanceId(req), req.ifMatch(), caller(req)));
  },
};
