// Built-in inventory over HTTP. allot's protocol (any service can offer it; docs/ids.md):
//   POST   {url}/allocations            body {"owner","attribute"}, header Idempotency-Key: owner
//                                       → 200/201 {"value": …}; 409: nothing left to give
//   GET    {url}/allocations/{owner}    → 200 {"value": …, "version"?: n} (and/or ETag) | 404
//   DELETE {url}/allocations/{owner}    with If-Match: <ETag> or ?version=n when the inventory gave
//                                       one (compare-and-set) → 200/204/404 done; 412 retried
//   GET    {url}/lookup/{key}           → 200 {"value": …} | 404
import { MAX_EXACT_INTEGER, holdsInexactInteger } from '../../core/exact-json.js';
import type { ExternalInventory, InventoryCall, InventoryEnvironment, JsonValue } from './types.js';
import { InventoryError, InventoryExhausted } from './types.js';

export function createHttpInventory(options: Record<string, unknown>, _env: InventoryEnvironment): ExternalInventory {
  if (typeof options.url !== 'string' || !/^https?:\/\//.test(options.url)) throw new InventoryError('an http inventory needs "url": "http(s)://…"');
  const base = options.url.replace(/\/+$/, '');
  const extraHeaders = (options.headers ?? {}) as Record<string, string>;
  const call = async (method: string, path: string, c: InventoryCall, init: { body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      signal: c.signal,
      headers: { accept: 'application/json', ...extraHeaders, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    // a value JSON.parse rounded would be stored, and could equal another one: the inventory's failure
    if (res.ok && body !== undefined && holdsInexactInteger(text))
      throw new Error(`${method} ${path}: the inventory answered an integer beyond ±${MAX_EXACT_INTEGER}, which cannot be kept exactly`);
    return { status: res.status, body: body as { value?: JsonValue; version?: number } | undefined, etag: res.headers.get('etag') };
  };
  const fail = (what: string, status: number) => new Error(`${what}: the inventory answered HTTP ${status}`);
  return {
    async lookup(key, c) {
      const res = await call('GET', `/lookup/${encodeURIComponent(key)}`, c);
      if (res.status === 404) return null;
      if (res.status !== 200 || !res.body || !('value' in res.body)) throw fail('lookup', res.status);
      return res.body.value ?? null;
    },
    async allocateForOwner(owner, c) {
      const res = await call('POST', '/allocations', c, { body: { owner, attribute: c.attribute }, headers: { 'idempotency-key': owner } });
      if (res.status === 409) throw new InventoryExhausted(`no ${c.attribute} left: the inventory answered HTTP 409`);
      if ((res.status !== 200 && res.status !== 201) || !res.body || res.body.value === undefined || res.body.value === null)
        throw fail('allocate', res.status);
      return res.body.value;
    },
    async hasAllocation(owner, c) {
      const res = await call('GET', `/allocations/${encodeURIComponent(owner)}`, c);
      if (res.status === 404) return false;
      if (res.status === 200) return true;
      throw fail('has-allocation', res.status);
    },
    async deallocate(owner, c) {
      const path = `/allocations/${encodeURIComponent(owner)}`;
      const current = await call('GET', path, c);
      if (current.status === 404) return;
      if (current.status !== 200) throw fail('read before deallocate', current.status);
      // Compare-and-set when the inventory versions its records: delete only what we read.
      const headers: Record<string, string> = {};
      let query = '';
      if (current.etag) headers['if-match'] = current.etag;
      else if (typeof current.body?.version === 'number') query = `?version=${current.body.version}`;
      const res = await call('DELETE', path + query, c, { headers });
      if (res.status === 200 || res.status === 204 || res.status === 404) return;
      throw fail('deallocate', res.status);
    },
  };
}
