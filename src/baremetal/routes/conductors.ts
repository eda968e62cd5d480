// /v1/conductors (1.49): the allot processes working bare-metal allocations, alive or not.
import type { BaremetalContext } from '../context.js';
import { ironicError } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { type ConductorRow, findConductor, listConductors } from '../store/conductors.js';
import { ironicTime } from '../views.js';

type E = Endpoint;
/** Before 1.49 Ironic answers as for any resource it does not know, in its own envelope. */
const SINCE: Pick<E, 'since' | 'tooOld'> = { since: '1.49', tooOld: () => ironicError(404, 'Resource could not be found.') };

function view(c: ConductorRow, req: IronicRequest, ctx: BaremetalContext, detail: boolean): Record<string, unknown> {
  const alive = c.online === 1 && Date.parse(c.heartbeat_at) >= ctx.clock.nowMs() - ctx.config.heartbeatTimeout;
  // in Ironic's key order
  const out: Record<string, unknown> = detail ? { created_at: ironicTime(c.created_at), updated_at: ironicTime(c.heartbeat_at) } : {};
  Object.assign(out, { hostname: c.hostname, conductor_group: '' });
  if (detail) out.drivers = ['fake-hardware'];
  out.links = [
    { href: `${req.baseUrl}/v1/conductors/${c.hostname}`, rel: 'self' },
    { href: `${req.baseUrl}/conductors/${c.hostname}`, rel: 'bookmark' },
  ];
  out.alive = alive;
  return out;
}

export const list: E = {
  ...SINCE,
  async handle(req, ctx) {
    const args = req.queryArgs(['detail']);
    const detail = args.detail !== undefined && ['1', 't', 'true', 'on', 'y', 'yes'].includes(args.detail.toLowerCase());
    return { body: { conductors: (await listConductors(ctx.database)).map((c) => view(c, req, ctx, detail)) } };
  },
};

export const show: E = {
  ...SINCE,
  async handle(req, ctx) {
    req.queryArgs([]);
    const c = await findConductor(ctx.database, req.param('hostname'));
    if (!c) throw ironicError(404, `Conductor ${req.param('hostname')} could not be found.`);
    return { body: view(c, req, ctx, true) };
  },
};
