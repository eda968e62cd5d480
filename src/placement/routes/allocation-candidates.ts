// GET /allocation_candidates (1.10–1.39): parse and validate the request groups in Placement's
// order and words, load the providers that can matter, search (candidates/search.ts), and answer
// in the microversion's format.
import type * as Wire from '../../client/placement-wire.js';
import { type JsonSchema, describeSchemaError, validate } from '../../core/json-schema.js';
import { JSON_NULL, type Json, JsonRecord, jsonArray, jsonNumber, jsonShape, jsonString } from '../../core/json-text.js';
import { Microversion, schemaAt } from '../../core/microversion.js';
import { JsonText } from '../../http/pipeline.js';
import {
  type CandidateRequest,
  type GroupRequest,
  INVENTORY_WIDTH,
  type ModelProvider,
  NO_PROVIDER,
  type ProviderModel,
  USED,
  capacityAt,
} from '../candidates/model.js';
import { type Candidate, type Strategy, searchCandidates, treeOf } from '../candidates/search.js';
import type { PlacementContext } from '../context.js';
import { CODES, placementError } from '../errors.js';
import { type ParsedGroup, parseRequestGroups, parseTraitValue } from '../query.js';
import { MAX_VERSION } from '../microversion.js';
import { type Endpoint, type PlacementRequest, answers } from '../request.js';
import * as schemas from '../schemas.js';

/** Python's repr() of a list of strings, as Placement puts it in some messages. */
const pyList = (items: string[]) => `[${items.map((s) => `'${s}'`).join(', ')}]`;

interface ParsedRequest {
  groups: ParsedGroup[];
  limit: number | null;
  isolate: boolean;
  rootRequired: string[];
  rootForbidden: string[];
  sameSubtrees: string[][];
  strategy: Strategy;
}

/** Everything Placement checks before it touches the database, in its order and words. */
function parseRequest(req: PlacementRequest, ctx: PlacementContext): ParsedRequest {
  const mv = req.mv;
  const q = req.query;
  req.queryObject(schemas.candidatesQuery, [schemas.ALLOT_STRATEGY]);
  const strategy = q.get(schemas.ALLOT_STRATEGY);
  if (strategy !== undefined) {
    const error = validate(schemas.strategyQuery, strategy);
    if (error) throw placementError(400, `Invalid query string parameters: ${describeSchemaError(error)}`);
  }

  const limitText = q.all('limit')[0]; // Placement takes the first of several
  const groupPolicy = q.all('group_policy')[0] ?? null;
  let rootRequired: string[] = [];
  let rootForbidden: string[] = [];
  const rootValues = q.all('root_required');
  if (rootValues.length > 1) throw placementError(400, "Query parameter 'root_required' may be specified only once.", CODES.duplicateKey);
  if (rootValues.length === 1) {
    const parsed = parseTraitValue(rootValues[0]!, true, false);
    rootRequired = [...new Set(parsed.required)];
    rootForbidden = [...new Set(parsed.forbidden)];
    const conflicts = rootForbidden.filter((t) => rootRequired.includes(t));
    if (conflicts.length) {
      throw placementError(400, `Conflicting required and forbidden traits found in root_required: ${conflicts.join(', ')}`, CODES.badValue);
    }
  }
  const sameSubtrees = q.all('same_subtree').map((value) => {
    const suffixes = [...new Set(value.split(',').map((s) => s.trim()))];
    if (suffixes.includes('')) throw placementError(400, 'Empty string (unsuffixed group) can not be specified in `same_subtree` ', CODES.badValue);
    return suffixes;
  });

  const byGroup = parseRequestGroups(q, mv);
  const groups = [...byGroup.values()];
  const hasRequired = (g: ParsedGroup) => g.traits.required.size > 0 || g.traits.anyOf.length > 0;
  if (mv.atLeast('1.36')) {
    const resourceless = groups.filter((g) => g.resources === null).map((g) => g.suffix);
    if (resourceless.length === groups.length) {
      throw placementError(400, 'There must be at least one resources or resources[$S] parameter.', CODES.missingValue);
    }
    const inSubtrees = new Set(sameSubtrees.flat());
    const bad = resourceless.filter((s) => !inSubtrees.has(s));
    if (bad.length) {
      throw placementError(
        400,
        `Resourceless suffixed group request should be specified in \`same_subtree\` query param: bad group(s) - ${pyList(bad)}.`,
        CODES.badValue,
      );
    }
    const unknown = [...inSubtrees].filter((s) => !byGroup.has(s));
    if (unknown.length) {
      throw placementError(
        400,
        `Real suffixes should be specified in \`same_subtree\`: ${pyList(unknown)} not found in ${pyList([...byGroup.keys()])}.`,
        CODES.badValue,
      );
    }
  } else {
    const orphanTraits = groups.filter((g) => hasRequired(g) && g.resources === null).map((g) => `required${g.suffix}`);
    if (orphanTraits.length) {
      throw placementError(
        400,
        `All traits parameters must be associated with resources.  Found the following orphaned traits keys: ${orphanTraits.join(', ')}`,
      );
    }
    const orphanAggs = groups
      .filter((g) => g.resources === null && (g.memberOf.anyOf.length > 0 || g.memberOf.forbidden.size > 0))
      .map((g) => `member_of${g.suffix}`);
    if (orphanAggs.length) {
      throw placementError(
        400,
        `All member_of parameters must be associated with resources. Found the following orphaned member_of keys: ${orphanAggs.join(', ')}`,
      );
    }
    if (groups.some((g) => g.resources === null)) throw placementError(400, 'All request groups must specify resources.');
    if (groups.length === 0) throw placementError(400, 'At least one request group (`resources` or `resources{$S}`) is required.');
  }
  if (mv.atLeast('1.22')) {
    const conflicts: string[] = [];
    for (const g of groups) {
      const sets = [...[...g.traits.required].map((t) => [t]), ...g.traits.anyOf];
      for (const anyOf of sets) {
        if (anyOf.every((t) => g.traits.forbidden.has(t))) conflicts.push(`required${g.suffix}: (${[...anyOf].sort().join(', ')})`);
      }
    }
    if (conflicts.length) {
      throw placementError(400, `Conflicting required and forbidden traits found in the following traits keys: ${conflicts.sort().join(', ')}`);
    }
  }
  if (groupPolicy === null && groups.filter((g) => g.suffix !== '').length > 1) {
    throw placementError(400, 'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.');
  }
  return {
    groups,
    limit: limitText === undefined ? null : Number(limitText),
    isolate: groupPolicy === 'isolate',
    rootRequired,
    rootForbidden,
    sameSubtrees,
    strategy: (strategy as Strategy | undefined) ?? ctx.config.candidateStrategy,
  };
}

