// The OpenAPI 3.1 document of the Ironic-compatible API allot serves, at the newest microversion:
// paths from the route table (api.ts), request bodies from the schemas the handlers validate with,
// errors in Ironic's {"error_message": "<JSON text>"} format.
import type { JsonSchema } from '../core/json-schema.js';
import { BAREMETAL_RULES } from '../auth/rules/baremetal.js';
import { type ApiDocumentation, type DocumentedEndpoint, type OperationDoc, type SecurityMode, buildApiDocument } from '../http/openapi.js';
import type { RouteTable } from '../http/router.js';
import { MAX_VERSION } from './microversion.js';
import type { Endpoint } from './request.js';
import * as schemas from './schemas.js';

const listQuery = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: {
    limit: { type: 'integer' },
    marker: { type: 'string' },
    sort_key: { type: 'string' },
    sort_dir: { type: 'string', enum: ['asc', 'desc'] },
    fields: { type: 'string' },
    ...extra,
  },
});

const text: JsonSchema = { type: 'string' };
const flag: JsonSchema = { type: 'boolean' };
const NODE_FILTERS: Record<string, JsonSchema> = {
  instance_uuid: text,
  maintenance: flag,
  associated: flag,
  retired: flag,
  sharded: flag,
  provision_state: text,
  driver: text,
  resource_class: text,
  conductor_group: text,
  conductor: text,
  fault: text,
  owner: text,
  lessee: text,
  description_contains: text,
  shard: text,
};

/**
 * What each operation's documentation says, by `METHOD /template`. Unlike Placement's and the
 * identifier API's endpoints, bare metal's do not declare it yet: documented() joins the two.
 */
