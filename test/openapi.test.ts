// The OpenAPI 3.1 documents of the three APIs, as served: each passes a real OpenAPI 3.1 validator
// (@seriousme/openapi-schema-validator) and its JSON schemas compile as JSON Schema 2020-12 (Ajv);
// every route of each route table is an operation of its document (and nothing else is); request
// bodies are the very schemas the handlers validate with; security follows --auth.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { documentedRoutes as baremetalRoutes } from '../src/baremetal/api.js';
import { nodeCreate as NODE_CREATE_SCHEMA } from '../src/baremetal/schemas.js';
import { DEFAULT_RULES } from '../src/auth/rules/index.js';
import { METHODS, type RouteTable } from '../src/http/router.js';
import { openApiPath } from '../src/http/openapi.js';
import { idsRoutes } from '../src/ids/api.js';
import { placementRoutes } from '../src/placement/api.js';
import { inventoriesReplace } from '../src/placement/schemas.js';
import { AllotClient } from '../src/client/index.js';
import { instanceCreateSchema, specCreateSchema } from '../src/ids/schemas.js';
import { DIALECTS, freshDatabaseUrl } from './helpers/databases.js';
import { documentedOnly } from './helpers/openapi.js';
import { type TestServer, startServer } from './helpers/server.js';
import { seedReservationCloud, tenantServerSpec } from './ids/reservation-cloud.js';

type Doc = { openapi: string; paths: Record<string, Record<string, any>>; security?: unknown[]; components: { securitySchemes?: Record<string, any> } };

const DOCUMENTS = [
  { api: 'placement', url: '/placement/openapi.json', routes: placementRoutes as RouteTable<unknown>, prefix: '' },
  { api: 'baremetal', url: '/baremetal/openapi.json', routes: baremetalRoutes as RouteTable<unknown>, prefix: '' },
  { api: 'ids', url: '/ids/v1/openapi.json', routes: idsRoutes as RouteTable<unknown>, prefix: '' },
] as const;

async function fetchDoc(server: TestServer, url: string): Promise<Doc> {
  const res = await fetch(`${server.url}${url}`);
  assert.equal(res.status, 200, url);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  return (await res.json()) as Doc;
}

/** Every operation of a document as `METHOD /path/{param}`. */
function operationsOf(doc: Doc): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
}

/** Every operation of a route table, in the document's path syntax. */
function routesOf(routes: RouteTable<unknown>): string[] {
  return Object.entries(routes).flatMap(([template, byMethod]) => METHODS.filter((m) => byMethod[m]).map((m) => `${m} ${openApiPath(template)}`));
}

/** Every JSON schema in a document: request bodies, parameters, components. */
function schemasOf(doc: Doc): unknown[] {
  const out: unknown[] = [];
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const p of op.parameters ?? []) out.push(p.schema);
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) out.push(body);
    }
  }
  return out;
}