/**
 * The query as the document shows it: the schema at the newest microversion, with the unnamed
 * group's parameters named (the numbered groups — resources1, required_ACCEL — are patternProperties).
 */
const DOCUMENTED_QUERY = ((): JsonSchema => {
  const q = schemaAt(schemas.candidatesQuery, Microversion.parse(MAX_VERSION));
  return {
    ...q,
    properties: {
      resources: { type: 'string' },
      required: { type: 'string' },
      member_of: { type: 'string' },
      in_tree: { type: 'string' },
      ...q.properties,
      [schemas.ALLOT_STRATEGY]: schemas.strategyQuery,
    },
  };
})();

export const list: Endpoint = {
  summary: 'allocation candidates and provider summaries for resource groups',
  query: DOCUMENTED_QUERY,
  ok: [200],
  since: '1.10',
  policy: 'placement:allocation_candidates:list',
  ...answers('AllocationCandidates', async (req, ctx) => {
    const started = performance.now();
    const timing: string[] = [];
    let mark = started;
    const phase = (name: string) => {
      const now = performance.now();
      timing.push(`${name};dur=${(now - mark).toFixed(2)}`);
      mark = now;
    };
    req.requireJsonAccept();
    const parsed = parseRequest(req, ctx);
    const db = ctx.database;

    // Names the request uses must exist: 400 otherwise (whatever else the request asks).
    const classNames = [...new Set(parsed.groups.flatMap((g) => [...(g.resources?.keys() ?? [])]))];
    const classIds = await ctx.names.known(db, 'resource_classes', classNames);
    for (const g of parsed.groups) {
      const missing = [...(g.resources?.keys() ?? [])].find((n) => !classIds.has(n));
      if (missing !== undefined) throw placementError(400, `Invalid resource class in resources parameter: No such resource class ${missing}.`);
    }
    const traitSets = [
      [...parsed.rootRequired, ...parsed.rootForbidden],
      ...parsed.groups.map((g) => [...g.traits.required, ...g.traits.forbidden, ...g.traits.anyOf.flat()]),
    ];
    const traitIds = await ctx.names.known(db, 'traits', [...new Set(traitSets.flat())]);
    for (const names of traitSets) {
      const missing = [...new Set(names.filter((n) => !traitIds.has(n)))].sort();
      if (missing.length) throw placementError(400, `No such trait(s): ${missing.join(', ')}.`);
    }

    // The providers, from this process's index (brought up to date with every committed change).
    const model = await ctx.index.current();
    phase('load');
    const rootOf = (uuid: string) => {
      const id = model.idOf(uuid);
      return id === undefined ? NO_PROVIDER : model.providers.get(id)!.rootId;
    };

    const groups: GroupRequest[] = [];
    for (const g of parsed.groups) {
      groups.push({
        suffix: g.suffix,
        resources: g.resources ?? new Map(),
        requiredTraits: [...[...g.traits.required].map((t) => [t]), ...g.traits.anyOf],
        forbiddenTraits: g.traits.forbidden,
        memberOf: g.memberOf.anyOf,
        forbiddenAggregates: g.memberOf.forbidden,
        inTreeRoot: g.inTree === null ? null : rootOf(g.inTree),
      });
    }
    const request: CandidateRequest = {
      groups,
      isolate: parsed.isolate,
      rootRequired: new Set(parsed.rootRequired),
      rootForbidden: new Set(parsed.rootForbidden),
      sameSubtrees: parsed.sameSubtrees,
      nestedAware: req.mv.atLeast('1.29'),
    };
    phase('parse');
    const maxCandidates = Math.min(parsed.limit ?? Infinity, ctx.config.maxCandidates);
    const result = searchCandidates(model, request, { maxCandidates, strategy: parsed.strategy });
    phase('search');
    ctx.metrics.candidateSearches.inc();
    ctx.metrics.candidateOptionsTried.inc(result.work);
    ctx.metrics.candidatesReturned.inc(result.candidates.length);
    if (result.truncated && parsed.limit === null) {
      req.raw.log.info({ candidates: result.candidates.length, work: result.work }, 'allocation candidates capped');
    }
    const body = new JsonText(renderCandidates(model, result.candidates, classIds, req.mv));
    phase('render');
    // Where the time went, for operators and bench/candidates.ts (clients ignore the header).
    const headers = { 'server-timing': [...timing, `candidates;desc="${result.candidates.length}${result.truncated ? ' capped' : ''}"`].join(', ') };
    return { body, lastModified: null, headers };
  }),
};