export const BAREMETAL_OPERATIONS: Record<string, OperationDoc> = {
  'GET /': { summary: 'the root document: API versions', ok: [200] },
  'GET /openapi.json': { summary: 'this document', ok: [200] },
  'GET /v1': { summary: 'the v1 document: links to the resources', ok: [200] },
  'GET /v1/nodes': { summary: 'list nodes', query: listQuery({ ...NODE_FILTERS, detail: { type: 'boolean' } }), ok: [200] },
  'POST /v1/nodes': { summary: 'enroll a node (fake-hardware)', body: schemas.nodeCreate, ok: [201] },
  'GET /v1/nodes/detail': {
    summary: 'list nodes with every field',
    query: {
      type: 'object',
      properties: {
        ...NODE_FILTERS,
        limit: { type: 'integer' },
        marker: { type: 'string' },
        sort_key: { type: 'string' },
        sort_dir: { type: 'string', enum: ['asc', 'desc'] },
      },
    },
    ok: [200],
  },
  'GET /v1/nodes/:node': { summary: 'a node (by uuid or name)', ok: [200] },
  'PATCH /v1/nodes/:node': { summary: 'change a node (JSON Patch)', body: schemas.patch, ok: [200] },
  'DELETE /v1/nodes/:node': { summary: 'delete a node', ok: [204] },
  'GET /v1/nodes/:node/states': { summary: "a node's power and provision states", ok: [200] },
  'PUT /v1/nodes/:node/states/provision': {
    summary: 'move a node through the provision state machine (manage, provide, deploy, …)',
    body: schemas.provision,
    ok: [202],
  },
  'PUT /v1/nodes/:node/states/power': { summary: "change a node's power state", body: schemas.power, ok: [202] },
  'PUT /v1/nodes/:node/maintenance': { summary: 'put a node in maintenance', body: schemas.maintenance, ok: [202] },
  'DELETE /v1/nodes/:node/maintenance': { summary: 'take a node out of maintenance', ok: [202] },
  'GET /v1/nodes/:node/traits': { summary: "a node's traits", ok: [200] },
  'PUT /v1/nodes/:node/traits': { summary: "replace a node's traits", body: schemas.nodeTraits, ok: [204] },
  'DELETE /v1/nodes/:node/traits': { summary: "remove all of a node's traits", ok: [204] },
  'PUT /v1/nodes/:node/traits/:trait': { summary: 'add one trait', ok: [204] },
  'DELETE /v1/nodes/:node/traits/:trait': { summary: 'remove one trait', ok: [204] },
  'GET /v1/nodes/:node/allocation': { summary: "the node's allocation", ok: [200] },
  'DELETE /v1/nodes/:node/allocation': { summary: "delete the node's allocation", ok: [204] },
  'GET /v1/allocations': { summary: 'list allocations', query: listQuery({ node: text, resource_class: text, state: text, owner: text }), ok: [200] },
  'POST /v1/allocations': {
    summary: 'request an allocation (asynchronous: answered allocating, then active or error; Prefer: wait=N answers the outcome)',
    body: schemas.allocationCreate,
    ok: [201],
    headers: [
      {
        name: 'Prefer',
        description:
          'RFC 7240: `wait=N` answers the allocation once active or failed, if that comes within N seconds (at most --max-prefer-wait); without it, the allocation as created (Ironic)',
        example: 'wait=10',
      },
    ],
    responseHeaders: {
      Location: 'the new allocation',
      'Preference-Applied': '`wait=N` when the answer waited for the outcome (N as waited)',
    },
  },
  'GET /v1/allocations/:allocation': { summary: 'an allocation (by uuid or name)', ok: [200] },
  'PATCH /v1/allocations/:allocation': { summary: "change an allocation's name or extra (JSON Patch)", body: schemas.patch, ok: [200] },
  'DELETE /v1/allocations/:allocation': { summary: 'delete an allocation (frees its node)', ok: [204] },
  'GET /v1/nodes/:node/validate': { summary: "validate a node's interfaces (fake hardware passes; a no-* interface is not supported)", ok: [200] },
  'GET /v1/nodes/:node/vifs': { summary: 'the VIFs attached to a node (1.28)', ok: [200] },
  'POST /v1/nodes/:node/vifs': { summary: 'attach a VIF (recorded on a free port or port group)', body: schemas.vif, ok: [204] },
  'DELETE /v1/nodes/:node/vifs/:vif': { summary: 'detach a VIF', ok: [204] },
  'GET /v1/nodes/:node/management/boot_device': { summary: "the node's boot device (fake: pxe)", ok: [200] },
  'PUT /v1/nodes/:node/management/boot_device': { summary: 'set the boot device (fake: pxe only, nothing changes)', ok: [204] },
  'GET /v1/nodes/:node/management/boot_device/supported': { summary: 'the supported boot devices', ok: [200] },
  'GET /v1/nodes/:node/states/console': { summary: "the node's console state", ok: [200] },
  'PUT /v1/nodes/:node/states/console': { summary: 'enable or disable the console (recorded)', ok: [202] },
  'PUT /v1/nodes/:node/states/raid': { summary: 'set the target RAID configuration (1.12; recorded)', body: schemas.raidConfig, ok: [204] },
  'GET /v1/nodes/:node/ports': { summary: "a node's ports", query: listQuery({ address: text, detail: flag }), ok: [200] },
  'GET /v1/nodes/:node/ports/detail': { summary: "a node's ports with every field", ok: [200] },
  'GET /v1/nodes/:node/portgroups': { summary: "a node's port groups (1.24)", query: listQuery({ address: text, detail: flag }), ok: [200] },
  'GET /v1/nodes/:node/portgroups/detail': { summary: "a node's port groups with every field (1.24)", ok: [200] },
  'GET /v1/chassis': { summary: 'list chassis', query: listQuery({ detail: flag }), ok: [200] },
  'POST /v1/chassis': { summary: 'create a chassis', body: schemas.chassis, ok: [201] },
  'GET /v1/chassis/detail': { summary: 'list chassis with every field', ok: [200] },
  'GET /v1/chassis/:chassis': { summary: 'a chassis', ok: [200] },
  'PATCH /v1/chassis/:chassis': { summary: "change a chassis's description or extra (JSON Patch)", body: schemas.patch, ok: [200] },
  'DELETE /v1/chassis/:chassis': { summary: 'delete a chassis (one without nodes)', ok: [204] },
  'GET /v1/chassis/:chassis/nodes': { summary: 'the nodes in a chassis', query: listQuery({ ...NODE_FILTERS, detail: flag }), ok: [200] },
  'GET /v1/chassis/:chassis/nodes/detail': { summary: 'the nodes in a chassis with every field', ok: [200] },
  'GET /v1/ports': {
    summary: 'list ports',
    query: listQuery({ node: text, node_uuid: text, address: text, portgroup: text, shard: text, detail: flag }),
    ok: [200],
  },
  'POST /v1/ports': { summary: 'create a port on a node', body: schemas.port, ok: [201] },
  'GET /v1/ports/detail': { summary: 'list ports with every field', ok: [200] },
  'GET /v1/ports/:port': { summary: 'a port', ok: [200] },
  'PATCH /v1/ports/:port': { summary: 'change a port (JSON Patch)', body: schemas.patch, ok: [200] },
  'DELETE /v1/ports/:port': { summary: 'delete a port', ok: [204] },
  'GET /v1/portgroups': { summary: 'list port groups (1.23)', query: listQuery({ node: text, address: text, shard: text, detail: flag }), ok: [200] },
  'POST /v1/portgroups': { summary: 'create a port group on a node (1.23)', body: schemas.portgroup, ok: [201] },
  'GET /v1/portgroups/detail': { summary: 'list port groups with every field (1.23)', ok: [200] },
  'GET /v1/portgroups/:portgroup': { summary: 'a port group (by uuid or name)', ok: [200] },
  'PATCH /v1/portgroups/:portgroup': { summary: 'change a port group (JSON Patch)', body: schemas.patch, ok: [200] },
  'DELETE /v1/portgroups/:portgroup': { summary: 'delete a port group (one without ports)', ok: [204] },
  'GET /v1/portgroups/:portgroup/ports': { summary: "a port group's ports (1.24)", query: listQuery({ address: text, detail: flag }), ok: [200] },
  'GET /v1/portgroups/:portgroup/ports/detail': { summary: "a port group's ports with every field (1.24)", ok: [200] },
  'GET /v1/drivers': {
    summary: 'the hardware types: fake-hardware',
    query: { type: 'object', properties: { type: text, detail: flag, fields: text } },
    ok: [200],
  },
  'GET /v1/drivers/:driver': { summary: 'fake-hardware and its interfaces', ok: [200] },
  'GET /v1/drivers/:driver/properties': { summary: "the driver's properties", ok: [200] },
  'GET /v1/drivers/:driver/raid/logical_disk_properties': { summary: 'the properties of a RAID logical disk (1.12)', ok: [200] },
  'GET /v1/nodes/:node/volume': { summary: "links to a node's volume connectors and targets (1.32)", ok: [200] },
  'GET /v1/nodes/:node/volume/connectors': { summary: "a node's volume connectors", query: listQuery({ detail: flag }), ok: [200] },
  'GET /v1/nodes/:node/volume/targets': { summary: "a node's volume targets", query: listQuery({ detail: flag }), ok: [200] },
  'GET /v1/volume': { summary: 'links to volume connectors and targets (1.32)', ok: [200] },
  'GET /v1/volume/connectors': { summary: 'list volume connectors', query: listQuery({ node: text, detail: flag }), ok: [200] },
  'POST /v1/volume/connectors': { summary: 'create a volume connector', body: schemas.volumeConnector, ok: [201] },
  'GET /v1/volume/connectors/detail': { summary: 'list volume connectors with every field', ok: [200] },
  'GET /v1/volume/connectors/:volume': { summary: 'a volume connector', ok: [200] },
  'PATCH /v1/volume/connectors/:volume': { summary: 'change a volume connector (node powered off)', body: schemas.patch, ok: [200] },
  'DELETE /v1/volume/connectors/:volume': { summary: 'delete a volume connector (node powered off)', ok: [204] },
  'GET /v1/volume/targets': { summary: 'list volume targets', query: listQuery({ node: text, detail: flag }), ok: [200] },
  'POST /v1/volume/targets': { summary: 'create a volume target', body: schemas.volumeTarget, ok: [201] },
  'GET /v1/volume/targets/detail': { summary: 'list volume targets with every field', ok: [200] },
  'GET /v1/volume/targets/:volume': { summary: 'a volume target', ok: [200] },
  'PATCH /v1/volume/targets/:volume': { summary: 'change a volume target (node powered off)', body: schemas.patch, ok: [200] },
  'DELETE /v1/volume/targets/:volume': { summary: 'delete a volume target (node powered off)', ok: [204] },
  'GET /v1/deploy_templates': { summary: 'list deploy templates (1.55)', query: listQuery({ detail: flag }), ok: [200] },
  'POST /v1/deploy_templates': { summary: 'create a deploy template (its name is a trait)', body: schemas.deployTemplate, ok: [201] },
  'GET /v1/deploy_templates/detail': { summary: 'list deploy templates with every field', ok: [200] },
  'GET /v1/deploy_templates/:template': { summary: 'a deploy template (by uuid or name)', ok: [200] },
  'PATCH /v1/deploy_templates/:template': { summary: 'change a deploy template (JSON Patch)', body: schemas.patch, ok: [200] },
  'DELETE /v1/deploy_templates/:template': { summary: 'delete a deploy template', ok: [204] },
  'GET /v1/conductors': { summary: 'list conductors and whether they are alive', query: listQuery({ detail: { type: 'boolean' } }), ok: [200] },
  'GET /v1/conductors/:hostname': { summary: 'a conductor', ok: [200] },
};