for (const dialect of DIALECTS) {
  describe(`OpenAPI documents (${dialect}, noauth)`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
    });
    after(() => server.close());

    for (const { api, url, routes } of DOCUMENTS) {
      test(`${api}: a valid OpenAPI 3.1 document with every route of the route table`, async () => {
        const doc = await fetchDoc(server, url);
        assert.equal(doc.openapi, '3.1.0');
        const result = await new Validator().validate(doc);
        assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
        assert.deepEqual(operationsOf(doc).sort(), routesOf(routes).sort());
        const ajv = new Ajv2020({ strict: false, validateFormats: false });
        for (const schema of schemasOf(doc))
          assert.ok(ajv.validateSchema(schema as object), `${api}: ${JSON.stringify(schema).slice(0, 200)}: ${ajv.errorsText()}`);
        assert.equal(doc.components.securitySchemes?.token?.type, 'apiKey');
        assert.equal(doc.components.securitySchemes?.token?.name, 'X-Auth-Token');
        assert.equal(doc.components.securitySchemes?.token?.in, 'header');
      });
    }

    test("each operation names its endpoint's policy rule and that rule's default check string", async () => {
      for (const { api, url, routes } of DOCUMENTS) {
        const doc = await fetchDoc(server, url);
        for (const [template, byMethod] of Object.entries(routes as RouteTable<{ policy?: string; public?: boolean }>)) {
          for (const method of METHODS) {
            const endpoint = byMethod[method];
            if (!endpoint) continue;
            const documented = doc.paths[openApiPath(template)]![method.toLowerCase()]['x-policy'];
            const rule = DEFAULT_RULES[api]!.find((r) => r.name === endpoint.policy);
            if (endpoint.public) assert.equal(documented, undefined, `${api} ${method} ${template} is public`);
            else assert.deepEqual(documented, { rule: rule!.name, default: rule!.check }, `${api} ${method} ${template}`);
          }
        }
      }
    });

    test('request bodies are the schemas the handlers validate with, at the newest microversion', async () => {
      const placement = await fetchDoc(server, '/placement/openapi.json');
      assert.deepEqual(placement.paths['/resource_providers/{uuid}/inventories']!.put.requestBody.content['application/json'].schema, inventoriesReplace);
      const claim = placement.paths['/allocations/{consumer_uuid}']!.put.requestBody.content['application/json'].schema;
      assert.ok(claim.required.includes('consumer_type'), 'PUT /allocations at 1.39 needs consumer_type (1.38+)');
      assert.equal((placement as any).info.version, '1.39');
      const baremetal = await fetchDoc(server, '/baremetal/openapi.json');
      assert.deepEqual(baremetal.paths['/v1/nodes']!.post.requestBody.content['application/json'].schema, NODE_CREATE_SCHEMA);
      assert.ok(baremetal.paths['/v1/nodes/{node}']!.patch.requestBody);
    });

    test('ids: reservations across the engines are documented — the new spec sources and create fields, and a real instance holding a node, capacity and values answers only documented members', async () => {
      const doc = (await fetchDoc(server, '/ids/v1/openapi.json')) as Doc & { components: { schemas: Record<string, any> } };
      const create = doc.paths['/v1/service-instances']!.post;
      assert.deepEqual(create.requestBody.content['application/json'].schema, instanceCreateSchema);
      for (const field of ['validate', 'promote', 'project_id']) assert.ok(instanceCreateSchema.properties![field], field);
      assert.deepEqual(doc.paths['/v1/allocation-specs']!.post.requestBody.content['application/json'].schema, specCreateSchema);
      const sources = (doc.components.schemas.Spec.properties.attributes.additionalProperties.oneOf as Array<{ properties: { from: { enum: string[] } } }>).map(
        (o) => o.properties.from.enum[0],
      );
      assert.deepEqual(sources.sort(), ['capacity', 'inventory', 'lookup', 'node', 'pool']);

      const allot = new AllotClient({ url: server.url, token: 'admin' });
      const cloud = await seedReservationCloud(allot, { nodes: ['doc-node'], resourceClass: 'doc-class' });
      await allot.ids.createPool({ name: 'doc-vlan', kind: 'integer', ranges: ['10-19'] });
      await allot.ids.createPool({ name: 'doc-addr', kind: 'address', ranges: ['10.9.0.0/28'] });
      const spec = await allot.ids.createSpec(tenantServerSpec('doc-tenant', 'doc-class', { vlan: 'doc-vlan', address: 'doc-addr' }));
      const instance = await allot.ids.createInstance({ allocation_spec: 'doc-tenant', attributes: {}, validate: true, promote: true });
      assert.deepEqual(instance.holdings.map((h) => h.source).sort(), ['capacity', 'node', 'pool', 'pool']);
      // a node released by Ironic's rule: the instance records a forced release
      await allot.baremetal.updateNode(cloud.nodes.get('doc-node')!, [{ op: 'remove', path: '/instance_uuid' }]);
      const released = await allot.ids.getInstance(instance.id);
      assert.equal(released.forced_releases.length, 1);

      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      const components = { schemas: documentedOnly(doc.components.schemas) };
      for (const [name, body] of [
        ['Spec', spec],
        ['Instance', instance],
        ['Instance', released],
      ] as const) {
        const validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components });
        assert.ok(validate(body), `${name}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`);
      }
    });

    test('/ui/reference renders every operation of the three documents, self-contained and script-free', async () => {
      const res = await fetch(`${server.url}/ui/reference`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      const html = await res.text();
      assert.doesNotMatch(html, /<script|<style|\sstyle=|\son[a-z]+=/i, 'no script, no inline style or handler');
      assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'nothing loaded from elsewhere');
      for (const { url } of DOCUMENTS) {
        const doc = await fetchDoc(server, url);
        assert.ok(html.includes((doc as any).info.title), (doc as any).info.title);
        for (const op of operationsOf(doc)) {
          const [method, path] = op.split(' ');
          assert.ok(html.includes(`>${method}</span> <code>${path}</code>`), `${url}: ${op} on the page`);
        }
      }
      assert.ok(html.includes('consumer_type'), 'request bodies are shown');
      const css = await fetch(`${server.url}/ui/reference/reference.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    });

    test('noauth: Placement operations carry the token (noauth2), the other APIs need none', async () => {
      const placement = await fetchDoc(server, '/placement/openapi.json');
      assert.deepEqual(placement.security, [{ token: [] }]);
      assert.deepEqual(placement.paths['/']!.get.security, [], 'the version document is public');
      for (const url of ['/baremetal/openapi.json', '/ids/v1/openapi.json']) assert.deepEqual((await fetchDoc(server, url)).security, [], url);
    });
  });
}

describe('OpenAPI documents under --auth keystone', () => {
  let server: TestServer;
  before(async () => {
    // The documents are public: no Keystone is asked, so an unreachable one will do.
    server = await startServer({
      db: 'sqlite::memory:',
      auth: 'keystone',
      keystoneUrl: 'http://127.0.0.1:9/v3',
      keystoneUsername: 'allot',
      keystonePassword: 'unused',
      keystoneProject: 'service',
    });
  });
  after(() => server.close());

  test('every non-public operation of every API needs X-Auth-Token; the documents themselves are public', async () => {
    for (const { url } of DOCUMENTS) {
      const doc = await fetchDoc(server, url);
      assert.deepEqual(doc.security, [{ token: [] }], url);
      assert.match(doc.components.securitySchemes!.token.description, /Keystone/);
      const self = Object.entries(doc.paths).find(([p]) => p.endsWith('/openapi.json'))!;
      assert.deepEqual(self[1].get.security, [], `${url} describes itself as public`);
    }
    const refused = await fetch(`${server.url}/placement/resource_providers`, { headers: { 'openstack-api-version': 'placement 1.39' } });
    assert.equal(refused.status, 401);
  });
});
