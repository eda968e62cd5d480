// /v1/service-instances: create, read, change candidate attributes, validate (allocate), promote,
// roll back, clear a set, terminate.
import type { JsonSchema } from '../../core/json-schema.js';
import { isUuid, normalizeUuid } from '../../core/uuid.js';
import { idsDomainError } from '../core/domain-errors.js';
import type { IdsContext } from '../context.js';
import { idsError } from '../errors.js';
import { type Endpoint, type IdsRequest, cursorOf, decodeCursor, page, pageLimit, answers, WITH_ETAG, IF_MATCH } from '../request.js';

const instanceCursor = cursorOf('service instances', (v): v is string => typeof v === 'string');
import { instanceCreateSchema, instanceListQuery, instancePatchSchema } from '../schemas.js';
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
  policy: 'ids:service_instances:list',
  summary: 'list service instances',
  query: instanceListQuery,
  ok: [200],
  ...answers('InstancePage', async (req, ctx) => {
    const q = req.queryObject<{ limit?: string; cursor?: string; state?: string; service_type?: string }>(listQuery(ctx));
    const { items, next } = await service.listInstances(ctx, q, decodeCursor(q.cursor, instanceCursor), pageLimit(q), req.poolScope());
    return page(req, items.map(instanceView), instanceCursor, next);
  }),
};

export const create: E = {
  policy: 'ids:service_instances:create',
  summary:
    'create a service instance (candidate set = attributes, state start); with validate (and promote) also reserve every attribute — pool values, nodes, capacity — all or nothing, in one request',
  body: instanceCreateSchema,
  ok: [201, 200],
  errors: [400, 403, 409, 422, 502, 504],
  ...WITH_ETAG,
  ...answers('Instance', async (req, ctx) => {
    const body = req.json<Omit<service.InstanceInput, 'project_id'> & { project_id?: string | null }>();
    // the caller's project, unless one allowed every project's names another
    const own = req.credentials?.projectId ?? null;
    const named = body.project_id === undefined ? own : body.project_id;
    if (named !== own && !req.allows('ids:all_projects')) throw idsDomainError('project_not_allowed', { project: named });
    const instance = await service.createInstance(ctx, { ...body, project_id: named }, caller(req));
    return { status: instance.created ? 201 : 200, ...answer(instance), location: req.url(`/v1/service-instances/${instance.row.id}`) };
  }),
};

export const show: E = {
  policy: 'ids:service_instances:show',
  summary: 'a service instance with its attribute sets',
  ok: [200],
  errors: [404],
  ...WITH_ETAG,
  ...answers('Instance', async (req, ctx) => {
    return answer(await service.getInstance(ctx, instanceId(req), req.poolScope()));
  }),
};

export const update: E = {
  policy: 'ids:service_instances:update',
  summary: 'merge-patch the candidate attributes (state up → update)',
  body: instancePatchSchema,
  mergeBody: instancePatchSchema,
  ok: [200],
  ...IF_MATCH,
  errors: [400, 404, 409, 412],
  ...answers('Instance', async (req, ctx) => {
    const { attributes } = req.json<{ attributes: service.Attributes }>();
    return answer(await service.updateAttributes(ctx, instanceId(req), attributes, req.ifMatch(), caller(req)));
  }),
};

export const validate: E = {
  policy: 'ids:service_instances:update',
  summary: 'allocate pool values, reserve nodes and capacity, and look up, into the candidate set: all or nothing',
  ok: [200],
  ...IF_MATCH,
  errors: [404, 409, 412, 422, 502, 504],
  ...answers('Instance', async (req, ctx) => {
    req.noBody();
    return answer(await service.validate(ctx, instanceId(req), req.ifMatch(), caller(req)));
  }),
};

export const promote: E = {
  policy: 'ids:service_instances:update',
  summary: 'candidate → active, active → rollback',
  ok: [200],
  ...IF_MATCH,
  errors: [404, 409, 412],
  ...answers('Instance', async (req, ctx) => {
    req.noBody();
    return answer(await service.promote(ctx, instanceId(req), req.ifMatch(), caller(req)));
  }),
};

export const rollback: E = {
  policy: 'ids:service_instances:update',
  summary: 'swap active and rollback',
  ok: [200],
  ...IF_MATCH,
  errors: [404, 409, 412],
  ...answers('Instance', async (req, ctx) => {
    req.noBody();
    return answer(await service.rollback(ctx, instanceId(req), req.ifMatch(), caller(req)));
  }),
};

export const clearSet: E = {
  policy: 'ids:service_instances:update',
  summary: 'clear the candidate or rollback set (frees what only it held)',
  ok: [200],
  ...IF_MATCH,
  errors: [404, 409, 412],
  ...answers('Instance', async (req, ctx) => {
    const set = req.param('set');
    if (set !== 'candidate' && set !== 'rollback') {
      throw idsError(404, 'ids.not_found', `attribute set ${JSON.stringify(set)}: only candidate and rollback can be cleared (terminate clears active)`);
    }
    return answer(await service.clearSet(ctx, instanceId(req), set, req.ifMatch(), caller(req)));
  }),
};

export const terminate: E = {
  policy: 'ids:service_instances:delete',
  summary: 'terminate: release every value, node and capacity (external values through the outbox); 409 while a held node is deployed',
  ok: [200],
  ...IF_MATCH,
  errors: [404, 409, 412],
  ...answers('Instance', async (req, ctx) => {
    return answer(await service.terminate(ctx, instanceId(req), req.ifMatch(), caller(req)));
  }),
};
