// The Ironic list logic, once for every collection (nodes, ports, port groups, chassis,
// allocations, deploy templates, volume connectors and targets, conductors): which query
// parameters a list takes, `detail` against `fields`, the sort key and direction, `limit` and the
// marker (listRequest); then one page after the marker's row and the `next` link (listPage). Each
// collection describes itself (its fields, defaults, sort keys, how it takes `detail`); each list
// endpoint declares its query (query.ts: its filters, with their versions), which listRequest reads,
// and its route applies its filters between the two. The page's body is typed as the list's
// response schema says (`ListBody`: the items under the collection's key, whole on a `/detail`
// path, and `next`), so a route that declares its answer (request.ts `answers`) is checked by it.
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { isLogicalName } from '../core/rules.js';
import { badRequest, notAcceptable } from '../errors.js';
import type { IronicQuery, IronicRequest } from '../request.js';
import type { ColumnCondition, Page, SortDir } from '../core/paging.js';
import { type FieldVersions, type View, type ViewContext, parseFields } from '../views.js';
import { queryBool } from './common.js';
import { PAGING as PAGING_PARAMS } from './query.js';

/** Ironic's api.max_limit: no page is longer, whatever `limit` says. */
const MAX_LIMIT = 1000;
const PAGING = Object.keys(PAGING_PARAMS);

/** One Ironic collection, as its list endpoints take their query. */
export interface Collection<K extends string = string> {
  /** the body's key: `{"nodes": [...], "next": ...}` */
  key: K;
  /** the resource's fields (what `fields` may name, from which version) */
  table: FieldVersions;
  /** what a list shows without `detail` or `fields` (Ironic's DEFAULT_RETURN_FIELDS); none: every field */
  defaults?: readonly string[];
  sortKeys: readonly string[];
  /** fields Ironic refuses to sort by (its invalid_sort_key_list), named so in the 400 */
  unsortable: readonly string[];
  /**
   * How `detail` is taken: Ironic's common check (a 400 below 1.43; not with `fields`), the volume
   * controllers' own (any version, their wording), or not at all (allocations have no `detail`).
   */
  detail: 'common' | 'volume' | 'none';
  /**
   * The fields whose versions a sort key is checked against: a sort key newer than the request is a
   * 406, as in `fields`. Nodes, ports and port groups check their own fields; Ironic checks the
   * conductors' and deploy templates' sort key against the node's fields; the others not at all.
   */
  sortKeyVersions?: FieldVersions;
  /** the marker is a name, not a uuid (conductors: their hostname) */
  namedMarker?: boolean;
}

export interface PageArgs {
  limit: number;
  sortKey: string;
  sortDir: SortDir;
  marker?: string;
}

/** A list's answer (schemas.ts `list`): its items under the collection's key, and the next page's link. */
export type ListBody<K extends string, I> = { [key in K]: I[] } & { next?: string };

/** `Detail`: the list's `/detail` path, whose items are whole. */
export interface ListRequest<Detail extends boolean = boolean> {
  /** the query's parameters by name */
  args: Record<string, string>;
  page: PageArgs;
  /** the fields each item shows; undefined: all (detail) */
  shown: Detail extends true ? undefined : readonly string[] | undefined;
  /** the path of this list under /v1/ (with /detail), for the `next` link */
  path: string;
}

/**
 * The query of a list at `path` (e.g. `nodes`, `nodes/{node}/ports`): the parameters its endpoint
 * declares (query.ts: paging, its filters and, on the list itself rather than its `/detail`,
 * `fields` and `detail`), checked as Ironic checks them.
 */
export function listRequest<D extends boolean>(req: IronicRequest, c: Collection, path: string, detailPath: D): ListRequest<D> {
  const args = req.queryArgs();
  const detailArg = queryBool(args, 'detail');
  if (c.detail === 'common' && detailArg !== undefined && !req.mv.atLeast('1.43'))
    throw badRequest(`Invalid query parameter ?detail=${detailArg ? 'True' : 'False'} received.`);
  if (detailArg === true && args.fields !== undefined)
    throw badRequest(
      c.detail === 'volume' ? "Can't fetch a subset of fields with 'detail' set" : 'Can not specify ?detail=True and fields in the same request.',
    );
  const fields = parseFields(args.fields, c.table, req.mv);
  const sortKey = args.sort_key;
  if (sortKey !== undefined && c.sortKeyVersions) {
    const since = c.sortKeyVersions.find(([name]) => name === sortKey)?.[1];
    if (since !== undefined && !req.mv.atLeast(since)) throw notAcceptable();
  }
  if (sortKey !== undefined && c.unsortable.includes(sortKey)) throw badRequest(`The sort_key value ${sortKey} is an invalid field for sorting`);
  const page = parsePage(args, c);
  // a `/detail` path declares no `fields` (query.ts detailQuery): its items are whole
  const shown = detailPath ? undefined : (fields ?? (detailArg === true ? undefined : c.defaults));
  return { args, page, shown, path: detailPath ? `${path}/detail` : path } as ListRequest<D>;
}

