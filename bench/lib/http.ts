// A lean keep-alive HTTP client for the load generator. node:http with a keep-alive agent costs
// the client less CPU per request than fetch, which matters here: the client shares two cores with
// the server it measures. Latency is measured with hrtime from just before the request is written
// to the end of the response body.
import http from 'node:http';

export interface HttpResult {
  status: number;
  /** 0 when the request never got an answer (timeout, refused, reset) */
  ms: number;
  body: string;
  /** set when no HTTP answer arrived */
  error?: string;
}

export interface ClientOptions {
  /** base URL, an API at its root or under a path: http://127.0.0.1:8778/placement */
  baseUrl: string;
  /** sent with every request */
  headers: Record<string, string>;
  /** sockets kept open (one per concurrent worker is enough) */
  maxSockets: number;
  timeoutMs: number;
}

export class KeepAliveClient {
  private readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;
  private readonly prefix: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: ClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:') throw new Error(`only http:// URLs are supported, got ${options.baseUrl}`);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets, maxFreeSockets: options.maxSockets });
    this.headers = { accept: 'application/json', ...options.headers };
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  request(method: string, path: string, body?: unknown): Promise<HttpResult> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { ...this.headers };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }
    return new Promise((resolve) => {
      const start = process.hrtime.bigint();
      let settled = false;
      const done = (r: HttpResult) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      const req = http.request({ host: this.host, port: this.port, method, path: this.prefix + path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - start) / 1e6;
          done({ status: res.statusCode ?? 0, ms, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => done({ status: 0, ms: 0, body: '', error: err.message }));
      });
      req.setTimeout(this.options.timeoutMs, () => req.destroy(new Error(`timeout after ${this.options.timeoutMs} ms`)));
      req.on('error', (err) => done({ status: 0, ms: 0, body: '', error: err.message }));
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The Placement client of the load generator: a token and a microversion on every request. */
export const placementClient = (o: Omit<ClientOptions, 'headers'> & { microversion: string; token: string }) =>
  new KeepAliveClient({ ...o, headers: { 'x-auth-token': o.token, 'openstack-api-version': `placement ${o.microversion}` } });

/** Parse a JSON body, or undefined when it is not JSON. */
export function json<T>(r: HttpResult): T | undefined {
  try {
    return JSON.parse(r.body) as T;
  } catch {
    return undefined;
  }
}

/** The Placement error code of an error body (`placement.concurrent_update`, …), if any. */
export function errorCode(r: HttpResult): string | undefined {
  const b = json<{ errors?: Array<{ code?: string }> }>(r);
  return b?.errors?.[0]?.code;
}
