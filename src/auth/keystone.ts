// Talking to Keystone (identity API v3) as keystonemiddleware does: allot logs in as its own
// service user (password, scoped to its service project), keeps that token and logs in again
// before it expires, and validates a caller's token with `GET /v3/auth/tokens` (`X-Auth-Token`:
// allot's, `X-Subject-Token`: the caller's). Keystone's answer decides: 200 is a valid token
// (user, project or domain or system scope, roles with the implied ones, expiry), 404 an invalid,
// expired or revoked one. Anything else — no answer within the timeout, a 5xx, allot's own
// credentials refused — is KeystoneUnavailable, which the API answers with 503: never "allow".
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Credentials } from './credentials.js';

export interface KeystoneOptions {
  /** Keystone's URL as the operator wrote it, with or without `/v3` */
  url: string;
  username: string;
  password: string;
  project: string;
  userDomain: string;
  projectDomain: string;
  /** longest wait for one answer, ms */
  timeoutMs: number;
}

export class KeystoneUnavailable extends Error {}

export type Validation = { valid: true; credentials: Credentials } | { valid: false; reason: string };

/** Log in again when allot's own token has less than this left (keystoneauth's margin). */
const SERVICE_TOKEN_RENEW_MS = 120_000;
/** Longest token header looked at; Fernet tokens are about 200 characters. */
const MAX_TOKEN_LENGTH = 8192;
/** undici's codes for a request sent on a connection the other side had already closed */
const KEPT_ALIVE_CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** `http://k:5000`, `http://k:5000/`, `http://k:5000/v3/` → the identity API `http://k:5000/v3` and the root `http://k:5000`. */
export function keystoneUrls(url: string): { api: string; root: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--keystone-url must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--keystone-url must be an http(s) URL, got ${JSON.stringify(url)}`);
  const root = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '').replace(/\/v3$/, '')}`;
  return { api: `${root}/v3`, root };
}

export class KeystoneClient {
  readonly api: string;
  /** what a 401 tells clients to authenticate with (`WWW-Authenticate: Keystone uri="…"`) */
  readonly root: string;
  private serviceToken: { token: string; expiresAt: number } | null = null;
  private serviceLogin: Promise<string> | null = null;

  constructor(
    private readonly options: KeystoneOptions,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    ({ api: this.api, root: this.root } = keystoneUrls(options.url));
  }

  /** Ask Keystone about a caller's token. Throws KeystoneUnavailable when it cannot tell. */
  async validate(token: string): Promise<Validation> {
    if (token.length > MAX_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) return { valid: false, reason: 'not a token' };
    for (let attempt = 1; attempt <= 2; attempt++) {
      const service = await this.ownToken();
      const res = await this.call('GET', '/auth/tokens?nocatalog', { 'x-auth-token': service, 'x-subject-token': token });
      if (res.status === 200) return { valid: true, credentials: credentialsOf(await this.body(res)) };
      if (res.status === 404) return { valid: false, reason: 'Keystone does not know the token (invalid, expired or revoked)' };
      if (res.status === 401) {
        // allot's own token was refused (revoked, or Keystone's keys rotated): log in again, once.
        if (this.serviceToken?.token === service) this.serviceToken = null;
        continue;
      }
      throw this.unavailable(
        `Keystone answered ${res.status} to a token validation`,
        res.status === 403 ? "allot's service user may not validate tokens (give it the service or admin role)" : undefined,
      );
    }
    throw this.unavailable("Keystone refused allot's own token twice in a row");
  }

  /** allot's own token, logging in when there is none or it is about to expire (one login at a time). */
  private async ownToken(): Promise<string> {
    const current = this.serviceToken;
    if (current && current.expiresAt - this.clock.nowMs() > SERVICE_TOKEN_RENEW_MS) return current.token;
    this.serviceLogin ??= this.login().finally(() => {
      this.serviceLogin = null;
    });
    return this.serviceLogin;
  }

