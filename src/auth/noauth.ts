// The development mode (`--auth noauth`, the default, loopback only): nobody is verified. On the
// Placement API the `x-auth-token` header names the caller as Placement's noauth2 mode does
// (`USER[:PROJECT]`; the user `admin` is an administrator) and the headers keystonemiddleware
// would set (`x-roles`, `x-project-id`, `x-user-id`, `openstack-system-scope`) say the rest; the
// other APIs treat every caller as a system-scoped administrator. The policy engine decides as
// it does with Keystone.
//
// Because nobody is verified, a web page must not be able to reach this mode through the
// browser's own connection to 127.0.0.1 (DNS rebinding: a page of evil.example whose name now
// resolves to 127.0.0.1). Such a request still names evil.example in `Host`, so only requests
// addressed to a loopback name, or to a name the operator allowed, are answered. Nor may a page
// of another site send a request straight to 127.0.0.1: a POST without a body needs no CORS
// preflight, and the browser would send it (validate or promote a service instance). A browser
// names the page in `Origin`, so a request that changes something (not GET, HEAD, OPTIONS) whose
// Origin is another site's is refused, unless the operator allowed that origin
// (--cors-allowed-origins); clients other than browsers send none.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { HTTP, httpError } from '../http/errors.js';
import type { AccessControl } from '../http/pipeline.js';
import { authorizeOrRefuse } from './authorize.js';
import type { Credentials } from './credentials.js';
import type { PolicyEngine } from './policy.js';

