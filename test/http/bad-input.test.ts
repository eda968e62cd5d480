// Bad input at the HTTP level, on each of the three APIs and both databases: NUL characters (in a
// JSON string, a query parameter, a path segment), invalid percent-encoding, over-long path
// segments and URLs, over-large headers, unknown and unsupported methods. Each gets a 4xx (or
// 501) in the format of the API whose prefix was asked — never a 500, never another API's body.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';

type Api = 'placement' | 'baremetal' | 'ids';

/** Per API: where a collection and one member of it are, what a JSON create looks like, and its headers. */
const APIS: Record<Api, { collection: string; member: (id: string) => string; create: string; headers: Record<string, string> }> = {
  placement: {
    collection: '/placement/resource_providers',
    member: (id) => `/placement/resource_providers/${id}`,
    create: '{"name": "a\\u0000b"}',
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json' },
  },
  baremetal: {
    collection: '/baremetal/v1/nodes',
    member: (id) => `/baremetal/v1/nodes/${id}`,
    create: '{"driver": "fake-hardware", "name": "a\\u0000b"}',
    headers: { 'x-openstack-ironic-api-version': '1.82', 'content-type': 'application/json' },
  },
  ids: {
    collection: '/ids/v1/pools',
    member: (id) => `/ids/v1/pools/${id}`,
    create: '{"name": "a\\u0000b", "kind": "integer", "ranges": ["1-10"]}',
    headers: { 'content-type': 'application/json' },
  },
};

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Is this answer an error body in `api`'s own format with this status? */
function assertFormat(api: Api, answer: Answer, status: number, what: string): void {
  const where = `${api} ${what}: ${answer.status} ${answer.text.slice(0, 300)}`;
  assert.equal(answer.status, status, where);
  if (api === 'placement') {
    const body = JSON.parse(answer.text);
    assert.equal(body.errors?.[0]?.status, status, where);
    assert.match(body.errors[0].request_id, /^req-/, where);
  } else if (api === 'baremetal') {
    const body = JSON.parse(answer.text);
    assert.equal(typeof body.error_message, 'string', where);
    const inner = JSON.parse(body.error_message);
    assert.ok('faultstring' in inner || 'description' in inner, where);
  } else {
    assert.match(answer.contentType, /application\/problem\+json/, where);
    const body = JSON.parse(answer.text);
    assert.equal(body.status, status, where);
    assert.match(body.code, /^ids\./, where);
  }
}

/** Send bytes as they are (no client library would send most of these) and read the answer. */
function raw(port: number, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const contentType = /^content-type: *(.*)$/im.exec(head)?.[1] ?? '';
      const length = Number(/^content-length: *(\d+)$/im.exec(head)?.[1] ?? -1);
      const body = rest.join('\r\n\r\n');
      resolve({ status, contentType, text: length >= 0 ? Buffer.from(body, 'latin1').subarray(0, length).toString('utf8') : body });
    });
    socket.write(request);
  });
}

function request(method: string, path: string, headers: Record<string, string>, body?: string): string {
  const all = { host: '127.0.0.1', connection: 'close', ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) };
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${body ?? ''}`;
}

for (const dialect of DIALECTS) {
  describe(`bad input on every API (${dialect})`, () => {
    let server: TestServer;
    let port: number;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      port = Number(new URL(server.url).port);
    });
    after(() => server.close());

    for (const api of Object.keys(APIS) as Api[]) {
      const a = APIS[api];
      test(`${api}: NUL characters are refused in bodies, queries and paths, and nothing is written`, async () => {
        assertFormat(api, await raw(port, request('POST', a.collection, a.headers, a.create)), 400, 'NUL in a JSON string');
        assertFormat(api, await raw(port, request('POST', a.collection, a.headers, '{"a\\u0000": 1}')), 400, 'NUL in a JSON key');
        assertFormat(api, await raw(port, request('GET', `${a.collection}?name=a%00b`, a.headers)), 400, 'NUL in a query value');
        assertFormat(api, await raw(port, request('GET', `${a.collection}?a%00=1`, a.headers)), 400, 'NUL in a query key');
        // a path segment holding NUL names nothing that can exist: the API's "not found"
        assertFormat(api, await raw(port, request('GET', a.member('%00'), a.headers)), 404, 'NUL in a path segment');
        assertFormat(api, await raw(port, request('GET', a.member('x%00y'), a.headers)), 404, 'NUL inside a path segment');
        const listed = await raw(port, request('GET', a.collection, a.headers));
        assert.equal(listed.status, 200, listed.text);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for a stored NUL
        assert.doesNotMatch(listed.text, /a\\u0000b|a\u0000b/, 'nothing with a NUL was stored');
      });

      test(`${api}: malformed URLs, headers and methods answer in this API's format`, async () => {
        assertFormat(api, await raw(port, request('GET', a.member('%zz'), a.headers)), 400, 'invalid percent-encoding');
        assertFormat(api, await raw(port, request('GET', a.member('x'.repeat(1100)), a.headers)), 414, 'path segment over 1024 characters');
        assertFormat(api, await raw(port, request('GET', `${a.collection}?q=${'x'.repeat(9000)}`, a.headers)), 414, 'URL over 8 KiB');
        assertFormat(api, await raw(port, request('GET', a.collection, { ...a.headers, 'x-big': 'y'.repeat(20_000) })), 431, 'headers over 16 KiB');
        assertFormat(api, await raw(port, request('FROB', a.collection, a.headers)), 501, 'a method HTTP does not know');
        assertFormat(api, await raw(port, request('PROPFIND', a.collection, a.headers)), 405, 'a method this API does not serve');
        assertFormat(api, await raw(port, request('GET', `${a.collection}/no/such/thing`, a.headers)), 404, 'no such path');
        assertFormat(api, await raw(port, request('POST', a.collection, a.headers, '{"a": \xff}')), 400, 'a body that is not UTF-8');
        assertFormat(
          api,
          await raw(port, request('POST', a.collection, a.headers, `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`)),
          400,
          'JSON nested 5000 deep',
        );
      });
    }
  });
}
