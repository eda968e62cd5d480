// The transport under the three API clients: one `fetch` per call (Node 20 and browsers alike),
// a time limit on every call, the token header, JSON in and out, and every refusal turned into
// an AllotApiError. Nothing here knows an API's resources.
import { AllotApiError, type ApiName, errorFromFailure, errorFromResponse } from './errors.js';

/**
 * Where a token comes from when it is not a fixed string (e.g. Keystone). Called before each
 * request (cache inside); with `refresh: true` after the server answered 401, to get a new one.
 */
export type TokenProvider = (options: { refresh: boolean }) => string | Promise<string>;

export interface ClientOptions {
  /** the server's main-port base URL, e.g. `http://127.0.0.1:8778` (the API's prefix is added) */
  url: string;
  /** sent as `x-auth-token`: a token, or a function returning one (see `keystonePasswordToken`) */
  token?: string | TokenProvider | null;
  /** longest wait for one HTTP call, ms (default 30 000) */
  timeoutMs?: number;
  /** another fetch implementation (tests, proxies); default: the global fetch */
  fetch?: typeof fetch;
  /** extra headers sent with every request */
  headers?: Record<string, string>;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number>;
export type Query = Record<string, QueryValue>;

export interface CallOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** overrides the client's timeout for this call, ms */
  timeoutMs?: number;
  /** cancels the call (together with the timeout) */
  signal?: AbortSignal;
}

export interface HttpResult<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** `?a=1&b=x&b=y`: arrays repeat the key, null/undefined are left out. */
export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, String(v));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export const segment = (value: string) => encodeURIComponent(value);

/** An HTTP answer as it came: any status, the body as text. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The one HTTP exchange every caller goes through (the API clients below, the test suite's raw
 * requests, the benchmarks): it never interprets the status; network failures and an aborted
 * `signal` reject.
 */
export async function send(
  fetchImpl: typeof fetch,
  request: { method: string; url: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<RawResponse> {
  const res = await fetchImpl(request.url, { method: request.method, headers: request.headers, body: request.body, signal: request.signal });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export class HttpTransport {
  readonly endpoint: string;
  readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(
    readonly api: ApiName,
    endpoint: string,
    private readonly options: Omit<ClientOptions, 'url'>,
  ) {
    this.endpoint = endpoint.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // bound: browsers refuse a fetch called with another `this`
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  private async token(refresh: boolean): Promise<string | null> {
    const t = this.options.token;
    if (t === undefined || t === null) return null;
    return typeof t === 'string' ? t : await t({ refresh });
  }

  /** One HTTP call; resolves with any 2xx, throws AllotApiError for everything else. */
  async call<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<HttpResult<T>> {
    const first = await this.attempt<T>(method, path, options, false);
    // A token from a provider may have expired: get a fresh one and try once more.
    if (first instanceof AllotApiError && first.status === 401 && typeof this.options.token === 'function') {
      const second = await this.attempt<T>(method, path, options, true);
      if (second instanceof AllotApiError) throw second;
      return second;
    }
    if (first instanceof AllotApiError) throw first;
    return first;
  }

  private async attempt<T>(method: string, path: string, options: CallOptions, refreshToken: boolean): Promise<HttpResult<T> | AllotApiError> {
    const url = `${this.endpoint}${path}${queryString(options.query)}`;
    const request = { method, url };
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...options.headers };
    let token: string | null;
    try {
      token = await this.token(refreshToken);
    } catch (err) {
      if (err instanceof AllotApiError) throw err;
      throw new AllotApiError(0, 'client.token', `cannot get a token: ${(err as Error).message}`, null, this.api, request);
    }
    if (token !== null) headers['x-auth-token'] = token;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let res: RawResponse;
    try {
      res = await send(this.fetchImpl, { method, url, headers, body: payload, signal });
    } catch (err) {
      throw errorFromFailure(this.api, request, timeout.aborted ? Object.assign(new Error('timeout'), { name: 'TimeoutError' }) : err, timeoutMs);
    }
    const { text } = res;
    if (res.status < 200 || res.status > 299) return errorFromResponse(this.api, request, res.status, res.headers, text);
    let body: unknown;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        return new AllotApiError(res.status, 'client.bad_response', `the answer is not JSON: ${text.slice(0, 200)}`, null, this.api, request, text);
      }
    }
    return { status: res.status, headers: res.headers, body: body as T };
  }

  async get<T>(path: string, options?: CallOptions): Promise<T> {
    return (await this.call<T>('GET', path, options)).body;
  }
}

/** Compare dotted microversions ("1.10" > "1.9"). */
export function compareVersions(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('.').map(Number);
  const [bm = 0, bn = 0] = b.split('.').map(Number);
  return am - bm || an - bn;
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
