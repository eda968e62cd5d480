// /v1/conductors (1.49): the allot processes working bare-metal allocations, alive or not.
import type * as Wire from '../../client/baremetal-wire.js';
import { CONDUCTOR, schemaRef } from '../schemas.js';
import { listQuery } from './query.js';
import type { BaremetalContext } from '../context.js';
import { ironicError } from '../errors.js';
import { type Endpoint, type IronicRequest, answers } from '../request.js';
import { CONDUCTOR_SORT_COLUMNS, type ConductorRow, getConductor, listConductorPage } from '../services/conductors.js';
import { NODE_FIELDS, ironicTime } from '../views.js';
import { type Collection, listRequest, nextLink } from './listing.js';

type E = Endpoint;
/** Before 1.49 Ironic answers as for any resource it does not know, in its own envelope. */
const SINCE: Pick<E, 'since' | 'tooOld'> = { since: '1.49', tooOld: () => ironicError(404, 'Resource could not be found.') };

/** A conductor's fields in Ironic's key order (`fields=` may name any of them; all exist since 1.49): its schema's members. */
const CONDUCTOR_FIELDS = Object.entries(CONDUCTOR.members).map(([name, [since]]) => [name, since, null] as const);
/** The list's fields without `detail` or `fields` (Ironic's DEFAULT_RETURN_FIELDS). */
const LIST_FIELDS = ['hostname', 'conductor_group', 'alive'];
/** The conductor collection: sorted by its columns, not by what is computed (Ironic's invalid_sort_key_list); its marker is a hostname. */
const CONDUCTORS: Collection = {
  key: 'conductors',
  table: CONDUCTOR_FIELDS,
  defaults: LIST_FIELDS,
  sortKeys: Object.keys(CONDUCTOR_SORT_COLUMNS),
  unsortable: ['alive', 'drivers'],
  detail: 'common',
  sortKeyVersions: NODE_FIELDS,
  namedMarker: true,
};

/** The conductor in Ironic's key order; `fields`: only those (links always), as Ironic's sanitize_dict. */
function view(c: ConductorRow, req: IronicRequest, ctx: BaremetalContext, fields?: readonly string[]): Wire.ConductorSelection {
  const alive = c.online === 1 && Date.parse(c.heartbeat_at) >= ctx.clock.nowMs() - ctx.config.heartbeatTimeout;
  const out: Wire.Conductor = {
    created_at: ironicTime(c.created_at),
    updated_at: ironicTime(c.heartbeat_at),
    hostname: c.hostname,
    conductor_group: '',
    drivers: ['fake-hardware'],
    links: [
      { href: `${req.baseUrl}/v1/conductors/${c.hostname}`, rel: 'self' },
      { href: `${req.baseUrl}/conductors/${c.hostname}`, rel: 'bookmark' },
    ],
    alive,
  };
  if (!fields) return out;
  return Object.fromEntries(Object.entries(out).filter(([key]) => key === 'links' || fields.includes(key))) as Wire.ConductorSelection;
}

/**
 * GET /v1/conductors: paged and sorted as the other lists (listing.ts, the store's applyPage),
 * except that the marker is a hostname, as Ironic's: "Expected name for marker" when it cannot be
 * one, 404 "Conductor … could not be found." when there is no such conductor.
 */
export const list: E = {
  policy: 'baremetal:conductor:get',
  summary: 'list conductors and whether they are alive',
  query: listQuery({ detail: { type: 'boolean' } }),
  ok: [200],
  ...SINCE,
  ...answers('ConductorList', async (req, ctx) => {
    const list = listRequest(req, CONDUCTORS, 'conductors', false);
    const { page } = list;
    const marker = page.marker;
    const after = marker === undefined ? undefined : await getConductor(ctx, marker);
    if (marker !== undefined && !after) throw ironicError(404, `Conductor ${marker} could not be found.`);
    const conductors = await listConductorPage(ctx, {
      sortKey: page.sortKey as keyof typeof CONDUCTOR_SORT_COLUMNS,
      sortDir: page.sortDir,
      limit: page.limit,
      ...(after ? { after } : {}),
    });
    const body: Wire.ConductorList = { conductors: conductors.map((c) => view(c, req, ctx, list.shown)) };
    const next = nextLink(req, list, conductors.length, conductors[conductors.length - 1]?.hostname);
    if (next) body.next = next;
    return { body };
  }),
};

export const show: E = {
  policy: 'baremetal:conductor:get',
  summary: 'a conductor',
  ok: [200],
  response: schemaRef('Conductor'),
  ...SINCE,
  async handle(req, ctx) {
    req.queryArgs();
    const c = await getConductor(ctx, req.param('hostname'));
    if (!c) throw ironicError(404, `Conductor ${req.param('hostname')} could not be found.`);
    return { body: view(c, req, ctx) };
  },
};
