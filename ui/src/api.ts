// How the dashboard reads allot: the three APIs, called the way any client calls them (the same
// paths, microversion headers and error formats), from the page's own origin.
//
// Authentication: `authHeaders()` below is the ONE place a request gets the caller's token. The
// server says how it authenticates (/ui/server.json). With `--auth noauth` (allot's default) the
// token `admin` makes Placement treat the caller as an administrator (the other two APIs need
// nothing); with `--auth keystone` the operator pastes a Keystone token in the sign-in panel before
// anything is read, and the same header carries it to all three APIs.

export type ApiName = 'placement' | 'baremetal' | 'ids';

const MOUNTS: Record<ApiName, string> = { placement: '/placement', baremetal: '/baremetal', ids: '/ids' };

/** The microversion each API is read at: the newest allot serves. */
const VERSION_HEADERS: Record<ApiName, Record<string, string>> = {
  placement: { 'openstack-api-version': 'placement 1.39' },
  baremetal: { 'x-openstack-ironic-api-version': '1.82' },
  ids: {},
};

/** What the server tells the page (src/server/dashboard.ts, DashboardSettings). */
export interface ServerSettings {
  auth: 'noauth' | 'keystone';
}

export async function loadServerSettings(): Promise<ServerSettings> {
  const res = await fetch('/ui/server.json', { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`/ui/server.json answered ${res.status}`);
  return (await res.json()) as ServerSettings;
}

/** Placement's noauth2 mode takes the token as the caller's name; `admin` is an administrator. */
export const NOAUTH_TOKEN = 'admin';
const TOKEN_KEY = 'allot.token';

/** The token this tab signed in with (kept for the tab's life only); else noauth's, or none with Keystone. */
export function initialToken(settings: ServerSettings): string | null {
  return sessionStorage.getItem(TOKEN_KEY) ?? (settings.auth === 'noauth' ? NOAUTH_TOKEN : null);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

function authHeaders(token: string): Record<string, string> {
  return { 'x-auth-token': token };
}

/** An API's refusal, with the message its own error format carries. */
export class ApiError extends Error {
  constructor(
    readonly api: ApiName,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiResponse<T> {
  body: T;
  /** the server's clock when it answered (the `Date` header), ms since the epoch */
  serverTime: number;
}

export class Api {
  constructor(
    readonly token: string,
    /** called when an API answers 401: the dashboard then asks for a token */
    private readonly onUnauthorized: (api: ApiName) => void,
  ) {}

  /** GET a path of one API (`/resource_providers`), or a full link the API returned itself. */
  async get<T>(api: ApiName, pathOrLink: string, signal?: AbortSignal): Promise<ApiResponse<T>> {
    const url = pathOrLink.startsWith('http') ? sameOrigin(pathOrLink) : MOUNTS[api] + pathOrLink;
    const res = await fetch(url, { headers: { accept: 'application/json', ...VERSION_HEADERS[api], ...authHeaders(this.token) }, signal: signal ?? null });
    const text = await res.text();
    const body: unknown = text ? parseJson(text) : undefined;
    if (!res.ok) {
      if (res.status === 401) this.onUnauthorized(api);
      throw new ApiError(api, res.status, errorMessage(body, text, res.status));
    }
    const date = Date.parse(res.headers.get('date') ?? '');
    return { body: body as T, serverTime: Number.isNaN(date) ? Date.now() : date };
  }

  /** Every item of an Ironic list, following its `next` links (at most `maxPages` pages). */
  async ironicList<T>(path: string, key: string, maxPages: number, signal?: AbortSignal): Promise<{ items: T[]; complete: boolean; serverTime: number }> {
    const items: T[] = [];
    let link: string | undefined = path;
    let serverTime = Date.now();
    for (let page = 0; link && page < maxPages; page++) {
      const res: ApiResponse<Record<string, unknown>> = await this.get<Record<string, unknown>>('baremetal', link, signal);
      items.push(...((res.body[key] as T[]) ?? []));
      serverTime = res.serverTime;
      link = typeof res.body.next === 'string' ? res.body.next : undefined;
    }
    return { items, complete: link === undefined, serverTime };
  }

  /** Every item of an identifier-API list, following `next_cursor` (at most `maxPages` pages). */
  async idsList<T>(path: string, maxPages: number, signal?: AbortSignal): Promise<{ items: T[]; complete: boolean }> {
    const items: T[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res: ApiResponse<{ items: T[]; next_cursor: string | null }> = await this.get(
        'ids',
        cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path,
        signal,
      );
      items.push(...res.body.items);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < maxPages);
    return { items, complete: cursor === null };
  }
}

/** Links in Ironic bodies are absolute; follow them on this page's origin (same server). */
function sameOrigin(link: string): string {
  const u = new URL(link);
  return u.pathname + u.search;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The human message of each API's error format. */
function errorMessage(body: unknown, text: string, status: number): string {
  const b = body as Record<string, unknown> | undefined;
  // Placement: {"errors": [{"detail": …}]}
  const errors = b?.errors as Array<{ detail?: string; title?: string }> | undefined;
  if (Array.isArray(errors) && errors[0]) return (errors[0].detail ?? errors[0].title ?? '').trim();
  // Ironic: {"error_message": "{\"faultstring\": …}"}
  if (typeof b?.error_message === 'string') {
    const inner = parseJson(b.error_message) as { faultstring?: string } | undefined;
    return inner?.faultstring ?? b.error_message;
  }
  // identifier API: RFC 9457 problem+json; allot's own pages: {"error": …}
  if (typeof b?.detail === 'string') return b.detail;
  if (typeof b?.error === 'string') return b.error;
  return text.slice(0, 200) || `HTTP ${status}`;
}