  private async login(): Promise<string> {
    const o = this.options;
    const body = {
      auth: {
        identity: { methods: ['password'], password: { user: { name: o.username, domain: { name: o.userDomain }, password: o.password } } },
        scope: { project: { name: o.project, domain: { name: o.projectDomain } } },
      },
    };
    const res = await this.call('POST', '/auth/tokens?nocatalog', { 'content-type': 'application/json' }, JSON.stringify(body));
    if (res.status !== 201) {
      const detail = await res.text().catch(() => '');
      const refused = res.status === 401 || res.status === 404;
      throw this.unavailable(
        refused
          ? `Keystone refused allot's service credentials (user ${o.username} in domain ${o.userDomain}, project ${o.project} in domain ${o.projectDomain})`
          : `Keystone answered ${res.status} to allot's login`,
        detail.slice(0, 300),
      );
    }
    const token = res.headers.get('x-subject-token');
    const expiresAt = Date.parse(((await this.body(res)) as { token?: { expires_at?: string } }).token?.expires_at ?? '');
    if (!token || !Number.isFinite(expiresAt)) throw this.unavailable('Keystone answered a login without a token or its expiry');
    this.serviceToken = { token, expiresAt };
    this.log.info({ keystone: this.api, user: o.username, project: o.project, expires_at: new Date(expiresAt).toISOString() }, 'logged in to Keystone');
    return token;
  }

  private async call(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetch(`${this.api}${path}`, { method, headers: { accept: 'application/json', ...headers }, body, signal });
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        // A kept-alive connection Keystone (or a proxy) closed while it sat idle fails the first
        // request sent on it: once, within the same deadline, on a new connection. Reads and a
        // login only, so sending it again is harmless.
        if (attempt === 1 && KEPT_ALIVE_CLOSED.has(e.cause?.code ?? '') && !signal.aborted) continue;
        throw this.unreachable(e);
      }
    }
  }

  private unreachable(e: Error & { cause?: { code?: string; message?: string } }): KeystoneUnavailable {
    const why = e.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs / 1000}s` : (e.cause?.code ?? e.cause?.message ?? e.message);
    return this.unavailable(`Keystone at ${this.api} is unreachable: ${why}`);
  }

  private async body(res: Response): Promise<unknown> {
    try {
      return await res.json();
    } catch {
      throw this.unavailable('Keystone answered something that is not JSON');
    }
  }

  private unavailable(message: string, detail?: string): KeystoneUnavailable {
    this.log.error({ keystone: this.api, detail }, message);
    return new KeystoneUnavailable(message);
  }
}

interface TokenBody {
  token?: {
    expires_at?: string;
    user?: { id?: string; name?: string; domain?: { id?: string } };
    project?: { id?: string; name?: string; domain?: { id?: string } };
    domain?: { id?: string };
    system?: { all?: boolean };
    roles?: Array<{ name?: string }>;
    is_admin_project?: boolean;
  };
}

/** The caller, from Keystone's validation of its token. */
export function credentialsOf(data: unknown): Credentials {
  const t = (data as TokenBody).token;
  const expiresAt = Date.parse(t?.expires_at ?? '');
  if (!t?.user?.id || !Number.isFinite(expiresAt)) throw new KeystoneUnavailable('Keystone validated a token but its answer has no user or expiry');
  return {
    userId: t.user.id,
    userName: t.user.name ?? null,
    userDomainId: t.user.domain?.id ?? null,
    projectId: t.project?.id ?? null,
    projectName: t.project?.name ?? null,
    projectDomainId: t.project?.domain?.id ?? null,
    domainId: t.project ? null : (t.domain?.id ?? null),
    systemScope: t.system?.all ? 'all' : null,
    roles: (t.roles ?? []).flatMap((r) => (r.name ? [r.name.toLowerCase()] : [])),
    isAdminProject: t.is_admin_project ?? true,
    expiresAt,
  };
}
