// Parsing shared by the bare-metal routes: paging parameters (limit, marker, sort_key, sort_dir)
// and the `next` link, booleans and UUIDs in query strings, version-gated parameters.
import type { JsonSchema } from '../../core/json-schema.js';
import { isUuid, normalizeUuid } from '../../core/uuid.js';
import { BOOL_WORDS, CUSTOM_TRAIT_PATTERN, STANDARD_TRAITS, parseBool } from '../core.js';
import type { BaremetalRuntime } from '../runtime.js';
import { badRequest, notAcceptable } from '../errors.js';
import type { IronicRequest } from '../request.js';
import type { SortDir } from '../store/paging.js';

export interface BaremetalContext {
  rt: BaremetalRuntime;
}

/** Ironic's api.max_limit: no page is longer, whatever `limit` says. */
export const MAX_LIMIT = 1000;

export interface PageArgs {
  limit: number;
  sortKey: string;
  sortDir: SortDir;
  marker?: string;
}

export function parsePage(args: Record<string, string>, sortKeys: readonly string[]): PageArgs {
  let limit = MAX_LIMIT;
  if (args.limit !== undefined) {
    if (!/^[+-]?\d+$/.test(args.limit.trim())) throw badRequest(`Expected an integer for limit: ${args.limit}`);
    const n = Number(args.limit);
    if (n <= 0) throw badRequest('Limit must be positive');
    limit = Math.min(n, MAX_LIMIT);
  }
  const sortDir = (args.sort_dir ?? 'asc').toLowerCase();
  if (sortDir !== 'asc' && sortDir !== 'desc') throw badRequest(`Invalid sort direction: ${args.sort_dir}. Acceptable values are 'asc' or 'desc'`);
  const sortKey = args.sort_key ?? 'id';
  if (!sortKeys.includes(sortKey)) throw badRequest(`The sort_key value "${sortKey}" is an invalid field for sorting`);
  let marker: string | undefined;
  if (args.marker !== undefined) {
    if (!isUuid(args.marker)) throw badRequest(`Expected UUID for marker: ${args.marker}`);
    marker = normalizeUuid(args.marker);
  }
  return { limit, sortKey, sortDir, ...(marker ? { marker } : {}) };
}

/**
 * The link to the next page, when this page is full: the same query (filters, fields, detail)
 * with sort_key, sort_dir, limit and the marker of the last item.
 */
export function nextLink(req: IronicRequest, path: string, page: PageArgs, count: number, lastUuid: string | undefined): string | undefined {
  if (count < page.limit || lastUuid === undefined) return undefined;
  const params = new URLSearchParams();
  params.set('sort_key', page.sortKey);
  params.set('sort_dir', page.sortDir);
  for (const [k, v] of req.query.pairs) if (!['limit', 'marker', 'sort_key', 'sort_dir'].includes(k)) params.append(k, v);
  params.set('limit', String(page.limit));
  params.set('marker', lastUuid);
  return `${req.baseUrl}/v1/${path}?${params.toString()}`;
}

export function queryBool(args: Record<string, string>, name: string): boolean | undefined {
  const raw = args[name];
  if (raw === undefined) return undefined;
  const value = parseBool(raw);
  if (value === null) throw badRequest(`Invalid ${name}: Unrecognized value '${raw}', acceptable values are: ${BOOL_WORDS.map((w) => `'${w}'`).join(', ')}`);
  return value;
}

export function queryUuid(args: Record<string, string>, name: string): string | undefined {
  const raw = args[name];
  if (raw === undefined) return undefined;
  if (!isUuid(raw)) throw badRequest(`Expected UUID for ${name}: ${raw}`);
  return normalizeUuid(raw);
}

/** 406 for a query parameter newer than the request (Ironic's answer for versioned filters). */
export function requireParamVersions(req: IronicRequest, args: Record<string, string>, since: Record<string, string>): void {
  const tooNew = Object.keys(args).filter((k) => since[k] !== undefined && !req.mv.atLeast(since[k]!));
  if (tooNew.length) throw notAcceptable(`The parameter(s) ${tooNew.join(', ')} need a newer API version.`);
}

/** A trait: one of the standard (os-traits) names or CUSTOM_[A-Z0-9_]+, at most 255 characters. */
/** Ironic's own, keyword for keyword (which error a bad trait reports depends on the order). */
export const TRAIT_SCHEMA: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  anyOf: [{ pattern: CUSTOM_TRAIT_PATTERN }, { enum: [...STANDARD_TRAITS] }],
};

/** The body of a 202/204 verb that takes no document (or an empty one). */
export function emptyBody(req: IronicRequest): void {
  const body = req.jsonBody();
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest(`Schema error for body: ${JSON.stringify(body)} is not of type 'object'`);
  const keys = Object.keys(body);
  if (keys.length) throw badRequest(`Schema error for body: Additional properties are not allowed (${keys.map((k) => `'${k}'`).join(', ')} ${keys.length === 1 ? 'was' : 'were'} unexpected)`);
}
