// The bare-metal API's envelope: version documents, microversion negotiation, Ironic's error
// bodies, routing and method errors, and bad input of every kind answered without a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { request } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, fault } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`bare-metal API envelope (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20 });
      api = new IronicClient(`${server.url}/baremetal`);
    });
    after(() => server.close());

    test('GET / lists v1 with its version range, without negotiating', async () => {
      const res = await api.at(null).get('/');
      assert.equal(res.status, 200);
      assert.equal(res.body.default_version.min_version, '1.1');
      assert.equal(res.body.default_version.version, '1.82');
      assert.equal(res.body.versions[0].links[0].href, `${server.url}/baremetal/v1/`);
      assert.match(res.headers.get('openstack-request-id')!, /^req-[0-9a-f-]{36}$/);
      assert.equal(res.headers.get('x-openstack-ironic-api-version'), null);
    });

    test('GET /v1 negotiates: no header is 1.1, latest is the maximum, the headers say so', async () => {
      const old = await api.at(null).get('/v1');
      assert.equal(old.status, 200);
      assert.equal(old.headers.get('x-openstack-ironic-api-version'), '1.1');
      assert.equal(old.headers.get('x-openstack-ironic-api-minimum-version'), '1.1');
      assert.equal(old.headers.get('x-openstack-ironic-api-maximum-version'), '1.82');
      assert.equal(old.body.allocations, undefined);
      const latest = await api.at('latest').get('/v1/');
      assert.equal(latest.headers.get('x-openstack-ironic-api-version'), '1.82');
      assert.equal(latest.body.allocations[0].href, `${server.url}/baremetal/v1/allocations/`);
      // the newer standard header works too
      const standard = await request('GET', `${server.url}/baremetal/v1`, undefined, { headers: { 'openstack-api-version': 'baremetal 1.60' } });
      assert.equal(standard.headers.get('x-openstack-ironic-api-version'), '1.60');
    });

    test('an unparsable or out-of-range version is a 406 with only the range headers', async () => {
      for (const version of ['1.99', '2.0', '1.0', 'abc', '1.5.1', '']) {
        const res = await api.at(version || ' ').get('/v1/nodes');
        assert.equal(res.status, 406, `${version}: ${res.text}`);
        assert.equal(res.headers.get('x-openstack-ironic-api-minimum-version'), '1.1');
        assert.equal(res.headers.get('x-openstack-ironic-api-maximum-version'), '1.82');
        assert.equal(res.headers.get('x-openstack-ironic-api-version'), null);
        assert.equal(fault(res).code, 406);
      }
      assert.match(fault(await api.at('1.99').get('/v1/nodes')).description!, /supported version range is: \[1\.1, 1\.82\]/);
    });

    test('allocations need 1.52: below, a framework 404 (405 for POST) saying so', async () => {
      const res = await api.at(null).get('/v1/allocations');
      assert.equal(res.status, 404);
      assert.deepEqual(fault(res), { code: 404, title: 'Not Found', description: 'The API version does not allow allocations' });
      const post = await api.at('1.51').post('/v1/allocations', { resource_class: 'x' });
      assert.equal(post.status, 405);
      const patch = await api.at('1.56').patch('/v1/allocations/x', []);
      assert.equal(patch.status, 405);
      // once allocations exist, Ironic's own envelope says why
      assert.deepEqual(fault(patch), { faultcode: 'Client', faultstring: 'The API version does not allow updating allocations', debuginfo: null });
    });

    test('errors are Ironic fault documents inside error_message', async () => {
      const res = await api.get('/v1/nodes/nope');
      assert.equal(res.status, 404);
      assert.match(res.text, /^\{"error_message": "\{\\"faultcode\\": \\"Client\\", \\"faultstring\\": /);
      assert.deepEqual(fault(res), { faultcode: 'Client', faultstring: 'Node nope could not be found.', debuginfo: null });
    });

    test('unknown paths are 404 and wrong methods 405 with Allow, in the framework shape', async () => {
      const missing = await api.get('/v1/bogus');
      assert.equal(missing.status, 404);
      assert.equal(fault(missing).code, 404);
      const wrong = await api.delete('/v1/nodes');
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.get('allow'), 'GET, POST');
      assert.equal(fault(wrong).title, 'Method Not Allowed');
    });

    test('secrets in driver_info and instance_info are masked in every answer, as Ironic masks them (show_password: nobody)', async () => {
      const v = api.at('1.82');
      const driver_info = {
        ipmi_address: '10.0.0.9',
        ipmi_username: 'root',
        ipmi_password: 's3cret',
        nested: { redfish_password: 'p', user: 'u' },
        ports: ['password'],
      };
      const created = await v.post('/v1/nodes', { name: 'masked', driver: 'fake-hardware', driver_info });
      assert.equal(created.status, 201, created.text);
      const masked = {
        ipmi_address: '10.0.0.9',
        ipmi_username: 'root',
        ipmi_password: '******',
        nested: { redfish_password: '******', user: 'u' },
        ports: ['password'],
      };
      assert.deepEqual(created.body.driver_info, masked);
      assert.deepEqual((await v.get('/v1/nodes/masked')).body.driver_info, masked);
      assert.deepEqual((await v.get('/v1/nodes/masked?fields=driver_info')).body.driver_info, masked);
      assert.deepEqual((await v.get('/v1/nodes/detail')).body.nodes.find((n: { name: string }) => n.name === 'masked').driver_info, masked);
      const patched = await v.patch('/v1/nodes/masked', [
        { op: 'add', path: '/instance_info/image_url', value: 'https://swift/v1/temp?sig=abc' },
        { op: 'add', path: '/instance_info/configdrive', value: 'H4sI' },
        { op: 'add', path: '/instance_info/root_gb', value: 10 },
      ]);
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.instance_info, { image_url: '******', configdrive: '******', root_gb: 10 });
      assert.equal(patched.body.driver_info.ipmi_password, '******');
      assert.equal((await v.delete('/v1/nodes/masked')).status, 204);
    });

    test('bad bodies: malformed JSON, wrong media type, not an object, unknown fields, wrong types', async () => {
      const cases: Array<[string, string | undefined, RegExp]> = [
        ['{bad', 'application/json', /^Malformed JSON in the request body/],
        ['[]', 'application/json', /^Schema error for allocation: \[\] is not of type 'object'/],
        ['{"resource_class": "x", "bogus": 1}', 'application/json', /Additional properties are not allowed \('bogus' was unexpected\)/],
        ['{"resource_class": 7}', 'application/json', /7 is not of type 'string', 'null'/],
        ['{"resource_class": "x", "traits": "CUSTOM_A"}', 'application/json', /'CUSTOM_A' is not of type 'array', 'null'/],
        ['{"resource_class": "x", "traits": ["lower"]}', 'application/json', /Possible root cause: 'lower' does not match/],
        ['{"resource_class": "x", "extra": "nope"}', 'application/json', /'nope' is not of type 'object', 'null'/],
        [`{"resource_class": "${'x'.repeat(81)}"}`, 'application/json', /is too long/],
        ['{"resource_class": "x", "uuid": "nope"}', 'application/json', /^Expected UUID for uuid: nope$/],
        ['{"resource_class": "x", "name": "bad name!"}', 'application/json', /^Cannot create allocation with invalid name 'bad name!'$/],
        ['{"resource_class": "x", "name": "☃"}', 'application/json', /invalid name/],
        [`{"resource_class": "x", "owner": "${'o'.repeat(256)}"}`, 'application/json', /is too long/],
        ['{}', 'application/json', /^The resource_class field is mandatory when not backfilling$/],
        ['{"resource_class": "x", "candidate_nodes": ["nope", "gone"]}', 'application/json', /^Nodes cannot be found: nope, gone$/],
        ['', 'application/json', /^Missing the request body/],
        // a byte-order mark is ignored, as UTF-8 decoders do
        ['\uFEFF{}', 'application/json', /^The resource_class field is mandatory when not backfilling$/],
      ];
      for (const [raw, contentType, message] of cases) {
        const res = await api.post('/v1/allocations', undefined, { raw, headers: contentType ? { 'content-type': contentType } : {} });
        assert.equal(res.status, 400, `${raw}: ${res.text}`);
        assert.match(fault(res).faultstring!, message, raw);
      }
      const media = await api.post('/v1/allocations', undefined, { raw: 'x', headers: { 'content-type': 'text/plain' } });
      assert.equal(media.status, 415);
      // nothing was written by any of them
      assert.deepEqual((await api.get('/v1/allocations')).body.allocations, []);
    });

    test('huge numbers, deep nesting and big bodies are refused cleanly', async () => {
      const huge = await api.post('/v1/nodes', undefined, {
        raw: '{"driver": "fake-hardware", "extra": {"n": 1e999}}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(huge.status, 400);
      assert.match(fault(huge).faultstring!, /number too large/);
      const bigBody = await api.post('/v1/nodes', { driver: 'fake-hardware', extra: { blob: 'x'.repeat(2 << 20) } });
      assert.equal(bigBody.status, 413);
      assert.equal(fault(bigBody).code, 413);
      const power = await api.put('/v1/nodes/nope/states/power', { target: 'power on', timeout: 1e300 });
      assert.ok([400, 404].includes(power.status), power.text);
      const nested = await api.post('/v1/nodes', undefined, {
        raw: `{"driver": "fake-hardware", "extra": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(nested.status, 400);
      assert.match(fault(nested).faultstring!, /nested more than 64 levels/);
      assert.deepEqual((await api.get('/v1/nodes')).body.nodes, []);
    });

    test('query strings: unknown and repeated parameters, bad limits, sort keys and directions, fields', async () => {
      const cases: Array<[string, RegExp]> = [
        ['/v1/allocations?foo=bar', /^Unexpected arguments: foo$/],
        ['/v1/allocations?fields=uuid&fields=name', /^Expected string for fields: \['uuid', 'name'\]$/],
        ['/v1/allocations?limit=-1', /^Limit must be positive$/],
        ['/v1/allocations?limit=0', /^Limit must be positive$/],
        ['/v1/allocations?limit=abc', /^Expected an integer for limit: abc$/],
        ['/v1/allocations?sort_key=traits', /^The sort_key value traits is an invalid field for sorting$/],
        ['/v1/allocations?sort_dir=up', /^Invalid sort direction: up/],
        ['/v1/allocations?fields=bogus', /^Field\(s\) "bogus" are not valid$/],
        ['/v1/allocations?marker=nope', /^Expected UUID for marker: nope$/],
        ['/v1/allocations?state=bogus', /^Invalid state bogus/],
        ['/v1/allocations?node=nope', /^Node nope could not be found\.$/],
        ['/v1/nodes?maintenance=maybe', /^Invalid maintenance: Unrecognized value 'maybe'/],
        ['/v1/nodes?provision_state=bogus', /^Provision state "bogus" is not valid$/],
        ['/v1/nodes?instance_uuid=nope', /^Expected UUID for instance_uuid: nope$/],
        ['/v1/nodes?detail=true&fields=uuid', /^Can not specify \?detail=True and fields in the same request\.$/],
        ['/v1/nodes/detail?fields=uuid', /^Unexpected arguments: fields$/],
        ['/v1/nodes?sort_key=properties', /invalid field for sorting/],
      ];
      for (const [path, message] of cases) {
        const res = await api.get(path);
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.match(fault(res).faultstring!, message, path);
      }
      // a version-gated filter or field below its version is a 406
      assert.equal((await api.at('1.59').get('/v1/allocations?owner=x')).status, 406);
      assert.equal((await api.at('1.59').get('/v1/allocations?fields=owner')).status, 406);
      assert.equal((await api.at('1.7').get('/v1/nodes?fields=uuid')).status, 406);
      // fields the reference Ironic fails on are answered
      const allocationUuid = await api.get('/v1/nodes?fields=allocation_uuid');
      assert.equal(allocationUuid.status, 200);
      // a marker that names nothing is a 404
      assert.equal((await api.get('/v1/allocations?marker=11111111-2222-3333-4444-555555555555')).status, 404);
    });

    test('the dedicated-port layout: links follow the prefix the client used', async () => {
      const created = await api.post('/v1/nodes', { driver: 'fake-hardware', name: 'linked' });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('location'), `${server.url}/baremetal/v1/nodes/${created.body.uuid}`);
      assert.deepEqual(created.body.links, [
        { href: `${server.url}/baremetal/v1/nodes/${created.body.uuid}`, rel: 'self' },
        { href: `${server.url}/baremetal/nodes/${created.body.uuid}`, rel: 'bookmark' },
      ]);
      assert.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
      assert.equal(created.body.updated_at, null);
    });
  });
}
