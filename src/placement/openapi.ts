// The OpenAPI 3.1 document of the Placement API allot serves, at the newest microversion, built
// (http/openapi.ts) from the route table alone: each endpoint declares its summary, the schemas it
// validates with (each table's newest entry is documented), its response schema and its policy
// rule; the response schemas are schemas.ts RESPONSE_SCHEMAS, errors in Placement's format.
import { PLACEMENT_RULES } from '../auth/rules/placement.js';
import { type ApiDocumentation, type DocumentedEndpoint, type SecurityMode, buildApiDocument } from '../http/openapi.js';
import type { RouteTable } from '../http/router.js';
import { MAX_VERSION } from './microversion.js';
import { RESPONSE_SCHEMAS, schemaRef } from './schemas.js';

export function placementDocument(routes: RouteTable<DocumentedEndpoint>, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const documentation: ApiDocumentation = {
    title: 'allot: OpenStack Placement API',
    version: MAX_VERSION,
    description: `The subset of the OpenStack Placement API allot serves, at microversion ${MAX_VERSION}. A response schema describes the answer at every microversion: a member only some microversions write is optional and says from which. Errors are Placement's {"errors": [...]} documents.`,
    routes,
    rules: PLACEMENT_RULES,
    error: { mediaType: 'application/json', schema: schemaRef('Errors'), description: "Placement's error document" },
    schemas: RESPONSE_SCHEMAS,
    requestHeaders: [{ name: 'OpenStack-API-Version', description: 'the microversion asked for (default 1.0; `latest`)', example: `placement ${MAX_VERSION}` }],
    token: { noauth: 'noauth (development): not verified; Placement reads it as USER[:PROJECT], `admin` is an administrator' },
  };
  return buildApiDocument(documentation, serverUrl, { ...security, tokenUnderNoauth: true });
}