const ERROR: JsonSchema = {
  type: 'object',
  properties: {
    error_message: {
      type: 'string',
      description: 'a JSON document as text: {"faultcode", "faultstring", "debuginfo"} or, for routing and version errors, {"code", "title", "description"}',
    },
  },
  required: ['error_message'],
};

export function baremetalDocument(routes: RouteTable<Endpoint>, serverUrl: string, security: SecurityMode): Record<string, unknown> {
  const documentation: ApiDocumentation = {
    title: 'allot: Ironic-compatible bare-metal API',
    version: MAX_VERSION,
    description: `The subset of the OpenStack Bare Metal (Ironic) API allot serves — nodes, allocations, conductors, chassis, ports, port groups, volume connectors and targets, drivers, deploy templates — at microversion ${MAX_VERSION}.`,
    routes: documented(routes),
    rules: BAREMETAL_RULES,
    error: { mediaType: 'application/json', schema: ERROR, description: "Ironic's error document" },
    token: { noauth: 'noauth (development): not verified; every caller is a system-scoped administrator' },
    requestHeaders: [
      { name: 'X-OpenStack-Ironic-API-Version', description: 'the microversion asked for (default the minimum; `latest`)', example: MAX_VERSION },
    ],
  };
  return buildApiDocument(documentation, serverUrl, security);
}

/** The route table with each endpoint's documentation joined in (a test checks that none is missing). */
function documented(routes: RouteTable<Endpoint>): RouteTable<DocumentedEndpoint> {
  return Object.fromEntries(
    Object.entries(routes).map(([template, byMethod]) => [
      template,
      Object.fromEntries(
        Object.entries(byMethod).map(([method, endpoint]) => [method, { ...BAREMETAL_OPERATIONS[`${method} ${template}`], ...endpoint } as DocumentedEndpoint]),
      ),
    ]),
  );
}
