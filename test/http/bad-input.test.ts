// Bad input at the HTTP level, on each of the three APIs and both databases: NUL characters (in a
// JSON string, a query parameter, a path segment), invalid percent-encoding, over-long path
// segments and URLs, over-large headers, unknown and unsupported methods (CONNECT too), integer
// literals JSON cannot keep exactly, bodies with a content coding. Each gets a 4xx (or 501) in the format of the
// API whose prefix was asked — never a 500, never another API's body.
import assert from 'node:assert/strict';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';

type Api = 'placement' | 'baremetal' | 'ids';

/** Per API: where a collection and one member of it are, what a JSON create looks like, and its headers. */
const APIS: Record<
  Api,
  { collection: string; member: (id: string) => string; create: string; valid: (name: string) => string; headers: Record<string, string> }
> = {
  placement: {
    collection: '/placement/resource_providers',
    member: (id) => `/placement/resource_providers/${id}`,
    create: '{"name": "a\\u0000b"}',
    valid: (name) => `{"name": "${name}"}`,
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json' },
  },
  baremetal: {
    collection: '/baremetal/v1/nodes',
    member: (id) => `/baremetal/v1/nodes/${id}`,
    create: '{"driver": "fake-hardware", "name": "a\\u0000b"}',
    valid: (name) => `{"driver": "fake-hardware", "name": "${name}"}`,
    headers: { 'x-openstack-ironic-api-version': '1.82', 'content-type': 'application/json' },
  },
  ids: {
    collection: '/ids/v1/pools',
    member: (id) => `/ids/v1/pools/${id}`,
    create: '{"name": "a\\u0000b", "kind": "integer", "ranges": ["1-10"]}',
    valid: (name) => `{"name": "${name}", "kind": "integer", "ranges": ["1-10"]}`,
    headers: { 'content-type': 'application/json' },
  },
};

interface Answer {
  status: number;
  contentType: string;
  /** the status line and headers */
  head: string;
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

/** The message of an error body in `api`'s format. */
function messageOf(api: Api, answer: Answer): string {
  const body = JSON.parse(answer.text);
  if (api === 'placement') return body.errors[0].detail;
  if (api === 'baremetal') {
    const inner = JSON.parse(body.error_message);
    return inner.faultstring ?? inner.description;
  }
  return body.detail;
}

/** Send bytes as they are (no client library would send most of these) and read the answer. */
function raw(port: number, request: Buffer): Promise<Answer> {
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
      resolve({ status, contentType, head, text: length >= 0 ? Buffer.from(body, 'latin1').subarray(0, length).toString('utf8') : body });
    });
    socket.write(request);
  });
}

/** A request's bytes; a string body is sent as UTF-8, a Buffer as it is. */
function request(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const all = { host: '127.0.0.1', connection: 'close', ...headers, ...(bytes !== undefined ? { 'content-length': String(bytes.length) } : {}) };
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes ?? Buffer.alloc(0)]);
}

/** Send JSON text and parse the answer's body (the tests below read what was stored). */
async function json(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  const answer = await raw(port, request(method, path, headers, body));
  return { status: answer.status, body: answer.text ? JSON.parse(answer.text) : undefined };
}

