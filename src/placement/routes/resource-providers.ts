// /resource_providers and /resource_providers/{uuid}
import type * as Wire from '../../client/placement-wire.js';
import { newUuid, normalizeUuid } from '../../core/uuid.js';
import { latest } from '../context.js';
import { parseMemberOf, parseResources, parseTraits } from '../query.js';
import { type Endpoint, type PlacementRequest, answers } from '../request.js';
import * as schemas from '../schemas.js';
import * as providers from '../services/providers.js';

export function providerUrl(req: PlacementRequest, uuid: string): string {
  return req.link(`/resource_providers/${uuid}`);
}

/** A provider as Placement shows it at the request's microversion. */
export function providerBody(p: providers.ProviderView, req: PlacementRequest): Wire.ResourceProvider {
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

/** The list filters of a request, parsed (the service resolves the names). */
function listQuery(req: PlacementRequest): providers.ProviderQuery {
  const q = req.queryObject<Record<string, string>>();
  const query: providers.ProviderQuery = { name: q.name, uuid: q.uuid, inTree: q.in_tree };
  if (q.member_of !== undefined) {
    const aggs = parseMemberOf(req.query, 'member_of', req.mv);
    query.aggregatesAnyOf = aggs.anyOf;
    query.forbiddenAggregates = [...aggs.forbidden];
  }
  if (q.required !== undefined) query.traits = parseTraits(req.query, 'required', req.mv);
  if (q.resources !== undefined) query.resources = parseResources(q.resources);
  return query;
}

export const list: Endpoint = {
  summary: 'list resource providers (filters: name, uuid, member_of, resources, in_tree, required)',
  query: schemas.providerListQuery,
  ok: [200],
  policy: 'placement:resource_providers:list',
  ...answers('ResourceProviderList', async (req, ctx) => {
    req.requireJsonAccept();
    const found = await providers.list(ctx, listQuery(req));
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
    const provider = await providers.show(ctx, req.param('uuid'));
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
