// /resource_classes and /resource_classes/{name}
import type * as Wire from '../../client/placement-wire.js';
import { describeSchemaError, validate } from '../../core/json-schema.js';
import type { PlacementContext } from '../context.js';
import { placementError } from '../errors.js';
import { type Endpoint, type PlacementRequest, answers } from '../request.js';
import * as schemas from '../schemas.js';
import * as classes from '../services/resource-classes.js';

const classUrl = (req: PlacementRequest, name: string) => req.link(`/resource_classes/${name}`);
const classBody = (req: PlacementRequest, name: string): Wire.ResourceClass => ({ name, links: [{ rel: 'self', href: classUrl(req, name) }] });

export const list: Endpoint = {
  summary: 'list resource classes',
  ok: [200],
  since: '1.2',
  policy: 'placement:resource_classes:list',
  ...answers('ResourceClassList', async (req, ctx) => {
    req.requireJsonAccept();
    const found = await classes.list(ctx);
    const body: Wire.ResourceClassList = { resource_classes: found.map((rc) => classBody(req, rc.name)) };
    return { body };
  }),
};

export const create: Endpoint = {
  summary: 'create a custom resource class',
  body: schemas.customResourceClass,
  ok: [201],
  since: '1.2',
  policy: 'placement:resource_classes:create',
  async handle(req, ctx) {
    const { name } = req.json<Wire.ResourceClassCreate>();
    await classes.create(ctx, name);
    return { status: 201, location: req.absoluteUrl(classUrl(req, name)) };
  },
};

export const show: Endpoint = {
  summary: 'a resource class',
  ok: [200],
  response: schemas.schemaRef('ResourceClass'),
  since: '1.2',
  policy: 'placement:resource_classes:show',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const rc = await classes.show(ctx, req.param('name'));
    return { body: classBody(req, rc.name), lastModified: rc.updated_at };
  },
};

/** 1.2–1.6: rename a custom class. 1.7+: create it if missing, no body. */
export const update: Endpoint = {
  summary: 'create a custom resource class by name (exists: 204)',
  ok: [201, 204],
  since: '1.2',
  policy: 'placement:resource_classes:update',
  async handle(req, ctx) {
    const name = req.param('name');
    if (req.mv.atLeast('1.7')) return createIfMissing(req, ctx, name);
    // the body 1.2–1.6 took (1.7+ takes none, as the document says)
    const { name: newName } = req.json<Wire.ResourceClassCreate>(schemas.customResourceClass);
    const rc = await classes.rename(ctx, name, newName);
    return { body: classBody(req, rc.name), lastModified: rc.updated_at };
  },
};

async function createIfMissing(req: PlacementRequest, ctx: PlacementContext, name: string) {
  const error = validate(schemas.customResourceClass, { name });
  if (error) throw placementError(400, `JSON does not validate: ${describeSchemaError(error)}`);
  const created = await classes.create(ctx, name, true);
  return { status: created ? 201 : 204, location: req.absoluteUrl(classUrl(req, name)) };
}

export const remove: Endpoint = {
  summary: 'delete an unused custom resource class',
  ok: [204],
  since: '1.2',
  policy: 'placement:resource_classes:delete',
  async handle(req, ctx) {
    await classes.remove(ctx, req.param('name'));
    return {};
  },
};