const header = (headers: FastifyRequest['headers'], name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

const ADMIN: Credentials = {
  userId: 'admin',
  userName: 'admin',
  userDomainId: 'default',
  projectId: null,
  projectName: null,
  projectDomainId: null,
  domainId: null,
  systemScope: 'all',
  roles: ['admin', 'member', 'reader'],
  isAdminProject: true,
  expiresAt: null,
};

/** Credentials from Placement's noauth2 token and the identity headers. */
export function noauthCredentials(headers: FastifyRequest['headers']): Credentials | null {
  const token = header(headers, 'x-auth-token');
  if (!token) return null;
  const [tokenUser = '', tokenProject] = token.split(':', 2);
  const userId = header(headers, 'x-user-id') ?? tokenUser;
  const rolesHeader = header(headers, 'x-roles');
  const roles =
    rolesHeader !== undefined
      ? rolesHeader
          .split(',')
          .map((r) => r.trim().toLowerCase())
          .filter(Boolean)
      : tokenUser === 'admin'
        ? ['admin', 'member', 'reader']
        : [];
  const systemScope = header(headers, 'openstack-system-scope') ?? null;
  return {
    userId,
    userName: userId,
    userDomainId: 'default',
    projectId: systemScope ? null : (header(headers, 'x-project-id') ?? (tokenProject || tokenUser)),
    projectName: null,
    projectDomainId: 'default',
    domainId: null,
    systemScope,
    roles,
    isAdminProject: true,
    expiresAt: null,
  };
}

/** `name[:port]` or `[v6][:port]`, nothing after the port (`127.0.0.1:80@evil.example` is no Host). */
const HOST = /^(?:\[([0-9a-f:.]+)\]|([^:[\]@/\s]+))(?::\d{1,5})?$/;

/** The host name of a `Host` header: lower case, without port or brackets or a trailing dot ('' when it is not a host). */
export function hostName(host: string): string {
  const m = HOST.exec(host.trim().toLowerCase());
  return (m?.[1] ?? m?.[2] ?? '').replace(/\.$/, '');
}

/** localhost, 127.0.0.0/8 and ::1: names only this machine answers to. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '::1' || name === '0:0:0:0:0:0:0:1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Methods that change nothing (RFC 9110 §9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class NoAuth implements AccessControl {
  private readonly allowedHosts: Set<string>;
  private readonly allowedOrigins: Set<string>;
  /** the operator was told why a caller without roles is refused (explainRoleless) */
  private explainedRoleless = false;

  constructor(
    private readonly policy: PolicyEngine,
    allowedHosts: readonly string[],
    /** browser origins allowed to call (normalised as the configuration keeps them) */
    allowedOrigins: readonly string[],
    private readonly log: Logger,
  ) {
    this.allowedHosts = new Set(allowedHosts.map(hostName));
    this.allowedOrigins = new Set(allowedOrigins);
  }

  admit(headers: FastifyRequest['headers'], method: string): void {
    this.admitHost(headers);
    // only what changes something: a page's GET is answered as Placement answers it (its CORS
    // headers decide whether the page may read the answer)
    if (!SAFE_METHODS.has(method)) this.admitOrigin(headers);
  }

  /** A page's request: from a page this machine serves, or from an origin the operator allowed. */
  private admitOrigin(headers: FastifyRequest['headers']): void {
    const origin = header(headers, 'origin');
    if (origin === undefined || this.allowedOrigins.has(origin.toLowerCase())) return;
    let name: string | null = null;
    try {
      const url = new URL(origin);
      if (url.protocol === 'http:' || url.protocol === 'https:') name = hostName(url.host);
    } catch {
      /* `null` (a sandboxed or file: page), or no URL at all */
    }
    if (name !== null && (isLoopbackName(name) || this.allowedHosts.has(name))) return;
    throw httpError(
      403,
      HTTP.forbidden,
      `A request from the page ${JSON.stringify(origin)} is not allowed: without authentication (--auth noauth) allot answers pages of localhost, 127.0.0.1, [::1], a name in --allowed-hosts or an origin in --cors-allowed-origins.`,
    );
  }

  private admitHost(headers: FastifyRequest['headers']): void {
    const host = header(headers, 'host');
    const name = host === undefined ? '' : hostName(host);
    if (isLoopbackName(name) || this.allowedHosts.has(name)) return;
    throw httpError(
      403,
      HTTP.forbidden,
      `${host === undefined ? 'A request without a Host header' : `Host ${JSON.stringify(host)}`} is not allowed: without authentication (--auth noauth) allot answers only requests addressed to localhost, 127.0.0.1, [::1] or a name in --allowed-hosts.`,
    );
  }

  async authenticate(api: string, headers: FastifyRequest['headers']): Promise<Credentials> {
    if (api !== 'placement') return ADMIN;
    const credentials = noauthCredentials(headers);
    if (!credentials) throw httpError(401, HTTP.unauthorized, 'The request you have made requires authentication.');
    return credentials;
  }

  authorize(api: string, rule: string, target: Record<string, unknown>, credentials: Credentials): void {
    try {
      authorizeOrRefuse(this.policy, api, rule, target, credentials, this.log);
    } catch (err) {
      if (credentials.roles.length === 0) this.explainRoleless(rule, credentials);
      throw err;
    }
  }

  /**
   * A Placement caller without any role is refused everything, as by Placement's noauth2; the
   * answer stays Placement's, but the operator learns why (once per process: a client that
   * repeats the mistake would fill the log). The usual case: `openstack --os-auth-type none`
   * sends the token `notused`.
   */
  private explainRoleless(rule: string, credentials: Credentials): void {
    if (this.explainedRoleless) return;
    this.explainedRoleless = true;
    this.log.warn(
      { rule, user: credentials.userId },
      `noauth: refused ${rule} to ${JSON.stringify(credentials.userId)}, a caller with no role. Without authentication the Placement token names the caller as Placement's noauth2 does: the token "admin" is an administrator (openstack --os-auth-type admin_token --os-token admin --os-endpoint http://127.0.0.1:8778/placement …), other callers have the roles of the x-roles header (docs/auth.md). Logged once.`,
    );
  }

  allows(api: string, rule: string, target: Record<string, unknown>, credentials: Credentials): boolean {
    return this.policy.decide(api, rule, target, credentials) === 'allow';
  }
}
