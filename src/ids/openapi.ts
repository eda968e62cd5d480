// The OpenAPI 3.1 document of the identifier API, built (http/openapi.ts) from the route table:
// each endpoint declares its summary, schemas, statuses and policy rule (routes/); the response
// schemas are schemas.ts RESPONSE_SCHEMAS, errors RFC 9457 problem details.
import { IDS_RULES } from '../auth/rules/ids.js';
import { type SecurityMode, buildApiDocument } from '../http/openapi.js';
import type { RouteTable } from '../http/router.js';
import type { Endpoint } from './request.js';
import * as s from './schemas.js';

export function idsDocument(routes: RouteTable<Endpoint>, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  return buildApiDocument(
    {
      title: 'allot identifier API',
      version: '1',
      description:
        'Identifier pools (integer ranges, IP addresses, prefixes), idempotent allocation for an owner, reservations with leases, service instances with allocation specs, and external inventories. Errors are RFC 9457 problem details.',
      routes,
      rules: IDS_RULES,
      error: { mediaType: 'application/problem+json', schema: s.schemaRef('Problem'), description: 'problem details' },
      schemas: s.RESPONSE_SCHEMAS,
      token: {
        noauth: 'not needed: this server runs with --auth noauth (development, loopback only; every caller is an administrator)',
        roles:
          'Roles: readers (`reader`, `service`) read; members (`member`, `service`) allocate, change and release values; admins (`admin`) define pools and allocation specs and look after external deliveries. ' +
          "A pool belongs to a project (`project_id`) or is shared (null): a caller sees and uses its own project's pools and the shared ones, and another project's pool or value is a 404 — unless `ids:all_projects` (admins, the system scope, services). " +
          "Each operation's `x-policy` names its rule and default check string; operators change them with a policy file.",
      },
    },
    serverUrl,
    security,
  );
}
