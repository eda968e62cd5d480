// /v1/deploy_templates (1.55): list (`?detail=True`: every field; Ironic 21.4 has no `/detail`
// path: `detail` there is a template's name), create, show, JSON-patch, delete. A template's
// name is a trait: Ironic runs its deploy steps on a deployment whose traits name it. allot's fake
// deploy runs no step, so templates are kept and validated (steps, no duplicates) but never run.
// The rules (`baremetal:deploy_template:*`) are the system's and take no target.
import { flag, listQuery, showQuery } from './query.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { applyPatch, type PatchOp, rootField } from '../core/patch.js';
import type { BaremetalContext } from '../context.js';
import { badRequest, ironicError } from '../errors.js';
import { type Endpoint, type IronicRequest, answers, checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import {
  type DeployTemplateFields,
  createDeployTemplate,
  deleteDeployTemplate,
  getDeployTemplate,
  listDeployTemplatePage,
  patchDeployTemplate,
} from '../services/deploy-templates.js';
import { DEPLOY_TEMPLATE_FIELDS, NODE_FIELDS, deployTemplateView, parseFields } from '../views.js';
import { viewContext } from './common.js';
import { type Collection, listPage, listRequest } from './listing.js';

type E = Endpoint;

const TOO_OLD = 'The API version does not allow deploy templates';
/** Before 1.55: GET is a 404, every other method a 405, in the framework's envelope. */
const READ_SINCE = { since: '1.55', tooOld: { status: 404, message: TOO_OLD } } as const;
const WRITE_SINCE = { since: '1.55', tooOld: { status: 405, message: TOO_OLD, allow: null } } as const;
const PATCHABLE = ['extra', 'name', 'steps'];
const SORT_KEYS = ['id', 'uuid', 'created_at', 'updated_at', 'name'];

/** A template's fields from a create body or patched document (schema-checked): priorities as numbers, no step twice. */
function templateFields(doc: Record<string, unknown>): DeployTemplateFields {
  const steps = (doc.steps as Array<Record<string, unknown>>).map((s): Record<string, unknown> => ({ ...s, priority: Number(s.priority) }));
  const seen = new Map<string, number>();
  for (const s of steps) {
    const key = `interface: ${s.interface}, step: ${s.step}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const duplicates = [...seen].filter(([, n]) => n > 1).map(([key]) => key);
  if (duplicates.length) {
    throw badRequest(
      `Deploy template invalid: Duplicate deploy steps. A deploy template cannot have multiple deploy steps with the same interface and step. Duplicates: ${duplicates.join('; ')}.`,
    );
  }
  return { name: doc.name as string, steps, extra: doc.extra ?? {} };
}

function templateIdent(req: IronicRequest): string {
  return req.param('template');
}

/** The deploy template collection (1.55): the list shows uuid and name. */
const TEMPLATES: Collection<'deploy_templates'> = {
  key: 'deploy_templates',
  table: DEPLOY_TEMPLATE_FIELDS,
  defaults: ['uuid', 'name'],
  sortKeys: SORT_KEYS,
  unsortable: ['extra', 'steps'],
  detail: 'common',
  sortKeyVersions: NODE_FIELDS,
};

async function listing(req: IronicRequest, ctx: BaremetalContext) {
  const list = listRequest(req, TEMPLATES, 'deploy_templates', false);
  return listPage(req, TEMPLATES, list, viewContext(req, ctx), {
    marker: (uuid) => getDeployTemplate(ctx, uuid),
    find: (page) => listDeployTemplatePage(ctx, page),
    view: deployTemplateView,
  });
}

export const list: E = {
  policy: 'baremetal:deploy_template:get',
  summary: 'list deploy templates (1.55)',
  query: listQuery({ detail: flag }),
  ok: [200],
  ...READ_SINCE,
  ...answers('DeployTemplateList', (req, ctx) => listing(req, ctx)),
};

export const show: E = {
  policy: 'baremetal:deploy_template:get',
  summary: 'a deploy template (by uuid or name)',
  query: showQuery(),
  ok: [200],
  response: schemaRef('DeployTemplate'),
  ...READ_SINCE,
  async handle(req, ctx) {
    const args = req.queryArgs();
    const fields = parseFields(args.fields, DEPLOY_TEMPLATE_FIELDS, req.mv);
    return { body: deployTemplateView(await getDeployTemplate(ctx, templateIdent(req)), viewContext(req, ctx), fields) };
  },
};

export const create: E = {
  policy: 'baremetal:deploy_template:create',
  summary: 'create a deploy template (its name is a trait)',
  body: schemas.deployTemplate,
  ok: [201],
  response: schemaRef('DeployTemplate'),
  ...WRITE_SINCE,
  async handle(req, ctx) {
    req.queryArgs();
    const body = req.json<Record<string, unknown>>('template');
    const uuid = body.uuid ? String(body.uuid) : null;
    if (uuid !== null && !isUuidLike(uuid)) throw badRequest(`Expected UUID for uuid: ${uuid}`);
    const template = await createDeployTemplate(ctx, uuid === null ? null : normalizeUuid(uuid), templateFields(body));
    return { status: 201, body: deployTemplateView(template, viewContext(req, ctx)), location: `${req.baseUrl}/v1/deploy_templates/${template.uuid}` };
  },
};

export const patch: E = {
  policy: 'baremetal:deploy_template:update',
  summary: 'change a deploy template (JSON Patch)',
  body: schemas.patch,
  ok: [200],
  response: schemaRef('DeployTemplate'),
  ...WRITE_SINCE,
  async handle(req, ctx) {
    req.queryArgs();
    const ops = req.json<PatchOp[]>('patch');
    for (const op of ops) {
      if (!PATCHABLE.includes(rootField(op))) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
      if (op.op === 'remove' && ['name', 'steps'].includes(rootField(op)) && op.path.split('/').length === 2)
        throw ironicError(400, `Cannot remove ${rootField(op)} from a deploy template.`);
    }
    const template = await patchDeployTemplate(ctx, templateIdent(req), (before) => {
      const after = applyPatch(before, ops);
      checkSchema(schemas.deployTemplate, after, 'template');
      return templateFields(after);
    });
    return { body: deployTemplateView(template, viewContext(req, ctx)) };
  },
};

export const remove: E = {
  policy: 'baremetal:deploy_template:delete',
  summary: 'delete a deploy template',
  ok: [204],
  ...WRITE_SINCE,
  async handle(req, ctx) {
    req.queryArgs();
    await deleteDeployTemplate(ctx, templateIdent(req));
    return {};
  },
};
