// The OpenAPI 3.1 document of the Placement API allot serves, at the newest microversion: paths
// from the route table (api.ts), request bodies and query strings from the schemas the handlers
// validate with (schemas.ts, each table's newest entry), errors in Placement's format.
import type { JsonSchema } from '../core/json-schema.js';
import { Microversion, byVersion } from '../core/microversion.js';
import { type ApiDocumentation, type OperationDoc, type SecurityMode, buildApiDocument } from '../http/openapi.js';
import type { RouteTable } from '../http/router.js';
import { MAX_VERSION } from './microversion.js';
import * as s from './schemas.js';

const newest = (table: Record<string, JsonSchema>): JsonSchema => byVersion(Microversion.parse(MAX_VERSION), table);

const candidatesQuery = (): JsonSchema => {
  const q = newest(s.candidatesQuery);
  // The numbered groups (resources1, required_ACCEL, …) are patternProperties; the document lists the unnamed group.
  return {
    ...q,
    properties: {
      resources: { type: 'string' },
      required: { type: 'string' },
      member_of: { type: 'string' },
      in_tree: { type: 'string' },
      ...q.properties,
      [s.ALLOT_STRATEGY]: s.strategyQuery,
    },
  };
};

export const PLACEMENT_OPERATIONS: Record<string, OperationDoc> = {
  'GET /': { summary: 'the version document: the microversion range', ok: [200] },
  'GET /openapi.json': { summary: 'this document', ok: [200] },
  'GET /resource_providers': {
    summary: 'list resource providers (filters: name, uuid, member_of, resources, in_tree, required)',
    query: newest(s.providerListQuery),
    ok: [200],
  },
  'POST /resource_providers': { summary: 'create a resource provider', body: newest(s.providerCreate), ok: [200] },
  'GET /resource_providers/:uuid': { summary: 'a resource provider', ok: [200] },
  'PUT /resource_providers/:uuid': { summary: "change a provider's name or parent", body: newest(s.providerUpdate), ok: [200] },
  'DELETE /resource_providers/:uuid': { summary: 'delete a provider without allocations or children', ok: [204] },
  'GET /resource_providers/:uuid/inventories': { summary: "a provider's inventories", ok: [200] },
  'POST /resource_providers/:uuid/inventories': { summary: 'add the inventory of one resource class', body: s.inventoryCreate, ok: [201] },
  'PUT /resource_providers/:uuid/inventories': { summary: "replace all of a provider's inventories", body: s.inventoriesReplace, ok: [200] },
  'DELETE /resource_providers/:uuid/inventories': { summary: "delete all of a provider's inventories", ok: [204] },
  'GET /resource_providers/:uuid/inventories/:resource_class': { summary: 'the inventory of one class', ok: [200] },
  'PUT /resource_providers/:uuid/inventories/:resource_class': { summary: 'update the inventory of one class', body: s.inventoryUpdate, ok: [200] },
  'DELETE /resource_providers/:uuid/inventories/:resource_class': { summary: 'delete the inventory of one class', ok: [204] },
  'GET /resource_providers/:uuid/usages': { summary: "a provider's usages per class", ok: [200] },
  'GET /resource_providers/:uuid/aggregates': { summary: "a provider's aggregates", ok: [200] },
  'PUT /resource_providers/:uuid/aggregates': { summary: "replace a provider's aggregates", body: newest(s.providerAggregates), ok: [200] },
  'GET /resource_providers/:uuid/traits': { summary: "a provider's traits", ok: [200] },
  'PUT /resource_providers/:uuid/traits': { summary: "replace a provider's traits", body: s.providerTraits, ok: [200] },
  'DELETE /resource_providers/:uuid/traits': { summary: "remove all of a provider's traits", ok: [204] },
  'GET /resource_providers/:uuid/allocations': { summary: 'the allocations against a provider, by consumer', ok: [200] },
  'GET /resource_classes': { summary: 'list resource classes', ok: [200] },
  'POST /resource_classes': { summary: 'create a custom resource class', body: s.customResourceClass, ok: [201] },
  'GET /resource_classes/:name': { summary: 'a resource class', ok: [200] },
  'PUT /resource_classes/:name': { summary: 'create a custom resource class by name (exists: 204)', ok: [201, 204] },
  'DELETE /resource_classes/:name': { summary: 'delete an unused custom resource class', ok: [204] },
  'GET /traits': { summary: 'list traits (name=startswith:/in:, associated)', query: s.traitListQuery, ok: [200] },
  'GET /traits/:name': { summary: 'whether a trait exists', ok: [204] },
  'PUT /traits/:name': { summary: 'create a custom trait (exists: 204)', ok: [201, 204] },
  'DELETE /traits/:name': { summary: 'delete an unused custom trait', ok: [204] },
  'POST /allocations': { summary: 'write the allocations of several consumers at once', body: newest(s.allocationsPost), ok: [204] },
  'GET /allocations/:consumer_uuid': { summary: "a consumer's allocations", ok: [200] },
  'PUT /allocations/:consumer_uuid': {
    summary: "replace a consumer's allocations (the claim; consumer_generation guards it)",
    body: newest(s.allocationsPut),
    ok: [204],
  },
  'DELETE /allocations/:consumer_uuid': { summary: "delete a consumer's allocations", ok: [204] },
  'GET /usages': { summary: "a project's (and user's) usages", query: newest(s.usagesQuery), ok: [200] },
  'GET /allocation_candidates': { summary: 'allocation candidates and provider summaries for resource groups', query: candidatesQuery(), ok: [200] },
  'POST /reshaper': { summary: 'move inventories and allocations atomically', body: newest(s.reshaper), ok: [204] },
};

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

export function placementDocument(routes: RouteTable<{ public?: boolean }>, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const documentation: ApiDocumentation = {
    title: 'allot: OpenStack Placement API',
    version: MAX_VERSION,
    description: `The subset of the OpenStack Placement API allot serves, at microversion ${MAX_VERSION}. Errors are Placement's {"errors": [...]} documents.`,
    routes,
    operations: PLACEMENT_OPERATIONS,
    error: { mediaType: 'application/json', schema: ERROR, description: "Placement's error document" },
    requestHeaders: [{ name: 'OpenStack-API-Version', description: 'the microversion asked for (default 1.0; `latest`)', example: `placement ${MAX_VERSION}` }],
  };
  return buildApiDocument(documentation, serverUrl, { ...security, tokenUnderNoauth: true });
}