/** `[0-9]{16,}` written as an integer literal JSON.parse would round: beyond ±(2^53 - 1). */
const INEXACT = /holds an integer beyond ±9007199254740991, which cannot be kept exactly/;

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
        // a URL past the parser's 16 KiB head limit: still the URL's fault, whether its line ended in the first read or not
        for (const length of [17_000, 20_000, 100_000])
          assertFormat(api, await raw(port, request('GET', `${a.collection}?q=${'x'.repeat(length)}`, a.headers)), 414, `URL of ${length} characters`);
        assertFormat(api, await raw(port, request('GET', a.collection, { ...a.headers, 'x-big': 'y'.repeat(20_000) })), 431, 'headers over 16 KiB');
        assertFormat(api, await raw(port, request('FROB', a.collection, a.headers)), 501, 'a method HTTP does not know');
        assertFormat(api, await raw(port, request('PROPFIND', a.collection, a.headers)), 405, 'a method this API does not serve');
        assertFormat(api, await raw(port, request('GET', `${a.collection}/no/such/thing`, a.headers)), 404, 'no such path');
        const notUtf8 = await raw(port, request('POST', a.collection, a.headers, Buffer.from('{"a": "\xff"}', 'latin1')));
        assertFormat(api, notUtf8, 400, 'a body that is not UTF-8');
        assert.match(messageOf(api, notUtf8), /not valid UTF-8/);
        assertFormat(
          api,
          await raw(port, request('POST', a.collection, a.headers, `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`)),
          400,
          'JSON nested 5000 deep',
        );
      });

      test(`${api}: CONNECT, which Node.js hands to proxies, is answered as any method the API does not serve`, async () => {
        const answer = await raw(port, request('CONNECT', a.collection, a.headers));
        assertFormat(api, answer, 405, 'CONNECT');
        assert.match(answer.head, /^allow: [A-Z]/im);
        assert.match(answer.head, /^connection: close$/im);
        // the server goes on answering
        assert.equal((await raw(port, request('GET', a.collection, a.headers))).status, 200);
      });

      test(`${api}: an integer literal beyond ±(2^53 - 1) is a 400, wherever it stands; digits in strings are not numbers`, async () => {
        const refused = [
          `{"n": 9007199254740993, "name": "big-1"}`,
          `{"name": "big-2", "n": [1, -9007199254740992]}`,
          `{"name": "big-3", "n": {"deep": [[99999999999999999999999999]]}}`,
          // a quote escaped in a string before it does not hide it
          `{"name": "big-\\\\", "n": 12345678901234567891}`,
        ];
        for (const body of refused) {
          const answer = await raw(port, request('POST', a.collection, a.headers, body));
          assertFormat(api, answer, 400, body);
          assert.match(messageOf(api, answer), INEXACT, `${api} ${body}`);
        }
        // the same digits inside strings, keys and values, some behind escaped quotes: the body rules let them through
        // (the API then refuses the unknown field its own way, not as bad JSON)
        const strings = a.valid('s-12345678901234567891').replace(/}$/, `, "12345678901234567891": "x\\" 99999999999999999999 \\\\"}`);
        const answer = await raw(port, request('POST', a.collection, a.headers, strings));
        assertFormat(api, answer, 400, 'digits in strings');
        assert.doesNotMatch(messageOf(api, answer), INEXACT);
        assert.match(messageOf(api, answer), /12345678901234567891/, 'the schema names the unknown field');
        const listed = await raw(port, request('GET', a.collection, a.headers));
        assert.doesNotMatch(listed.text, /big-/, 'nothing was stored');
      });

      test(`${api}: a body with a content coding is a 415 naming it; identity is no coding`, async () => {
        const gzip = await raw(port, request('POST', a.collection, { ...a.headers, 'content-encoding': 'gzip' }, gzipSync(a.valid('gz'))));
        assertFormat(api, gzip, 415, 'a gzip body');
        assert.match(messageOf(api, gzip), /encoded with gzip/);
        assert.match(gzip.head, /^accept-encoding: identity$/im);
        const br = await raw(port, request('POST', a.collection, { ...a.headers, 'content-encoding': 'identity, br' }, a.valid('br')));
        assertFormat(api, br, 415, 'a br body');
        assert.match(messageOf(api, br), /encoded with br\b/);
        const identity = await raw(port, request('POST', a.collection, { ...a.headers, 'content-encoding': 'identity' }, a.valid('plain')));
        assert.ok(identity.status >= 200 && identity.status < 300, `${api} identity: ${identity.status} ${identity.text.slice(0, 300)}`);
        const listed = await raw(port, request('GET', a.collection, a.headers));
        assert.match(listed.text, /"plain"/);
        assert.doesNotMatch(listed.text, /"gz"|"br"/, 'nothing coded was stored');
      });
    }

    test('placement: floats with an exponent pass the body rules; an inexact integer is Malformed JSON', async () => {
      const h = APIS.placement.headers;
      const rp = (await json(port, 'POST', '/placement/resource_providers', h, '{"name": "ratio"}')).body.uuid;
      const inventories = `/placement/resource_providers/${rp}/inventories`;
      const vcpu = (fields: string) => `{"resource_provider_generation": 0, "inventories": {"VCPU": {${fields}}}}`;
      const big = await json(port, 'PUT', inventories, h, vcpu('"total": 12345678901234567891'));
      assert.equal(big.status, 400);
      assert.match(big.body.errors[0].detail, /Malformed JSON: The request body holds an integer beyond ±9007199254740991/);
      assert.equal(big.body.errors[0].code, 'placement.undefined_code');
      // 1e308 is read (a float), then over Placement's own maximum: a schema error, not bad JSON
      const huge = await json(port, 'PUT', inventories, h, vcpu('"total": 8, "allocation_ratio": 1e308'));
      assert.equal(huge.status, 400);
      assert.match(huge.body.errors[0].detail, /JSON does not validate/);
      const put = await json(port, 'PUT', inventories, h, vcpu('"total": 8, "allocation_ratio": 3.0e38'));
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal((await json(port, 'GET', `${inventories}/VCPU`, h)).body.allocation_ratio, 3e38);
    });

    test('baremetal: extra and properties keep what they are sent, or refuse it (PATCH)', async () => {
      const h = APIS.baremetal.headers;
      assert.equal((await json(port, 'POST', '/baremetal/v1/nodes', h, '{"driver": "fake-hardware", "name": "n1"}')).status, 201);
      const patch = (ops: string) => json(port, 'PATCH', '/baremetal/v1/nodes/n1', h, ops);
      for (const ops of [
        '[{"op": "add", "path": "/extra/big", "value": 9007199254740993}]',
        '[{"op": "add", "path": "/properties/memory_mb", "value": 99999999999999999999999999}]',
      ]) {
        const res = await patch(ops);
        assert.equal(res.status, 400, ops);
        assert.match(JSON.parse(res.body.error_message).faultstring, INEXACT);
      }
      const kept = await patch(
        '[{"op": "add", "path": "/extra/f", "value": 1e308}, {"op": "add", "path": "/extra/max", "value": -9007199254740991},' +
          ' {"op": "add", "path": "/extra/12345678901234567890", "value": "98765432109876543210 \\" 12345678901234567890"}]',
      );
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      const node = (await json(port, 'GET', '/baremetal/v1/nodes/n1', h)).body;
      assert.deepEqual(node.extra, { f: 1e308, max: -9007199254740991, '12345678901234567890': '98765432109876543210 " 12345678901234567890' });
      assert.equal(node.properties.memory_mb, undefined);
    });

    test('ids: allocation metadata is kept exactly or refused, so an idempotent repeat cannot match a rounded one', async () => {
      const h = APIS.ids.headers;
      assert.equal((await json(port, 'POST', '/ids/v1/pools', h, '{"name": "meta", "kind": "integer", "ranges": ["1-100"]}')).status, 201);
      const allocate = (body: string) => json(port, 'POST', '/ids/v1/pools/meta/allocations', h, body);
      for (const body of ['{"owner": "a", "metadata": {"n": 12345678901234567891}}', '{"owner": "k", "metadata": {"k": 9007199254740993}}']) {
        const res = await allocate(body);
        assert.equal(res.status, 400, body);
        assert.equal(res.body.code, 'ids.invalid_request');
        assert.match(res.body.detail, INEXACT);
      }
      const first = await allocate('{"owner": "k", "metadata": {"k": 9007199254740991}}');
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(first.body.metadata.k, 9007199254740991);
      assert.equal((await allocate('{"owner": "k", "metadata": {"k": 9007199254740992}}')).status, 400);
      const b = await allocate('{"owner": "b", "metadata": {"f": 1e308, "s": "12345678901234567891", "12345678901234567891": "x\\"12345678901234567891"}}');
      assert.equal(b.status, 201, JSON.stringify(b.body));
      const shown = (await json(port, 'GET', `/ids/v1/allocations/${b.body.id}`, h)).body;
      assert.deepEqual(shown.metadata, { f: 1e308, s: '12345678901234567891', '12345678901234567891': 'x"12345678901234567891' });
      const owners = (await json(port, 'GET', '/ids/v1/pools/meta/allocations', h)).body.items.map((x: { owner: string }) => x.owner);
      assert.deepEqual(owners.sort(), ['b', 'k']);
    });
  });
}
