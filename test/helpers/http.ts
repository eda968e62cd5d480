// The tests' raw requests: JSON in, status + parsed JSON + headers out, whatever the status (tests
// assert on refusals). The exchange itself is the typed client's `send` (src/client/http.ts); the
// typed clients are for tests that drive an API rather than probe its answers.
import { send } from '../../src/client/http.js';

export interface HttpResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** send this exact string as the body (as application/json unless headers say otherwise) */
  raw?: string;
}

export async function request<T = any>(method: string, url: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let payload: string | undefined;
  if (options.raw !== undefined || body !== undefined) {
    payload = options.raw ?? JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await send(fetch, { method, url, headers, body: payload });
  const text = res.text;
  let parsed: unknown;
  if (text && (res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

/** Raw requests to one API: its base URL and the headers every request carries. */
export class ApiProbe {
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string> = {},
  ) {}

  call<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    return request<T>(method, this.baseUrl + path, body, { ...options, headers: { ...this.headers, ...options.headers } });
  }
  get<T = any>(path: string, options?: RequestOptions) {
    return this.call<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('POST', path, body, options);
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('PUT', path, body, options);
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('PATCH', path, body, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.call<T>('DELETE', path, undefined, options);
  }
}

/** Placement at one microversion, authenticated as admin (noauth). */
export class PlacementClient extends ApiProbe {
  constructor(
    baseUrl: string,
    readonly microversion = '1.39',
    readonly token = 'admin',
  ) {
    super(baseUrl, { 'x-auth-token': token, 'openstack-api-version': `placement ${microversion}` });
  }

  at(microversion: string): PlacementClient {
    return new PlacementClient(this.baseUrl, microversion, this.token);
  }
}
