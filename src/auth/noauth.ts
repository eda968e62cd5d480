// The development mode (`--auth noauth`, loopback only): nobody is verified. On the Placement API
// the `x-auth-token` header names the caller as Placement's noauth2 mode does (`USER[:PROJECT]`; the
// user `admin` is an administrator) and the headers keystonemiddleware would set (`x-roles`,
// `x-project-id`, `x-user-id`, `openstack-system-scope`) say the rest; the other APIs treat every
// caller as an administrator.
import type { FastifyRequest } from 'fastify';
import { HTTP, httpError } from '../http/errors.js';
import type { AccessControl } from '../http/pipeline.js';
import type { Credentials } from './credentials.js';

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
    rolesHeader !== undefined ? rolesHeader.split(',').map((r) => r.trim().toLowerCase()).filter(Boolean) : tokenUser === 'admin' ? ['admin', 'member', 'reader'] : [];
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

export class NoAuth implements AccessControl {
  async authenticate(api: string, headers: FastifyRequest['headers']): Promise<Credentials> {
    if (api !== 'placement') return ADMIN;
    const credentials = noauthCredentials(headers);
    if (!credentials) throw httpError(401, HTTP.unauthorized, 'The request you have made requires authentication.');
    return credentials;
  }

  authorize(api: string, rule: string, _target: Record<string, unknown>, credentials: Credentials): void {
    // Placement's legacy default policy: every rule is `role:admin`.
    if (api === 'placement' && !credentials.roles.includes('admin')) throw httpError(403, HTTP.forbidden, `Policy does not allow ${rule} to be performed.`, { rule });
  }
}
