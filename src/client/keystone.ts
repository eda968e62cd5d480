// A Keystone v3 token for the clients, by password (what OS_AUTH_URL, OS_USERNAME, OS_PASSWORD,
// OS_PROJECT_NAME, OS_USER_DOMAIN_NAME and OS_PROJECT_DOMAIN_NAME describe). The token is kept
// until shortly before it expires, and fetched again when a server answers 401.
import { AllotApiError } from './errors.js';
import { DEFAULT_TIMEOUT_MS, type TokenProvider } from './http.js';

export interface KeystonePasswordAuth {
  /** Keystone's endpoint, with or without the trailing `/v3` */
  authUrl: string;
  username: string;
  password: string;
  /** scope the token to this project (unscoped when absent) */
  projectName?: string;
  /** default `Default` */
  userDomainName?: string;
  /** default `Default` */
  projectDomainName?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A token is renewed this long before Keystone says it expires. */
const EXPIRY_MARGIN_MS = 60_000;

export function tokensUrl(authUrl: string): string {
  const base = authUrl.replace(/\/+$/, '');
  return `${/\/v3$/.test(base) ? base : `${base}/v3`}/auth/tokens`;
}

/** POST /v3/auth/tokens once: the token (X-Subject-Token) and when it expires. */
export async function keystonePasswordLogin(auth: KeystonePasswordAuth): Promise<{ token: string; expiresAt: number | null }> {
  const url = tokensUrl(auth.authUrl);
  const request = { method: 'POST', url };
  const body = {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: auth.username, password: auth.password, domain: { name: auth.userDomainName ?? 'Default' } } },
      },
      ...(auth.projectName ? { scope: { project: { name: auth.projectName, domain: { name: auth.projectDomainName ?? 'Default' } } } } : {}),
    },
  };
  const timeoutMs = auth.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const doFetch = auth.fetch ?? ((input, init) => fetch(input, init));
  let res: Response;
  let text: string;
  try {
    res = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string }; message?: string };
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
    throw new AllotApiError(
      0,
      timedOut ? 'client.timeout' : 'client.unreachable',
      timedOut ? `Keystone did not answer within ${timeoutMs} ms` : `cannot reach Keystone at ${url}: ${e.cause?.code ?? e.message}`,
      null,
      'keystone',
      request,
    );
  }
  if (res.status !== 201 && res.status !== 200) {
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new AllotApiError(
      res.status,
      'keystone.auth_failed',
      `Keystone refused the credentials of ${auth.username}: ${message}`,
      res.headers.get('x-openstack-request-id'),
      'keystone',
      request,
    );
  }
  const token = res.headers.get('x-subject-token');
  if (!token) throw new AllotApiError(res.status, 'client.bad_response', 'Keystone answered without an X-Subject-Token header', null, 'keystone', request);
  let expiresAt: number | null = null;
  try {
    const expires = (JSON.parse(text) as { token?: { expires_at?: string } }).token?.expires_at;
    if (expires) expiresAt = Date.parse(expires);
  } catch {
    /* no expiry known: the token is used until a server refuses it */
  }
  return { token, expiresAt };
}

/** A TokenProvider that logs in to Keystone on first use and again before the token expires. */
export function keystonePasswordToken(auth: KeystonePasswordAuth): TokenProvider {
  let current: Promise<{ token: string; expiresAt: number | null }> | null = null;
  return async ({ refresh }) => {
    if (current && !refresh) {
      const held = await current.catch(() => null);
      if (held && (held.expiresAt === null || held.expiresAt - EXPIRY_MARGIN_MS > Date.now())) return held.token;
    }
    current = keystonePasswordLogin(auth);
    current.catch(() => (current = null));
    return (await current).token;
  };
}
