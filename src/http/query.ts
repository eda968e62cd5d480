// Query parameters in order, repeated keys kept (`member_of=a&member_of=b`), as OpenStack's WSGI
// stacks see them. A NUL character in a key or value is refused here for every API (PostgreSQL
// cannot store or compare one).
import { HTTP, httpError } from './errors.js';

export class QueryParams {
  readonly pairs: Array<[string, string]>;

  constructor(rawUrl: string) {
    const i = rawUrl.indexOf('?');
    this.pairs = i < 0 ? [] : [...new URLSearchParams(rawUrl.slice(i + 1))];
    for (const [k, v] of this.pairs) {
      if (k.includes('\0') || v.includes('\0'))
        throw httpError(400, HTTP.badQuery, `The query parameter ${JSON.stringify(k.replace(/\0/g, '\\0'))} holds a NUL character.`, { parameter: k });
    }
  }

  has(name: string): boolean {
    return this.pairs.some(([k]) => k === name);
  }

  /** all values of a key, in order */
  all(name: string): string[] {
    return this.pairs.filter(([k]) => k === name).map(([, v]) => v);
  }

  /** the last value of a key, as a Python WSGI MultiDict would give */
  get(name: string): string | undefined {
    const values = this.all(name);
    return values[values.length - 1];
  }

  keys(): string[] {
    return [...new Set(this.pairs.map(([k]) => k))];
  }

  /** one value per key (the last), for schema validation */
  toObject(): Record<string, string> {
    return Object.fromEntries(this.pairs);
  }
}
