// A client for the identifier API in tests: JSON in, status + body + headers out.
import { ApiProbe, type HttpResponse } from '../helpers/http.js';

/** The identifier API of a server: give the server's URL, requests go under /ids/v1. */
export class IdsClient extends ApiProbe {
  constructor(serverUrl: string) {
    super(`${serverUrl}/ids/v1`);
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
