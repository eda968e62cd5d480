// Addresses inside the dashboard: the view of the URL's hash (`#/baremetal`), a thing within it
// (`#/instances/<id>`), and what to show first (`#/consumers?consumer=<uuid>`). A service
// instance's holdings link to where each is shown, and each holding links back to its instance:
// all of those links are made here.

export const ROUTES = [
  { path: 'capacity', title: 'Capacity' },
  { path: 'consumers', title: 'Consumers' },
  { path: 'baremetal', title: 'Bare metal' },
  { path: 'pools', title: 'Identifier pools' },
  { path: 'instances', title: 'Service instances' },
] as const;
export type Route = (typeof ROUTES)[number]['path'];

export interface Place {
  route: Route;
  /** what follows the route in the path: `#/instances/<id>` → [id] */
  rest: string[];
  params: URLSearchParams;
}

export function placeOf(hash: string): Place {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  const [first, ...rest] = path.split('/').map(decodeURIComponent);
  const route = ROUTES.find((r) => r.path === first)?.path ?? 'capacity';
  return { route, rest: route === first ? rest.filter(Boolean) : [], params: new URLSearchParams(query) };
}

const withParams = (path: string, params: Record<string, string>) => {
  const q = new URLSearchParams(params).toString();
  return q ? `${path}?${q}` : path;
};

export const instanceLink = (id: string) => `#/instances/${encodeURIComponent(id)}`;
/** the bare-metal view with only this node listed */
export const nodeLink = (uuid: string) => withParams('#/baremetal', { node: uuid });
/** the consumers view with only this consumer listed */
export const consumerLink = (uuid: string) => withParams('#/consumers', { consumer: uuid });
/** the pools view with this pool chosen and, given an owner, only its allocations listed */
export const poolLink = (pool: string, owner?: string) => withParams('#/pools', { pool, ...(owner ? { owner } : {}) });

/** A service instance's owner name in the identifier API (its pool values' owner). */
export const instanceOwner = (id: string) => `service-instance/${id}`;

/** The instance an identifier-API owner names (`service-instance/<id>`), else null. */
export function instanceOfOwner(owner: string): string | null {
  return owner.startsWith('service-instance/') ? owner.slice('service-instance/'.length) : null;
}
