// Who is asking, as OpenStack policy engines see a request context. Built by authentication
// (Keystone token validation, or the loopback-only noauth development mode) and read by the
// policy engine; nothing else decides access.
export interface Credentials {
  userId: string | null;
  userName: string | null;
  userDomainId: string | null;
  /** project the token is scoped to; null for system- or domain-scoped tokens */
  projectId: string | null;
  projectName: string | null;
  projectDomainId: string | null;
  /** domain the token is scoped to (domain-scoped tokens only) */
  domainId: string | null;
  /** 'all' for a system-scoped token, else null */
  systemScope: string | null;
  /** role names, lower case, implied roles included */
  roles: string[];
  /** Keystone's is_admin_project (true when the token does not say) */
  isAdminProject: boolean;
  /** epoch ms at which the token expires; null when unknown (noauth) */
  expiresAt: number | null;
}
