// OpenAPI 3.1 documents built from an API's route table alone: each endpoint declares what the
// document says of it (summary, the schemas it validates with, its statuses, its policy rule), so
// the document cannot drift from the handlers. Every path and method of the route table is a path
// item and an operation (a test checks it); the API adds its title, error body, the headers every
// request carries (a microversion) and its token's wording.
import type { RuleDefault } from '../auth/policy.js';
import type { JsonSchema } from '../core/json-schema.js';
import { Microversion, type Schemas, schemaAt } from '../core/microversion.js';
import { METHODS, type RouteTable } from './router.js';

export interface HeaderDoc {
  name: string;
  description: string;
  example?: string;
}

/** What an endpoint declares for its documentation (and, for the schemas, what it validates with). */
export interface OperationDoc {
  summary: string;
  /** the request body's schema (application/json), or its schemas by microversion */
  body?: Schemas;
  /** a PATCH's body as `application/merge-patch+json` (RFC 7396) */
  mergeBody?: JsonSchema;
  /** an object schema (or schemas by microversion) whose properties are the query parameters */
  query?: Schemas;
  /** the success statuses */
  ok: number[];
  /** the success body's schema (often a `$ref` into the document's components) */
  response?: JsonSchema | { $ref: string };
  /** error statuses this operation is known for (every operation may answer the API's error) */
  errors?: number[];
  /** request headers of this operation alone (besides the API's requestHeaders) */
  headers?: HeaderDoc[];
  /** headers of its success responses: name → what it says */
  responseHeaders?: Record<string, string>;
}

/** What the document reads from each route table entry. */
export interface DocumentedEndpoint extends OperationDoc {
  public?: boolean;
  policy?: string;
}

export interface ApiDocumentation {
  title: string;
  /** the API's version; at a microversion API's newest, the schemas by microversion are documented */
  version: string;
  description: string;
  routes: RouteTable<DocumentedEndpoint>;
  /** the API's default policy rules: each operation names its rule and default check (`x-policy`) */
  rules: readonly RuleDefault[];
  error: { mediaType: string; schema: JsonSchema | { $ref: string }; description: string };
  /** headers every versioned request may send (OpenStack-API-Version, …) */
  requestHeaders?: HeaderDoc[];
  /** schemas the operations refer to (`#/components/schemas/<name>`) */
  schemas?: Record<string, unknown>;
  /** what the token is, in words: under noauth, and (any mode) who may do what */
  token: { noauth: string; roles?: string };
}

/** How the process authenticates (--auth): under keystone every non-public operation needs X-Auth-Token. */
export interface SecurityMode {
  auth: 'noauth' | 'keystone';
  /** noauth: this API reads X-Auth-Token anyway (Placement's noauth2 mode: `admin`) */
  tokenUnderNoauth?: boolean;
}

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

/** `/resource_providers/:uuid` → `/resource_providers/{uuid}` */
export const openApiPath = (template: string) => template.replace(/:(\w+)/g, '{$1}');

export function buildApiDocument(api: ApiDocumentation, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const tokenNeeded = security.auth === 'keystone' || security.tokenUnderNoauth === true;
  const rules = new Map(api.rules.map((rule) => [rule.name, rule]));
  const newest = /^\d+\.\d+$/.test(api.version) ? Microversion.parse(api.version) : null;
  const documented = (schemas: Schemas): JsonSchema => (newest ? schemaAt(schemas, newest) : (schemas as JsonSchema));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [template, byMethod] of Object.entries(api.routes)) {
    const item: Record<string, unknown> = {};
    const pathParameters = [...template.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    for (const method of METHODS) {
      const endpoint = byMethod[method];
      if (!endpoint) continue;
      const headers = Object.fromEntries(
        Object.entries(endpoint.responseHeaders ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
      );
      const responses: Record<string, unknown> = {};
      for (const status of endpoint.ok) {
        responses[String(status)] = {
          description: STATUS_TEXT[status] ?? 'OK',
          ...(endpoint.response && status !== 204 ? { content: { 'application/json': { schema: endpoint.response } } } : {}),
          ...(endpoint.responseHeaders ? { headers } : {}),
        };
      }
      for (const status of endpoint.errors ?? []) responses[String(status)] = { $ref: '#/components/responses/Error' };
      responses.default = { $ref: '#/components/responses/Error' };
      const query = endpoint.query ? documented(endpoint.query) : undefined;
      const queryParameters = Object.entries(query?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: query?.required?.includes(name) ?? false,
        ...(schema.description ? { description: schema.description } : {}),
        schema,
      }));
      const headerParameters = [...(endpoint.headers ?? []), ...(api.requestHeaders ?? [])].map((h) => ({
        name: h.name,
        in: 'header',
        required: false,
        description: h.description,
        schema: { type: 'string' },
        ...(h.example !== undefined ? { example: h.example } : {}),
      }));
      const rule = endpoint.policy ? rules.get(endpoint.policy) : undefined;
      item[method.toLowerCase()] = {
        summary: endpoint.summary,
        operationId: operationId(method, template),
        parameters: [...pathParameters, ...queryParameters, ...headerParameters],
        ...(endpoint.body ? { requestBody: requestBody(documented(endpoint.body), endpoint.mergeBody) } : {}),
        responses,
        ...(endpoint.public || !tokenNeeded ? { security: [] } : {}),
        ...(rule ? { 'x-policy': { rule: rule.name, default: rule.check } } : {}),
      };
    }
    paths[openApiPath(template)] = item;
  }
  const mode = security.auth === 'keystone' ? 'a Keystone token (this server runs with --auth keystone)' : api.token.noauth;
  return {
    openapi: '3.1.0',
    info: { title: api.title, version: api.version, description: api.description },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      ...(api.schemas ? { schemas: api.schemas } : {}),
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: api.token.roles ? `${mode}. ${api.token.roles}` : mode },
      },
      responses: { Error: { description: api.error.description, content: { [api.error.mediaType]: { schema: api.error.schema } } } },
    },
    security: tokenNeeded ? [{ token: [] }] : [],
  };
}

function requestBody(body: JsonSchema, mergeBody: JsonSchema | undefined) {
  return {
    required: true,
    content: { 'application/json': { schema: body }, ...(mergeBody ? { 'application/merge-patch+json': { schema: mergeBody } } : {}) },
  };
}

function operationId(method: string, template: string): string {
  const words = template
    .replace(/:(\w+)/g, 'by_$1')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') || method.toLowerCase();
}
