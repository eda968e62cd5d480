// /resource_providers and /resource_providers/{uuid}
import type * as Wire from '../../client/placement-wire.js';
import { newUuid, normalizeUuid } from '../../core/uuid.js';
import { type PlacementContext, latest } from '../context.js';
import { placementError } from '../errors.js';
import { parseMemberOf, parseResources, parseTraits, traitNames } from '../query.js';
import { type Endpoint, type PlacementRequest, answers } from '../request.js';
import * as schemas from '../schemas.js';
import * as providers from '../services/providers.js';
import { idsByName } from '../store/names.js';
import { type ProviderFilters, type ProviderView, listProviders, requireProvider } from '../store/providers.js';

export function providerUrl(req: PlacementRequest, uuid: string): string {
  return req.link(`/resource_providers/${uuid}`);
}

/** A provider as Placement shows it at the request's microversion. */
export function providerBody(p: ProviderView, req: PlacementRequest): Wire.ResourceProvider {
  const mv = req.mv;
  const self = providerUrl(req, p.uuid);
  const links = [
    { rel: 'self', href: self },
    { rel: 'inventories', href: `${self}/inventories` },
    { rel: 'usages', href: `${self}/usages` },
  ];
  if (mv.atLeast('1.1')) links.push({ rel: 'aggregates', href: `${self}/aggregates` });
  if (mv.atLeast('1.6')) links.push({ rel: 'traits', href: `${self}/traits` });
  if (mv.atLeast('1.11')) links.push({ rel: 'allocations', href: `${self}/allocations` });
  const body: Wire.ResourceProvider = { uuid: p.uuid, name: p.name, generation: p.generation, links };
  if (mv.atLeast('1.14')) {
    body.parent_provider_uuid = p.parent_provider_uuid;
    body.root_provider_uuid = p.root_provider_uuid;
  }
  return body;
}

/** Turn the list filters of a request into store filters (names resolved to ids). */
async function listFilters(req: PlacementRequest, ctx: PlacementContext): Promise<ProviderFilters | null> {
  const q = req.queryObject<Record<string, string>>();
  const filters: ProviderFilters = {};
  if (q.name !== undefined) filters.name = q.name;
  if (q.uuid !== undefined) filters.uuid = q.uuid;
  if (q.in_tree !== undefined) filters.inTree = q.in_tree;
  if (q.member_of !== undefined) {
    const aggs = parseMemberOf(req.query, 'member_of', req.mv);
    filters.aggregatesAnyOf = aggs.anyOf;
    filters.forbiddenAggregates = [...aggs.forbidden];
  }
  if (q.required !== undefined) {
    const traits = parseTraits(req.query, 'required', req.mv);
    const ids = await idsByName(ctx.database, 'traits', traitNames(traits));
    const missing = traitNames(traits).filter((n) => !ids.has(n));
    if (missing.length) throw placementError(400, `No such trait(s): ${missing.sort().join(', ')}.`);
    filters.requiredTraits = [...traits.required].map((n) => ids.get(n)!);
    filters.forbiddenTraits = [...traits.forbidden].map((n) => ids.get(n)!);
    filters.traitsAnyOf = traits.anyOf.map((set) => set.map((n) => ids.get(n)!));
  }
  if (q.resources !== undefined) {
    const wanted = parseResources(q.resources);
    const ids = await idsByName(ctx.database, 'resource_classes', [...wanted.keys()]);
    const missing = [...wanted.keys()].filter((n) => !ids.has(n));
    if (missing.length) throw placementError(400, `Invalid resource class in resources parameter: No such resource class ${missing[0]}.`);
    filters.resources = new Map([...wanted].map(([name, amount]) => [ids.get(name)!, amount]));
  }
  return filters;
}

export const list: Endpoint = {
  summary: 'list resource providers (filters: name, uuid, member_of, resources, in_tree, required)',
  query: schemas.providerListQuery,
  ok: [200],
  policy: 'placement:resource_providers:list',
  ...answers('ResourceProviderList', async (req, ctx) => {
    req.requireJsonAccept();
    const filters = await listFilters(req, ctx);
    const found = filters ? await listProviders(ctx.database, filters) : [];
    const body: Wire.ResourceProviderList = { resource_providers: found.map((p) => providerBody(p, req)) };
    return {
      body,
      lastModified: latest(found.map((p) => p.updated_at)),
    };
  }),
};

export const create: Endpoint = {
  summary: 'create a resource provider',
  body: schemas.providerCreate,
  ok: [200],
  response: schemas.schemaRef('ResourceProvider'),
  policy: 'placement:resource_providers:create',
  async handle(req, ctx) {
    const data = req.json<Wire.ProviderCreate>();
    const provider = await providers.create(ctx, {
      // Placement normalizes a new provider's uuid (dashes, lower case); every other uuid stays as sent.
      uuid: data.uuid ? normalizeUuid(data.uuid) : newUuid(),
      name: data.name,
      parentUuid: ('parent_provider_uuid' in data ? data.parent_provider_uuid : null) ?? null, // 1.14+
    });
    const location = req.absoluteUrl(providerUrl(req, provider.uuid));
    if (req.mv.atLeast('1.20')) return { body: providerBody(provider, req), location, lastModified: provider.updated_at };
    return { status: 201, location };
  },
};

export const show: Endpoint = {
  summary: 'a resource provider',
  ok: [200],
  response: schemas.schemaRef('ResourceProvider'),
  policy: 'placement:resource_providers:show',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const provider = await requireProvider(ctx.database, req.param('uuid'));
    return { body: providerBody(provider, req), lastModified: provider.updated_at };
  },
};

export const update: Endpoint = {
  summary: "change a provider's name or parent",
  body: schemas.providerUpdate,
  ok: [200],
  response: schemas.schemaRef('ResourceProvider'),
  policy: 'placement:resource_providers:update',
  async handle(req, ctx) {
    const data = req.json<Wire.ProviderUpdate>();
    const parentUuid = 'parent_provider_uuid' in data ? data.parent_provider_uuid : undefined; // 1.14+
    const provider = await providers.update(ctx, req.param('uuid'), { name: data.name, parentUuid }, req.mv.atLeast('1.37'));
    return { body: providerBody(provider, req), lastModified: provider.updated_at };
  },
};

export const remove: Endpoint = {
  summary: 'delete a provider without allocations or children',
  ok: [204],
  policy: 'placement:resource_providers:delete',
  async handle(req, ctx) {
    await providers.remove(ctx, req.param('uuid'));
    return {};
  },
};
