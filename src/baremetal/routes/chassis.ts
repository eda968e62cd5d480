// /v1/chassis: list (and detail), create, show, JSON-patch, delete, and the nodes in a chassis
// (/v1/chassis/{chassis}/nodes). Chassis are the system's: their rules (`baremetal:chassis:*`)
// take no target and are checked before the handler.
import { FIELDS_SINCE_1_8, detailQuery, flag, listQuery, showQuery } from './query.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import type { BaremetalContext } from '../context.js';
import { badRequest } from '../errors.js';
import { type Endpoint, type IronicRequest, answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import { type ChassisFields, createChassis, deleteChassis, getChassis, listChassisPage, patchChassis } from '../services/chassis.js';
import { CHASSIS_FIELDS, chassisView, parseFields } from '../views.js';
import { viewContext } from './common.js';
import { type Collection, listPage, listRequest } from './listing.js';

type E = Endpoint;

const PATCHABLE = ['description', 'extra'];
const SORT_KEYS = ['id', 'uuid', 'created_at', 'updated_at', 'description'];

/** The chassis a path names: anything but a uuid is Ironic's 400. */
function chassisUuid(req: IronicRequest): string {
  const ident = req.param('chassis');
  if (!isUuidLike(ident)) throw badRequest(`Expected UUID for chassis_uuid: ${ident}`);
  return normalizeUuid(ident);
}

function chassisFields(doc: Record<string, unknown>): ChassisFields {
  return { description: (doc.description as string | null | undefined) ?? null, extra: doc.extra ?? {} };
}

/** The chassis collection: the list shows uuid and description. */
const CHASSIS: Collection<'chassis'> = {
  key: 'chassis',
  table: CHASSIS_FIELDS,
  defaults: ['uuid', 'description'],
  sortKeys: SORT_KEYS,
  unsortable: ['extra'],
  detail: 'common',
};

async function listing<D extends boolean>(req: IronicRequest, ctx: BaremetalContext, detailPath: D) {
  const list = listRequest(req, CHASSIS, 'chassis', detailPath);
  return listPage(req, CHASSIS, list, viewContext(req, ctx), {
    marker: (uuid) => getChassis(ctx, uuid),
    find: (page) => listChassisPage(ctx, page),
    view: chassisView,
  });
}

export const list: E = {
  policy: 'baremetal:chassis:get',
  summary: 'list chassis',
  query: listQuery({ detail: flag }, FIELDS_SINCE_1_8),
  ok: [200],
  ...answers('ChassisList', (req, ctx) => listing(req, ctx, false)),
};
export const detail: E = {
  policy: 'baremetal:chassis:get',
  summary: 'list chassis with every field',
  query: detailQuery({}),
  ok: [200],
  ...answers('ChassisDetailList', (req, ctx) => listing(req, ctx, true)),
};

export const show: E = {
  policy: 'baremetal:chassis:get',
  summary: 'a chassis',
  query: showQuery(FIELDS_SINCE_1_8),
  ok: [200],
  response: schemaRef('Chassis'),
  async handle(req, ctx) {
    const uuid = chassisUuid(req);
    const args = req.queryArgs();
    const fields = parseFields(args.fields, CHASSIS_FIELDS, req.mv);
    return { body: chassisView(await getChassis(ctx, uuid), viewContext(req, ctx), fields) };
  },
};

export const create: E = {
  policy: 'baremetal:chassis:create',
  summary: 'create a chassis',
  body: schemas.chassis,
  ok: [201],
  response: schemaRef('Chassis'),
  async handle(req, ctx) {
    req.queryArgs();
    const body = req.json<Record<string, unknown>>('chassis');
    const uuid = body.uuid ? String(body.uuid) : null;
    if (uuid !== null && !isUuidLike(uuid)) throw badRequest(`Expected UUID for uuid: ${uuid}`);
    const chassis = await createChassis(ctx, uuid === null ? null : normalizeUuid(uuid), chassisFields(body));
    return { status: 201, body: chassisView(chassis, viewContext(req, ctx)), location: `${req.baseUrl}/v1/chassis/${chassis.uuid}` };
  },
};

export const patch: E = {
  policy: 'baremetal:chassis:update',
  summary: "change a chassis's description or extra (JSON Patch)",
  body: schemas.patch,
  ok: [200],
  response: schemaRef('Chassis'),
  async handle(req, ctx) {
    const uuid = chassisUuid(req);
    req.queryArgs();
    const ops = req.json<PatchOp[]>('patch');
    for (const op of ops) {
      if (!PATCHABLE.includes(rootField(op))) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
    }
    const chassis = await patchChassis(ctx, uuid, (before) => {
      const after = applyPatch(before, ops);
      checkSchema(schemas.chassis, after, 'patch');
      const changed = (k: string) => JSON.stringify(after[k] ?? null) !== JSON.stringify(before[k] ?? null);
      return { fields: chassisFields(after), changed };
    });
    return { body: chassisView(chassis, viewContext(req, ctx)) };
  },
};

export const remove: E = {
  policy: 'baremetal:chassis:delete',
  summary: 'delete a chassis (one without nodes)',
  ok: [204],
  async handle(req, ctx) {
    const uuid = chassisUuid(req);
    req.queryArgs();
    await deleteChassis(ctx, uuid);
    return {};
  },
};
