// /resource_providers and /resource_providers/{uuid}
import type { JsonSchema } from '../../core/json-schema.js';
import { newUuid, normalizeUuid } from '../../core/uuid.js';
import { type PlacementContext, latest } from '../context.js';
import { placementError } from '../errors.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import { parseMemberOf, parseResources, parseTraits, traitNames } from '../query.js';
import { idsByName } from '../store/names.js';
import { type ProviderFilters, type ProviderView, createProvider, deleteProvider, listProviders, requireProvider, updateProvider } from '../store/providers.js';

const uuidSchema: JsonSchema = { type: 'string', format: 'uuid' };
const nameSchema: JsonSchema = { type: 'string', maxLength: 200 };
const parentSchema: JsonSchema = { anyOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }] };

const createSchemas: Record<string, JsonSchema> = {
  '1.0': { type: 'object', properties: { name: nameSchema, uuid: uuidSchema }, required: ['name'], additionalProperties: false },
  '1.14': {
    type: 'object',
    properties: { name: nameSchema, uuid: uuidSchema, parent_provider_uuid: parentSchema },
    required: ['name'],
    additionalProperties: false,
  },
};

const updateSchemas: Record<string, JsonSchema> = {
  '1.0': { type: 'object', properties: { name: nameSchema }, required: ['name'], additionalProperties: false },
  '1.14': { type: 'object', properties: { name: nameSchema, parent_provider_uuid: parentSchema }, required: ['name'], additionalProperties: false },
};

const listQuery = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { name: { type: 'string' }, uuid: uuidSchema, ...extra },
  additionalProperties: false,
});
const listQuerySchemas: Record<string, JsonSchema> = {
  '1.0': listQuery({}),
  '1.3': listQuery({ member_of: { type: 'string' } }),
  '1.4': listQuery({ member_of: { type: 'string' }, resources: { type: 'string' } }),
  '1.14': listQuery({ member_of: { type: 'string' }, resources: { type: 'string' }, in_tree: uuidSchema }),
  '1.18': listQuery({ member_of: { type: 'string' }, resources: { type: 'string' }, in_tree: uuidSchema, required: { type: 'string' } }),
};

export function providerUrl(req: PlacementRequest, uuid: string): string {
  return req.link(`/resource_providers/${uuid}`);
}

/** A provider as Placement shows it at the request's microversion. */
export function providerBody(p: ProviderView, req: PlacementRequest): Record<string, unknown> {
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
  const body: Record<string, unknown> = { uuid: p.uuid, name: p.name, generation: p.generation, links };
  if (mv.atLeast('1.14')) {
    body.parent_provider_uuid = p.parent_provider_uuid;
    body.root_provider_uuid = p.root_provider_uuid;
  }
  return body;
}

/** Turn the list filters of a request into store filters (names resolved to ids). */
async function listFilters(req: PlacementRequest, ctx: PlacementContext): Promise<ProviderFilters | null> {
  const q = req.queryObject<Record<string, string>>(listQuerySchemas);
  const filters: ProviderFilters = {};
  if (q.name !== undefined) filters.name = q.name;
  if (q.uuid !== undefined) filters.uuid = normalizeUuid(q.uuid);
  if (q.in_tree !== undefined) filters.inTree = normalizeUuid(q.in_tree);
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
  policy: 'placement:resource_providers:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const filters = await listFilters(req, ctx);
    const providers = filters ? await listProviders(ctx.database, filters) : [];
    return {
      body: { resource_providers: providers.map((p) => providerBody(p, req)) },
      lastModified: latest(providers.map((p) => p.updated_at)),
    };
  },
};

export const create: Endpoint = {
  policy: 'placement:resource_providers:create',
  async handle(req, ctx) {
    const data = req.json<{ name: string; uuid?: string; parent_provider_uuid?: string | null }>(createSchemas);
    const provider = await createProvider(ctx.database, {
      uuid: data.uuid ? normalizeUuid(data.uuid) : newUuid(),
      name: data.name,
      parentUuid: data.parent_provider_uuid ? normalizeUuid(data.parent_provider_uuid) : null,
    });
    const location = req.absoluteUrl(providerUrl(req, provider.uuid));
    if (req.mv.atLeast('1.20')) return { body: providerBody(provider, req), location, lastModified: provider.updated_at };
    return { status: 201, location };
  },
};

export const show: Endpoint = {
  policy: 'placement:resource_providers:show',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const provider = await requireProvider(ctx.database, req.param('uuid'));
    return { body: providerBody(provider, req), lastModified: provider.updated_at };
  },
};

export const update: Endpoint = {
  policy: 'placement:resource_providers:update',
  async handle(req, ctx) {
    const data = req.json<{ name: string; parent_provider_uuid?: string | null }>(updateSchemas);
    const parent = data.parent_provider_uuid;
    const provider = await updateProvider(
      ctx.database,
      req.param('uuid'),
      { name: data.name, parentUuid: parent === undefined ? undefined : parent === null ? null : normalizeUuid(parent) },
      req.mv,
    );
    return { body: providerBody(provider, req), lastModified: provider.updated_at };
  },
};

export const remove: Endpoint = {
  policy: 'placement:resource_providers:delete',
  async handle(req, ctx) {
    await deleteProvider(ctx.database, req.param('uuid'));
    return {};
  },
};
