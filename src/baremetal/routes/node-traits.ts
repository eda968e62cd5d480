// A node's traits (1.37): list, replace, add one, remove one or all (…/traits, …/traits/{trait}).
import type * as Wire from '../../client/baremetal-wire.js';
import type { BaremetalContext } from '../context.js';
import { ApiError } from '../../http/errors.js';
import { CODES, ironicError, notAcceptable } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import { addNodeTrait, removeAllNodeTraits, removeNodeTrait, setNodeTraits } from '../services/node-traits.js';
import { authorizedNode, scoped } from './scope.js';
import { emptyBody, nodeIdent } from './common.js';

type E = Endpoint;

/**
 * Before 1.37 Ironic has no traits controller and the path falls through to the node's, which
 * checks the identifier first and then answers GET with a 406 (once the node is found), PUT with
 * its 405 and DELETE with "Resource could not be found.".
 */
async function requireTraitsVersion(req: IronicRequest, ctx: BaremetalContext, ident: string): Promise<void> {
  if (req.mv.atLeast('1.37')) return;
  if (req.method === 'GET') {
    await authorizedNode(req, ctx, ident);
    throw notAcceptable();
  }
  if (req.method === 'PUT') throw new ApiError(405, CODES.framework, '', {}, { allow: 'DELETE, GET, PATCH, POST' });
  throw ironicError(404, 'Resource could not be found.');
}

/** The node a change of its traits names, once the version, the endpoint's rule and the (empty) query allow it. */
async function changedNode(req: IronicRequest, ctx: BaremetalContext): Promise<string> {
  const ident = nodeIdent(req, 'node');
  await requireTraitsVersion(req, ctx, ident);
  await authorizedNode(req, ctx, ident, req.endpointRule);
  req.queryArgs();
  return ident;
}

export const traits: E = {
  ...scoped('baremetal:node:traits:list'),
  summary: "a node's traits",
  ok: [200],
  response: schemaRef('NodeTraits'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    await requireTraitsVersion(req, ctx, ident);
    req.queryArgs();
    const body: Wire.NodeTraits = { traits: (await authorizedNode(req, ctx, ident, req.endpointRule)).traits };
    return { body };
  },
};

export const setTraits: E = {
  ...scoped('baremetal:node:traits:set'),
  summary: "replace a node's traits",
  body: schemas.nodeTraits,
  ok: [204],
  async handle(req, ctx) {
    const ident = await changedNode(req, ctx);
    const body = req.json<{ traits: string[] }>('body');
    await setNodeTraits(ctx, ident, body.traits);
    return { status: 204 };
  },
};

export const removeTraits: E = {
  ...scoped('baremetal:node:traits:delete'),
  summary: "remove all of a node's traits",
  ok: [204],
  async handle(req, ctx) {
    const ident = await changedNode(req, ctx);
    await removeAllNodeTraits(ctx, ident);
    return { status: 204 };
  },
};

export const addTrait: E = {
  ...scoped('baremetal:node:traits:set'),
  summary: 'add one trait',
  ok: [204],
  async handle(req, ctx) {
    const ident = await changedNode(req, ctx);
    emptyBody(req);
    const trait = req.param('trait');
    checkSchema(schemas.trait, trait, 'trait');
    await addNodeTrait(ctx, ident, trait);
    return { status: 204, location: `${req.baseUrl}/v1/nodes/${ident}/traits/${trait}` };
  },
};

export const removeTrait: E = {
  ...scoped('baremetal:node:traits:delete'),
  summary: 'remove one trait',
  ok: [204],
  async handle(req, ctx) {
    const ident = await changedNode(req, ctx);
    await removeNodeTrait(ctx, ident, req.param('trait'));
    return { status: 204 };
  },
};
