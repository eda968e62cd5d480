// OpenAPI 3.1 documents built from an API's route table and the JSON schemas its handlers validate
// with. Every path and method of the route table is a path item and an operation (a test checks
// it); the API supplies a summary and the schemas per operation, its error body, the headers every
// request carries (a microversion), and whether a token is needed.
import type { JsonSchema } from '../core/json-schema.js';
import { METHODS, type RouteTable } from './router.js';

export interface OperationDoc {
  summary: string;
  /** the request body's schema (application/json) */
  body?: JsonSchema;
  /** an object schema whose properties are the query parameters */
  query?: JsonSchema;
  /** the success statuses */
  ok: number[];
  /** request headers of this operation alone (besides the API's requestHeaders) */
  headers?: Array<{ name: string; description: string; example: string }>;
  /** headers of its success responses: name → what it says */
  responseHeaders?: Record<string, string>;
}

export interface ApiDocumentation {
  title: string;
  version: string;
  description: string;
  routes: RouteTable<{ public?: boolean }>;
  /** `GET /resource_providers/:uuid` → what it does; one per route table entry */
  operations: Record<string, OperationDoc>;
  error: { mediaType: string; schema: JsonSchema; description: string };
  /** headers every versioned request may send (OpenStack-API-Version, …) */
  requestHeaders?: Array<{ name: string; description: string; example: string }>;
}

/** How the process authenticates (--auth): under keystone every non-public operation needs X-Auth-Token. */
export interface SecurityMode {
  auth: 'noauth' | 'keystone';
  /** noauth: this API reads X-Auth-Token anyway (Placement's noauth2 mode: `admin`) */
  tokenUnderNoauth?: boolean;
}

export const operationKey = (method: string, template: string) => `${method} ${template}`;

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

/** `/resource_providers/:uuid` → `/resource_providers/{uuid}` */
export const openApiPath = (template: string) => template.replace(/:(\w+)/g, '{$1}');

export function buildApiDocument(api: ApiDocumentation, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const tokenNeeded = security.auth === 'keystone' || security.tokenUnderNoauth === true;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [template, byMethod] of Object.entries(api.routes)) {
    const path = openApiPath(template);
    const item: Record<string, unknown> = {};
    const pathParameters = [...template.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    for (const method of METHODS) {
      const endpoint = byMethod[method];
      if (!endpoint) continue;
      const doc = api.operations[operationKey(method, template)] ?? { summary: `${method} ${template}`, ok: [200] };
      const responses: Record<string, unknown> = {};
      const headers = Object.fromEntries(
        Object.entries(doc.responseHeaders ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
      );
      for (const status of doc.ok) responses[String(status)] = { description: STATUS_TEXT[status] ?? 'OK', ...(doc.responseHeaders ? { headers } : {}) };
      responses.default = { $ref: '#/components/responses/Error' };
      const queryParameters = Object.entries(doc.query?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: doc.query?.required?.includes(name) ?? false,
        schema,
      }));
      const headerParameters = [...(doc.headers ?? []), ...(api.requestHeaders ?? [])].map((h) => ({
        name: h.name,
        in: 'header',
        required: false,
        description: h.description,
        schema: { type: 'string' },
        example: h.example,
      }));
      item[method.toLowerCase()] = {
        summary: doc.summary,
        operationId: operationId(method, template),
        parameters: [...pathParameters, ...queryParameters, ...headerParameters],
        ...(doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: doc.body } } } } : {}),
        responses,
        ...(endpoint.public || !tokenNeeded ? { security: [] } : {}),
      };
    }
    paths[path] = item;
  }
  return {
    openapi: '3.1.0',
    info: { title: api.title, version: api.version, description: api.description },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: tokenScheme(security.auth, 'noauth (development): not verified; Placement reads it as USER[:PROJECT], `admin` is an administrator'),
      responses: { Error: { description: api.error.description, content: { [api.error.mediaType]: { schema: api.error.schema } } } },
    },
    security: tokenNeeded ? [{ token: [] }] : [],
  };
}

/** The `X-Auth-Token` security scheme of every document, worded for the server's --auth mode. */
export function tokenScheme(auth: string, noauthDescription: string, roles?: string) {
  const mode = auth === 'keystone' ? 'a Keystone token (this server runs with --auth keystone)' : noauthDescription;
  return { token: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: roles ? `${mode}. ${roles}` : mode } };
}

function operationId(method: string, template: string): string {
  const words = template
    .replace(/:(\w+)/g, 'by_$1')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') || method.toLowerCase();
}