/**
 * A list's column filters (query.ts `column`) the request gives, in the declaration's order, each
 * with its value: a flag read as Ironic reads it, else the text as the declaration's `parse` makes
 * it. The store applies them as declared (store/paging.ts `applyColumns`).
 */
export function columnConditions(req: IronicRequest, list: ListRequest): ColumnCondition[] {
  const declared = req.endpoint.query as IronicQuery | undefined;
  const conditions: ColumnCondition[] = [];
  for (const [name, { column, compare, parse }] of Object.entries(declared?.columns ?? {})) {
    const raw = list.args[name];
    if (raw === undefined) continue;
    const value = declared?.properties[name]?.type === 'boolean' ? queryBool(list.args, name)! : parse ? parse(raw) : raw;
    conditions.push({ column, compare, value });
  }
  return conditions;
}

function parsePage(args: Record<string, string>, c: Collection): PageArgs {
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
  if (!c.sortKeys.includes(sortKey)) throw badRequest(`The sort_key value "${sortKey}" is an invalid field for sorting`);
  const page: PageArgs = { limit, sortKey, sortDir };
  if (args.marker !== undefined) page.marker = c.namedMarker ? markerName(args.marker) : markerUuid(args.marker);
  return page;
}

function markerUuid(raw: string): string {
  if (!isUuidLike(raw)) throw badRequest(`Expected UUID for marker: ${raw}`);
  return normalizeUuid(raw);
}

/** A marker that is a logical name: a conductor's hostname. */
function markerName(raw: string): string {
  if (!isLogicalName(raw)) throw badRequest(`Expected name for marker: ${raw}`);
  return raw;
}

/** A collection's rows, as listPage reads them: `W` a whole one as the answer shows it, `S` a selection. */
export interface Rows<R extends { id: number; uuid: string }, W, S> {
  /** the marker's row (the collection's 404 when there is none) */
  marker(uuid: string): Promise<R>;
  /** a page of rows after `page.after` */
  find(page: Page): Promise<R[]>;
  view: View<R, W, S>;
}

/** One page of the list: the rows after the marker's, each shown with the request's fields, and the `next` link when the page is full. */
export async function listPage<K extends string, R extends { id: number; uuid: string }, W, S, D extends boolean>(
  req: IronicRequest,
  c: Collection<K>,
  list: ListRequest<D>,
  context: ViewContext,
  rows: Rows<R, W, S>,
): Promise<{ body: ListBody<K, D extends true ? W : S> }> {
  const { page } = list;
  const marker = page.marker === undefined ? undefined : await rows.marker(page.marker);
  const after = marker ? { after: { value: (marker as unknown as Record<string, unknown>)[page.sortKey], id: marker.id } } : {};
  const found = await rows.find({ sortKey: page.sortKey, sortDir: page.sortDir, limit: page.limit, ...after });
  const shown: readonly string[] | undefined = list.shown;
  const items = found.map((r) => (shown === undefined ? rows.view(r, context) : rows.view(r, context, shown)));
  // the one place the envelope is made: `c.key` is K, and the items are whole exactly when D is true (listRequest)
  const body = { [c.key]: items } as ListBody<K, D extends true ? W : S>;
  const next = nextLink(req, list, found.length, found[found.length - 1]?.uuid);
  if (next) body.next = next;
  return { body };
}

/**
 * The link to the next page, when this page is full: the same query (filters, fields, detail)
 * with sort_key, sort_dir, limit and the marker of the last item.
 */
export function nextLink(req: IronicRequest, list: ListRequest, count: number, lastMarker: string | undefined): string | undefined {
  const { page } = list;
  if (count < page.limit || lastMarker === undefined) return undefined;
  const params = new URLSearchParams();
  params.set('sort_key', page.sortKey);
  params.set('sort_dir', page.sortDir);
  for (const [k, v] of req.query.pairs) if (!PAGING.includes(k)) params.append(k, v);
  params.set('limit', String(page.limit));
  params.set('marker', lastMarker);
  return `${req.baseUrl}/v1/${list.path}?${params.toString()}`;
}
