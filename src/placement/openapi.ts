// The OpenAPI 3.1 document of the Placement API allot serves, at the newest microversion, built
// (http/openapi.ts) from the route table alone: each endpoint declares its summary, the schemas it
// validates with (each table's newest entry is documented) and its policy rule; errors in
// Placement's format.
import { PLACEMENT_RULES } from '../auth/rules/placement.js';
import type { JsonSchema } from '../core/json-schema.js';
import { type ApiDocumentation, type DocumentedEndpoint, type SecurityMode, buildApiDocument } from '../http/openapi.js';
import type { RouteTable } from '../http/router.js';
import { MAX_VERSION } from './microversion.js';

const ERROR: JsonSchema = {
  type: 'object',
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          status: { type: 'integer' },
          title: { type: 'string' },
          detail: { type: 'string' },
          request_id: { type: 'string' },
          code: { type: 'string', description: 'placement.* (1.23+)' },
        },
        required: ['status', 'title', 'detail', 'request_id'],
      },
    },
  },
  required: ['errors'],
};

export function placementDocument(routes: RouteTable<DocumentedEndpoint>, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const documentation: ApiDocumentation = {
    title: 'allot: OpenStack Placement API',
    version: MAX_VERSION,
    description: `The subset of the OpenStack Placement API allot serves, at microversion ${MAX_VERSION}. Errors are Placement's {"errors": [...]} documents.`,
    routes,
    rules: PLACEMENT_RULES,
    error: { mediaType: 'application/json', schema: ERROR, description: "Placement's error document" },
    requestHeaders: [{ name: 'OpenStack-API-Version', description: 'the microversion asked for (default 1.0; `latest`)', example: `placement ${MAX_VERSION}` }],
    token: { noauth: 'noauth (development): not verified; Placement reads it as USER[:PROJECT], `admin` is an administrator' },
  };
  return buildApiDocument(documentation, serverUrl, { ...security, tokenUnderNoauth: true });
}
