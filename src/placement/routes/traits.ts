// /traits, /traits/{name} and /resource_providers/{uuid}/traits
import type * as Wire from '../../client/placement-wire.js';
import { placementError } from '../errors.js';
import { type Endpoint, answers } from '../request.js';
import * as schemas from '../schemas.js';
import * as traits from '../services/traits.js';

const CUSTOM_TRAIT = /^CUSTOM_[A-Z0-9_]+$/;
export const list: Endpoint = {
  summary: 'list traits (name=startswith:/in:, associated)',
  query: schemas.traitListQuery,
  ok: [200],
  since: '1.6',
  policy: 'placement:traits:list',
  ...answers('TraitList', async (req, ctx) => {
    req.requireJsonAccept();
    const q = req.queryObject<{ name?: string; associated?: string }>();
    const query: traits.TraitQuery = {};
    if (q.name !== undefined) {
      if (q.name.startsWith('in:')) query.names = q.name.slice(3).split(',');
      else if (q.name.startsWith('startswith:')) query.prefix = q.name.slice('startswith:'.length);
      else {
        throw placementError(
          400,
          `Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "${q.name}"`,
        );
      }
    }
    if (q.associated !== undefined) {
      const value = q.associated.toLowerCase();
      if (value !== 'true' && value !== 'false') throw placementError(400, 'The query parameter "associated" only accepts "true" or "false"');
      query.associated = value === 'true';
    }
    const body: Wire.TraitList = { traits: await traits.list(ctx, query) };
    return { body };
  }),
};

function checkCustomName(name: string): void {
  if (name.length > 255 || !CUSTOM_TRAIT.test(name)) {
    throw placementError(
      400,
      'The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"',
    );
  }
}

export const put: Endpoint = {
  summary: 'create a custom trait (exists: 204)',
  ok: [201, 204],
  since: '1.6',
  policy: 'placement:traits:update',
  async handle(req, ctx) {
    const name = req.param('name');
    checkCustomName(name);
    const created = await traits.create(ctx, name);
    const location = req.absoluteUrl(req.link(`/traits/${name}`));
    // 1.15+: an existing trait answers with its cache headers; a created one with none.
    return created ? { status: 201, location } : { status: 204, location, lastModified: null };
  },
};

export const show: Endpoint = {
  summary: 'whether a trait exists',
  ok: [204],
  since: '1.6',
  policy: 'placement:traits:show',
  async handle(req, ctx) {
    await traits.show(ctx, req.param('name'));
    return { status: 204, lastModified: null };
  },
};

export const remove: Endpoint = {
  summary: 'delete an unused custom trait',
  ok: [204],
  since: '1.6',
  policy: 'placement:traits:delete',
  async handle(req, ctx) {
    await traits.remove(ctx, req.param('name'));
    return {};
  },
};

/** A provider's traits as Placement answers them. */
function providerTraits(set: traits.ProviderSet) {
  const body: Wire.ProviderTraits = { resource_provider_generation: set.generation, traits: set.members };
  return { body, lastModified: set.updatedAt };
}

export const listForProvider: Endpoint = {
  summary: "a provider's traits",
  ok: [200],
  response: schemas.schemaRef('ProviderTraits'),
  since: '1.6',
  policy: 'placement:resource_providers:traits:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    return providerTraits(await traits.readForProvider(ctx, req.param('uuid')));
  },
};

export const setForProvider: Endpoint = {
  summary: "replace a provider's traits",
  body: schemas.providerTraits,
  ok: [200],
  response: schemas.schemaRef('ProviderTraits'),
  since: '1.6',
  policy: 'placement:resource_providers:traits:update',
  async handle(req, ctx) {
    const uuid = req.param('uuid');
    const data = req.json<Wire.ProviderTraitsPut>();
    return providerTraits(await traits.replaceForProvider(ctx, uuid, data.traits, data.resource_provider_generation));
  },
};

export const removeForProvider: Endpoint = {
  summary: "remove all of a provider's traits",
  ok: [204],
  since: '1.6',
  policy: 'placement:resource_providers:traits:delete',
  async handle(req, ctx) {
    await traits.setForProvider(ctx, req.param('uuid'), []);
    return {};
  },
};