// The body is written as JSON text directly: this is the answer every scheduler asks for before
// every claim, and building objects only to stringify them cost about a sixth of a scheduler loop.
// The text is assembled from typed pieces (core/json-text.ts), each typed by its part of the wire
// type (Wire.AllocationCandidates), so the compiler checks the answer as it would check an object.

type AllocationItem = Wire.AllocationRequest['allocations'][string];
type LegacyItem = Wire.LegacyAllocationRequest['allocations'][number];
type SummaryResource = Wire.ProviderSummary['resources'][string];

// Each piece's members named once, typed by the wire type (written without an object per piece).
const allocationItem = jsonShape<AllocationItem>()('resources');
const allocationRequest = jsonShape<Wire.AllocationRequest>()('allocations', 'mappings');
const legacyItem = jsonShape<LegacyItem>()('resource_provider', 'resources');
const providerRef = jsonShape<LegacyItem['resource_provider']>()('uuid');
const legacyRequest = jsonShape<Wire.LegacyAllocationRequest>()('allocations');
const summaryResource = jsonShape<SummaryResource>()('capacity', 'used');
const providerSummary = jsonShape<Wire.ProviderSummary>()('resources', 'traits', 'parent_provider_uuid', 'root_provider_uuid');
const candidatesAnswer = jsonShape<Wire.AllocationCandidates>()('allocation_requests', 'provider_summaries');

function amountsJson(resources: ReadonlyMap<string, number>): Json<Wire.Resources> {
  const out = new JsonRecord<number>();
  for (const [rc, amount] of resources) out.add(rc, jsonNumber(amount));
  return out.done();
}

