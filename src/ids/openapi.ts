// The OpenAPI 3.1 document of the identifier API, built from the route table's operations and
// the same JSON schemas that validate requests (schemas.ts). A test checks that every route of
// api.ts is described here and nothing else is.
import { IDS_RULES } from '../auth/rules/ids.js';
import type { JsonSchema } from '../core/json-schema.js';
import { tokenScheme } from '../http/openapi.js';
import * as s from './schemas.js';

interface Operation {
  summary: string;
  body?: JsonSchema;
  /** the body as `application/merge-patch+json` (RFC 7396), where a PATCH takes one */
  mergeBody?: JsonSchema;
  query?: JsonSchema;
  ok: number[];
  response?: string;
  ifMatch?: boolean;
  errors?: number[];
}

const OPERATIONS: Record<string, Record<string, Operation>> = {
  '/v1': { GET: { summary: 'API root: version and links', ok: [200], response: 'Root' } },
  '/v1/openapi.json': { GET: { summary: 'this document', ok: [200] } },
  '/v1/pools': {
    GET: { summary: 'list pools (by name)', query: s.poolListQuery, ok: [200], response: 'PoolPage' },
    POST: {
      summary: 'create a pool (same name and definition again: 200 with the existing pool)',
      body: s.poolCreateSchema,
      ok: [201, 200],
      response: 'Pool',
      errors: [400, 409, 415, 422],
    },
  },
  '/v1/pools/{pool}': {
    GET: { summary: 'a pool with its utilization', ok: [200], response: 'Pool', errors: [404] },
    PATCH: {
      summary: 'change strategy, description, metadata, ranges, exclusions, static band (a merge patch merges metadata)',
      body: s.poolPatchSchema,
      mergeBody: s.poolMergePatchSchema,
      ok: [200],
      response: 'Pool',
      ifMatch: true,
      errors: [400, 404, 409, 412, 422],
    },
    DELETE: { summary: 'delete an empty pool', ok: [204], ifMatch: true, errors: [404, 409, 412] },
  },
  '/v1/pools/{pool}/allocations': {
    GET: {
      summary: "list a pool's allocations in value order; ?value= finds the one holding a value",
      query: s.poolAllocationListQuery,
      ok: [200],
      response: 'AllocationPage',
      errors: [400, 404],
    },
    POST: {
      summary: 'allocate for owner+purpose (idempotent: 200 with what the owner already holds); dry_run previews',
      body: s.allocateSchema,
      ok: [201, 200],
      response: 'Allocation',
      errors: [400, 404, 409, 422],
    },
    DELETE: {
      summary:
        'release the allocation whose value is ?value= (as the allocation writes it), with the rules of a release by id (?force=true, If-Match); a value inside a larger block is 404 naming that block',
      query: s.poolReleaseQuery,
      ok: [204],
      ifMatch: true,
      errors: [400, 404, 409, 412],
    },
  },
  '/v1/pools/{pool}/free-ranges': {
    GET: { summary: 'free spans in value order', query: s.freeRangeQuery, ok: [200], response: 'FreeRangePage', errors: [404] },
  },
  '/v1/pools/{pool}/imports': {
    POST: {
      summary: 'import values already in use, conflicts reported per item',
      body: s.importSchema,
      ok: [200],
      response: 'ImportOutcome',
      errors: [400, 404, 409],
    },
  },
  '/v1/allocations': {
    GET: { summary: 'list allocations across pools', query: s.allocationListQuery, ok: [200], response: 'AllocationPage' },
    POST: {
      summary: 'allocate several values from several pools, all or nothing',
      body: s.batchSchema,
      ok: [201, 200],
      response: 'Batch',
      errors: [400, 404, 409, 422],
    },
  },
  '/v1/allocations/{id}': {
    GET: { summary: 'an allocation', ok: [200], response: 'Allocation', errors: [404] },
    PATCH: {
      summary: 'confirm a reservation, extend its lease, replace metadata (a merge patch merges it)',
      body: s.allocationPatchSchema,
      mergeBody: s.allocationMergePatchSchema,
      ok: [200],
      response: 'Allocation',
      ifMatch: true,
      errors: [400, 404, 409, 412],
    },
    DELETE: {
      summary: 'release (the value is free again at once); a value a live service instance refers to is 409 ids.value_held_by_instance unless ?force=true',
      query: s.releaseQuery,
      ok: [204],
      ifMatch: true,
      errors: [400, 404, 409, 412],
    },
  },
  '/v1/allocation-specs': {
    GET: { summary: 'list allocation specs', query: s.specListQuery, ok: [200], response: 'SpecPage' },
    POST: {
      summary: 'create an allocation spec (same name and attributes again: 200)',
      body: s.specCreateSchema,
      ok: [201, 200],
      response: 'Spec',
      errors: [400, 409, 422],
    },
  },
  '/v1/allocation-specs/{name}': {
    GET: { summary: 'an allocation spec', ok: [200], response: 'Spec', errors: [404] },
    DELETE: { summary: 'delete an unused allocation spec', ok: [204], ifMatch: true, errors: [404, 409, 412] },
  },
  '/v1/service-instances': {
    GET: { summary: 'list service instances', query: s.instanceListQuery, ok: [200], response: 'InstancePage' },
    POST: {
      summary:
        'create a service instance (candidate set = attributes, state start); with validate (and promote) also reserve every attribute — pool values, nodes, capacity — all or nothing, in one request',
      body: s.instanceCreateSchema,
      ok: [201, 200],
      response: 'Instance',
      errors: [400, 403, 409, 422, 502, 504],
    },
  },
  '/v1/service-instances/{id}': {
    GET: { summary: 'a service instance with its attribute sets', ok: [200], response: 'Instance', errors: [404] },
    PATCH: {
      summary: 'merge-patch the candidate attributes (state up → update)',
      body: s.instancePatchSchema,
      mergeBody: s.instancePatchSchema,
      ok: [200],
      response: 'Instance',
      ifMatch: true,
      errors: [400, 404, 409, 412],
    },
    DELETE: {
      summary: 'terminate: release every value, node and capacity (external values through the outbox); 409 while a held node is deployed',
      ok: [200],
      response: 'Instance',
      ifMatch: true,
      errors: [404, 409, 412],
    },
  },
  '/v1/service-instances/{id}/validate': {
    POST: {
      summary: 'allocate pool values, reserve nodes and capacity, and look up, into the candidate set: all or nothing',
      ok: [200],
      response: 'Instance',
      ifMatch: true,
      errors: [404, 409, 412, 422, 502, 504],
    },
  },
  '/v1/service-instances/{id}/promote': {
    POST: { summary: 'candidate → active, active → rollback', ok: [200], response: 'Instance', ifMatch: true, errors: [404, 409, 412] },
  },
  '/v1/service-instances/{id}/rollback': {
    POST: { summary: 'swap active and rollback', ok: [200], response: 'Instance', ifMatch: true, errors: [404, 409, 412] },
  },
  '/v1/service-instances/{id}/attribute-sets/{set}': {
    DELETE: {
      summary: 'clear the candidate or rollback set (frees what only it held)',
      ok: [200],
      response: 'Instance',
      ifMatch: true,
      errors: [404, 409, 412],
    },
  },
  '/v1/inventories': { GET: { summary: 'configured external inventories and their outbox counts', ok: [200] } },
  '/v1/outbox': { GET: { summary: 'deallocations owed to external inventories', query: s.outboxListQuery, ok: [200], response: 'OutboxPage' } },
  '/v1/outbox/{id}': { GET: { summary: 'one outbox entry', ok: [200], response: 'OutboxEntry', errors: [404] } },
  '/v1/outbox/{id}/retry': { POST: { summary: 'make a pending entry due now', ok: [200], response: 'OutboxEntry', errors: [404, 409] } },
};

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content' };

