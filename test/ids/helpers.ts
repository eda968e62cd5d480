// A client for the identifier API in tests: JSON in, status + body + headers out.
import { type HttpResponse, type RequestOptions, request } from '../helpers/http.js';

export class IdsClient {
  constructor(readonly baseUrl: string) {}

  call<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    return request<T>(method, `${this.baseUrl}/ids/v1${path}`, body, options);
  }
  get<T = any>(path: string, options?: RequestOptions) {
    return this.call<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('POST', path, body, options);
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.call<T>('PATCH', path, body, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.call<T>('DELETE', path, undefined, options);
  }

  /** Every item of a paged list, following next_cursor. */
  async all<T = any>(path: string): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res: HttpResponse = await this.get(cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
      out.push(...res.body.items);
      cursor = res.body.next_cursor;
    } while (cursor);
    return out;
  }
}
