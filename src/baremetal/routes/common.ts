// Parsing shared by the bare-metal routes: paging parameters (limit, marker, sort_key, sort_dir)
// and the `next` link, booleans and UUIDs in query strings, version-gated parameters.
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { BOOL_WORDS, isHostnameSafe, isUuidOrName, parseBool } from '../core/rules.js';
import { badRequest, frameworkError, notAcceptable } from '../errors.js';
import { nodeNotFound } from '../store/nodes.js';
import type { IronicRequest } from '../request.js';
import type { SortDir } from '../store/paging.js';

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
    if (!isUuidLike(args.marker)) throw badRequest(`Expected UUID for marker: ${args.marker}`);
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
  if (!isUuidLike(raw)) throw badRequest(`Expected UUID for ${name}: ${raw}`);
  return normalizeUuid(raw);
}

/** Query parameters newer than 1.1: the version of each, and whether Ironic's 406 names that version. */
export type ParamVersions = Record<string, { since: string; named?: boolean }>;

/** 406 for a query parameter newer than the request (Ironic's answer for versioned filters). */
export function requireParamVersions(req: IronicRequest, args: Record<string, string>, versions: ParamVersions): void {
  for (const key of Object.keys(args)) {
    const v = versions[key];
    if (v && !req.mv.atLeast(v.since)) throw notAcceptable(v.named ? v.since : undefined);
  }
}

/** The body of a 202/204 verb that takes no document (or an empty one). */
export function emptyBody(req: IronicRequest): void {
  const body = req.jsonBody();
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest(`Schema error for body: ${JSON.stringify(body)} is not of type 'object'`);
  const keys = Object.keys(body);
  if (keys.length)
    throw badRequest(
      `Schema error for body: Additional properties are not allowed (${keys.map((k) => `'${k}'`).join(', ')} ${keys.length === 1 ? 'was' : 'were'} unexpected)`,
    );
}

/**
 * The node a path names, checked as Ironic checks it before looking: neither a uuid nor a logical
 * name is a 400 "Expected UUID or name for <arg>: …" — in the web framework's envelope where
 * Ironic's argument is `node` (the node and its traits and allocation), in Ironic's own where it
 * is `node_ident` (states and maintenance). Before 1.5 names did not exist (a name is not found);
 * before 1.10 a name had to be a hostname.
 */
export function nodeIdent(req: IronicRequest, arg: 'node' | 'node_ident'): string {
  const ident = req.param('node');
  if (!isUuidOrName(ident)) {
    const message = `Expected UUID or name for ${arg}: ${ident}`;
    throw arg === 'node' ? frameworkError(400, message) : badRequest(message);
  }
  if (isUuidLike(ident)) return ident;
  if (!req.mv.atLeast('1.5')) throw nodeNotFound(ident);
  if (!req.mv.atLeast('1.10') && !isHostnameSafe(ident)) throw badRequest(invalidUuidOrName(ident));
  return ident;
}

/** The allocation a path names: neither a uuid nor a logical name is Ironic's 400 (`patch`: PATCH's wording). */
export function allocationIdent(req: IronicRequest, patch = false): string {
  const ident = req.param('allocation');
  if (!isUuidOrName(ident)) throw badRequest(patch ? invalidUuidOrName(ident) : `Expected UUID or name for allocation_ident: ${ident}`);
  return ident;
}

/** Ironic's InvalidUuidOrName. */
export const invalidUuidOrName = (ident: string) => `Expected a logical name or UUID but received ${ident}.`;
