// The OpenAPI 3.1 document of the Ironic-compatible API allot serves, at the newest microversion,
// built (http/openapi.ts) from the route table alone: each endpoint declares its summary, the
// schemas it validates with, its statuses, its response schema and its policy rule (routes/); the
// response schemas are schemas.ts RESPONSE_SCHEMAS, errors in Ironic's {"error_message": "<JSON
// text>"} format.
import { BAREMETAL_RULES } from '../auth/rules/baremetal.js';
import { type ApiDocumentation, type SecurityMode, buildApiDocument } from '../http/openapi.js';
import type { RouteTable } from '../http/router.js';
import { MAX_VERSION } from './microversion.js';
import type { Endpoint } from './request.js';
import { RESPONSE_SCHEMAS, schemaRef } from './schemas.js';

export function baremetalDocument(routes: RouteTable<Endpoint>, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const documentation: ApiDocumentation = {
    title: 'allot: Ironic-compatible bare-metal API',
    version: MAX_VERSION,
    description: `The subset of the OpenStack Bare Metal (Ironic) API allot serves — nodes, allocations, conductors, chassis, ports, port groups, volume connectors and targets, drivers, deploy templates — at microversion ${MAX_VERSION}. A response schema describes the answer at every microversion: a member only some microversions write is optional and says from which; with \`fields=\`, or in a list without detail, a resource is its …Selection schema (any member may be absent but links).`,
    routes,
    rules: BAREMETAL_RULES,
    error: { mediaType: 'application/json', schema: schemaRef('IronicError'), description: "Ironic's error document" },
    schemas: RESPONSE_SCHEMAS,
    token: { noauth: 'noauth (development): not verified; every caller is a system-scoped administrator' },
    requestHeaders: [
      { name: 'X-OpenStack-Ironic-API-Version', description: 'the microversion asked for (default the minimum; `latest`)', example: MAX_VERSION },
    ],
  };
  return buildApiDocument(documentation, serverUrl, security);
}