function queryParameters(schema: JsonSchema | undefined) {
  return Object.entries(schema?.properties ?? {}).map(([name, sub]) => ({ name, in: 'query', required: false, schema: sub, description: sub.description }));
}

/** Each operation's policy rule (auth/rules/ids.ts): `GET /v1/pools` → `ids:pools:list`. */
const POLICY = new Map(IDS_RULES.flatMap((rule) => (rule.operations ?? []).map((operation) => [operation, rule] as const)));

/** Who may, in words, for the document: the rule and its default. */
function policyText(method: string, path: string): { 'x-policy': { rule: string; default: string } } | Record<string, never> {
  const rule = POLICY.get(`${method} ${path}`);
  return rule ? { 'x-policy': { rule: rule.name, default: rule.check } } : {};
}

/** Answered without authentication whatever --auth says. */
const PUBLIC_PATHS = new Set(['/v1', '/v1/openapi.json']);

export function buildOpenApi(serverUrl: string, auth: 'noauth' | 'keystone' = 'noauth'): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [path, ops] of Object.entries(OPERATIONS)) {
    const item: Record<string, unknown> = {};
    const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    for (const [method, op] of Object.entries(ops)) {
      const responses: Record<string, unknown> = {};
      for (const status of op.ok) {
        responses[String(status)] = {
          description: STATUS_TEXT[status] ?? 'OK',
          ...(op.response && status !== 204 ? { content: { 'application/json': { schema: s.schemaRef(op.response) } } } : {}),
          ...(op.ifMatch || op.response ? { headers: { ETag: { schema: { type: 'string' } } } } : {}),
        };
      }
      for (const status of op.errors ?? []) responses[String(status)] = { $ref: '#/components/responses/Problem' };
      responses.default = { $ref: '#/components/responses/Problem' };
      const parameters = [...pathParams, ...queryParameters(op.query)];
      if (op.ifMatch)
        parameters.push({
          name: 'If-Match',
          in: 'header',
          required: false,
          schema: { type: 'string' },
          description: 'the ETag read before; a different current version is 412',
        } as never);
      item[method.toLowerCase()] = {
        summary: op.summary,
        operationId: `${method.toLowerCase()}${path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
        parameters,
        ...(op.body
          ? {
              requestBody: {
                required: true,
                content: {
                  'application/json': { schema: op.body },
                  ...(op.mergeBody ? { 'application/merge-patch+json': { schema: op.mergeBody } } : {}),
                },
              },
            }
          : {}),
        responses,
        ...(PUBLIC_PATHS.has(path) ? { security: [] } : {}),
        ...policyText(method, path),
      };
    }
    paths[path] = item;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'allot identifier API',
      version: '1',
      description:
        'Identifier pools (integer ranges, IP addresses, prefixes), idempotent allocation for an owner, reservations with leases, service instances with allocation specs, and external inventories. Errors are RFC 9457 problem details.',
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas: s.RESPONSE_SCHEMAS,
      responses: { Problem: { description: 'problem details', content: { 'application/problem+json': { schema: s.schemaRef('Problem') } } } },
      securitySchemes: tokenScheme(
        auth,
        'not needed: this server runs with --auth noauth (development, loopback only; every caller is an administrator)',
        'Roles: readers (`reader`, `service`) read; members (`member`, `service`) allocate, change and release values; admins (`admin`) define pools and allocation specs and look after external deliveries. ' +
          "A pool belongs to a project (`project_id`) or is shared (null): a caller sees and uses its own project's pools and the shared ones, and another project's pool or value is a 404 — unless `ids:all_projects` (admins, the system scope, services). " +
          "Each operation's `x-policy` names its rule and default check string; operators change them with a policy file.",
      ),
    },
    // under noauth nobody is verified: no operation needs the token
    security: auth === 'keystone' ? [{ token: [] }] : [],
  };
}