/** `{"allocation_requests": […], "provider_summaries": {…}}` in the shape of this microversion. */
function renderCandidates(
  model: ProviderModel,
  candidates: Candidate[],
  requestedClasses: ReadonlyMap<string, number>,
  mv: Microversion,
): Json<Wire.AllocationCandidates> {
  const uuid = (id: number) => model.providers.get(id)!.uuid;
  const dictForm = mv.atLeast('1.12');
  const withMappings = mv.atLeast('1.34');
  const requests: Json<Wire.AllocationRequest | Wire.LegacyAllocationRequest>[] = [];
  for (const c of candidates) {
    if (!dictForm) {
      const allocations: Json<LegacyItem>[] = [];
      for (const [id, resources] of c.allocations) {
        allocations.push(legacyItem(providerRef(jsonString(uuid(id))), amountsJson(resources)));
      }
      requests.push(legacyRequest(jsonArray(allocations)));
      continue;
    }
    const allocations = new JsonRecord<AllocationItem>();
    for (const [id, resources] of c.allocations) allocations.add(uuid(id), allocationItem(amountsJson(resources)));
    let mappings: Json<Record<string, string[]>> | undefined;
    if (withMappings) {
      const bySuffix = new JsonRecord<string[]>();
      for (const [suffix, ids] of c.mappings) bySuffix.add(suffix, jsonArray(ids.map((id) => jsonString(uuid(id)))));
      mappings = bySuffix.done();
    }
    requests.push(allocationRequest(allocations.done(), mappings));
  }
  return candidatesAnswer(jsonArray(requests), summariesJson(model, candidates, requestedClasses, mv));
}

/**
 * Summaries of the providers the candidates use; from 1.29, of every provider in their trees.
 * Resources: the requested classes only before 1.27, every inventory after. Traits from 1.17.
 */
function summariesJson(
  model: ProviderModel,
  candidates: Candidate[],
  requestedClasses: ReadonlyMap<string, number>,
  mv: Microversion,
): Json<Record<string, Wire.ProviderSummary>> {
  const used = new Set(candidates.flatMap((c) => [...c.allocations.keys()]));
  let ids: number[];
  if (mv.atLeast('1.29')) {
    const roots = new Set([...used].map((id) => model.providers.get(id)!.rootId));
    ids = [...roots].flatMap((root) => treeOf(model, root).map((p) => p.id));
  } else {
    ids = [...used];
  }
  ids.sort((a, b) => a - b);
  const shape: SummaryShape = { allClasses: mv.atLeast('1.27'), withTraits: mv.atLeast('1.17'), withTree: mv.atLeast('1.29') };
  const key = (shape.allClasses ? 1 : 0) | (shape.withTraits ? 2 : 0) | (shape.withTree ? 4 : 0);
  const out = new JsonRecord<Wire.ProviderSummary>();
  for (const id of ids) {
    const p = model.providers.get(id)!;
    // A summary of every inventory depends on the provider alone: kept until it changes.
    const keep = shape.allClasses && p.revision !== undefined;
    const kept = keep ? p.renderedSummary : undefined;
    let text = kept && kept.revision === p.revision && kept.shape === key ? kept.text : undefined;
    if (text === undefined) {
      text = summaryJson(model, p, shape, requestedClasses);
      if (keep) p.renderedSummary = { revision: p.revision!, shape: key, text };
    }
    out.add(p.uuid, text);
  }
  return out.done();
}

interface SummaryShape {
  allClasses: boolean;
  withTraits: boolean;
  withTree: boolean;
}

function summaryJson(model: ProviderModel, p: ModelProvider, shape: SummaryShape, requestedClasses: ReadonlyMap<string, number>): Json<Wire.ProviderSummary> {
  const resources = new JsonRecord<SummaryResource>();
  p.classes.forEach((name, i) => {
    const at = p.inventoryStart + i * INVENTORY_WIDTH;
    if (shape.allClasses || requestedClasses.has(name))
      resources.add(name, summaryResource(jsonNumber(capacityAt(p, at)), jsonNumber(p.inventories[at + USED]!)));
  });
  const { withTraits, withTree } = shape;
  return providerSummary(
    resources.done(),
    withTraits ? jsonArray([...p.traits].map(jsonString)) : undefined,
    !withTree ? undefined : p.parentId === null ? JSON_NULL : jsonString(model.providers.get(p.parentId)!.uuid),
    withTree ? jsonString(model.providers.get(p.rootId)!.uuid) : undefined,
  );
}
