// Ironic's wire format for errors, the one place an error becomes a bare-metal response.
// The body is always {"error_message": "<a JSON document as a string>"}; the inner document is
// one of two shapes, as the reference Ironic answers:
//   - Ironic's own faults:      {"faultcode": "Client"|"Server", "faultstring": …, "debuginfo": null}
//   - the web framework's:      {"code": N, "title": …, "description": …}
//     for routing, method and version errors (`frameworkError`).
// The inner document is written the way Python's json.dumps writes it (", " and ": " separators,
// non-ASCII escaped), because that is what clients have always seen.
//
// Services and stores raise domain errors (a stable code and the facts); `translate` below is the
// one table that gives each its status and Ironic's words. Routes refuse malformed requests with
// the helpers here directly.
import { STATUS_CODES } from 'node:http';
import { DomainError } from '../core/errors.js';
import type { BaremetalDomainErrors, BaremetalErrorCode } from './core/domain-errors.js';
import { pyRepr } from '../core/json-schema.js';
import { ApiError, HTTP, type HttpStatus } from '../http/errors.js';
import type { ErrorContext, RenderedError } from '../http/pipeline.js';

/** Stable codes of bare-metal errors (what tests and logs branch on; not on the wire). */
export const CODES = {
  client: 'baremetal.client',
  framework: 'baremetal.framework',
} as const;

/** An Ironic fault (faultcode Client for 4xx, Server for 5xx), for a request the route refuses. */
export const ironicError = (status: HttpStatus, message: string, code: string = CODES.client) => new ApiError(status, code, message);
export const badRequest = (message: string) => ironicError(400, message);
/**
 * Ironic's 406 for a field, parameter or verb newer than the request: "Request not acceptable.",
 * naming the version where Ironic names it (most list filters).
 */
export const notAcceptable = (minimal?: string) =>
  ironicError(406, minimal ? `Request not acceptable. The minimal required API version should be ${minimal}` : 'Request not acceptable.');

/**
 * A web-framework error (routing, method, version negotiation). `versionRangeOnly` marks the 406
 * of negotiation, which carries the min/max headers but no negotiated version.
 */
export const frameworkError = (status: HttpStatus, description: string, extra: { versionRangeOnly?: boolean; allow?: string[] } = {}) =>
  new ApiError(status, CODES.framework, description, extra);

// ---- domain errors ---------------------------------------------------------------------------

type Wording = [HttpStatus, string];

const allowedStates = (p: { allowed: readonly string[] }) => p.allowed.join(', ');
const backfill = (p: { node: string }, reason: string) => `Cannot backfill an allocation for node ${p.node}: ${reason}`;

/** Each domain code of the bare-metal services (core/domain-errors.ts), worded as Ironic words it. */
const DOMAIN: { [C in BaremetalErrorCode]: (p: BaremetalDomainErrors[C], op: ErrorContext) => Wording } = {
  // nodes
  // a node named in an allocation's body or filter is the request's fault (400), elsewhere a 404
  node_not_found: (p, op) => [op.route === '/v1/allocations' || op.route === '/allocations' ? 400 : 404, `Node ${p.ident} could not be found.`],
  node_locked: (p) => [409, `Node ${p.node} is locked by host ${p.host}, please retry after the current operation is completed.`],
  node_uuid_taken: (p) => [409, `A node with UUID ${p.uuid} already exists.`],
  node_name_taken: (p) => [409, `A node with name ${p.name} already exists.`],
  node_changed_concurrently: () => [409, 'The node was changed concurrently (a name or instance_uuid now in use); retry.'],
  instance_associated: (p) => [409, `Instance ${p.instance} is already associated with a node, it cannot be associated with this other node ${p.node}`],
  node_associated: (p) => [409, `Node ${p.node} is associated with instance ${p.instance}.`],
  update_not_allowed: (p) => {
    if (p.what === 'interfaces')
      return [
        409,
        `Node ${p.node} can not have ${p.fields.join(', ')} updated unless it is in one of allowed (${allowedStates(p)}) states or in maintenance mode.`,
      ];
    if (p.what === 'resource_class')
      return [409, `Node ${p.node} can not have resource_class updated unless it is in one of allowed (${allowedStates(p)}) states.`];
    return [
      409,
      `Node ${p.node} with an allocation can not have instance_uuid removed unless it is in one of allowed (${allowedStates(p)}) states or in maintenance mode.`,
    ];
  },
  owner_change_active: (p) => [409, `Cannot update owner of node "${p.node}" while it is in state "active".`],
  owner_change_allocated: (p) => [409, `Cannot update owner of node "${p.node}" while it is allocated to an allocation with an  owner.`],
  resource_class_allocated: (p) => [409, `Node ${p.node} can not have resource_class updated while it has an allocation (${p.allocation}).`],
  protect_not_allowed: (p) => [409, `Node ${p.node} can only be made protected in provision states 'active' or 'rescue', the current state is '${p.state}'`],
  retire_not_allowed: (p) => [409, `Node ${p.node} can not have 'retired' set in provision state '${p.state}', the current state is '${p.state}'`],
  reason_without_flag: (p) => [400, `The ${p.flag}_reason field can only be set when ${p.flag} is True`],
  node_protected: (p) => [403, `Node ${p.node} is protected and cannot be undeployed, rebuilt or deleted`],
  delete_not_allowed: (p) => [
    409,
    `Can not delete node "${p.node}" while it is in provision state "${p.state}". Valid provision states to perform deletion are: "${allowedStates(p)}", or set the node into maintenance mode`,
  ],
  too_many_traits: (p) => [
    400,
    `Could not modify traits for node ${p.node} as it would exceed the maximum number of traits per node (${p.count} vs. ${p.max})`,
  ],
  node_trait_not_found: (p) => [404, `Node ${p.node} doesn't have a trait '${p.trait}'`],
  node_in_maintenance: (p) => [400, `The provisioning operation can't be performed on node ${p.node} because it's in maintenance mode.`],
  invalid_provision_action: (p) => [400, `The requested action "${p.action}" can not be performed on node "${p.node}" while it is in state "${p.state}".`],
  invalid_power_action: (p) => [
    400,
    `The requested action "${p.action}" can not be performed on node "${p.node}" while it is in state "${p.state ?? 'None'}".`,
  ],
  power_target_too_new: () => [406, 'Request not acceptable.'],
  node_chassis_not_found: (p) => [400, `Chassis ${p.ident} could not be found.`],
  // chassis, port groups, ports
  chassis_not_found: (p) => [404, `Chassis ${p.ident} could not be found.`],
  chassis_uuid_taken: (p) => [409, `A chassis with UUID ${p.uuid} already exists.`],
  chassis_not_empty: (p) => [400, `Cannot complete the requested action because chassis ${p.chassis} contains nodes.`],
  // the node a port or port group body names
  parent_node_not_found: (p) => [400, `Node ${p.ident} could not be found.`],
  portgroup_not_found: (p) => [404, `Portgroup ${p.ident} could not be found.`],
  portgroup_uuid_taken: (p) => [409, `A portgroup with UUID ${p.uuid} already exists.`],
  portgroup_name_taken: (p) => [409, `A portgroup with name ${p.name} already exists.`],
  portgroup_address_taken: (p) => [409, `A portgroup with MAC address ${p.mac} already exists.`],
  portgroup_changed_concurrently: () => [409, 'The port group was changed concurrently (a name or address now in use); retry.'],
  portgroup_not_empty: (p) => [400, `Cannot complete the requested action because portgroup ${p.portgroup} contains ports.`],
  port_not_found: (p) => [404, `Port ${p.ident} could not be found.`],
  port_uuid_taken: (p) => [409, `A port with UUID ${p.uuid} already exists.`],
  port_address_taken: (p) => [409, `A port with MAC address ${p.mac} already exists.`],
  port_changed_concurrently: () => [409, 'The port was changed concurrently (its address now in use); retry.'],
  port_portgroup_not_found: (p) => [400, `Portgroup ${p.ident} could not be found.`],
  portgroup_of_other_node: () => [400, 'Port can not be added to a portgroup belonging to a different node.'],
  portgroup_no_standalone: (p) => [
    409,
    `Port group ${p.portgroup} doesn't support standalone ports. This port cannot be created as a member of that portgroup as the port's 'pxe_enabled' field was set to True.`,
  ],
  port_physnet_mismatch: (p) => [
    409,
    `Port with physical network ${p.physnet ?? 'None'} cannot become a member of port group ${p.portgroup} which has ports in physical network ${p.portgroupPhysnet ?? 'None'}.`,
  ],
  volume_connector_not_found: (p) => [404, `Volume connector ${p.ident} could not be found.`],
  volume_target_not_found: (p) => [404, `Volume target ${p.ident} could not be found.`],
  volume_connector_uuid_taken: (p) => [409, `A volume connector with UUID ${p.uuid} already exists.`],
  volume_target_uuid_taken: (p) => [409, `A volume target with UUID ${p.uuid} already exists.`],
  volume_connector_taken: (p) => [409, `A volume connector with type ${p.type} and connector ID ${p.connectorId} already exists.`],
  volume_target_boot_index_taken: (p) => [409, `A volume target with boot index '${p.bootIndex}' for the same node already exists.`],
  invalid_state_requested: (p) => [
    400,
    `The requested action "${p.action}" can not be performed on node "${p.node}" while it is in state "${p.state ?? 'None'}".`,
  ],
  deploy_template_not_found: (p) => [404, `Deploy template ${p.ident} could not be found.`],
  deploy_template_uuid_taken: (p) => [409, `A deploy template with UUID ${p.uuid} already exists.`],
  deploy_template_name_taken: (p) => [409, `A deploy template with name ${p.name} already exists.`],
  deploy_template_changed_concurrently: () => [409, 'The deploy template was changed concurrently (its name now in use); retry.'],
  vif_no_free_port: (p) => [400, `Unable to attach VIF ${p.vif}, not enough free physical ports.`],
  vif_already_attached: (p) => [409, `Unable to attach VIF because VIF ${p.vif} is already attached to Ironic ${p.kind} ${p.uuid}`],
  // JSON Patch
  patch_failed: (p) => [400, `Couldn't apply patch '${pyRepr(p.op)}'. Reason: ${p.reason}`],
  patch_value_missing: (p) => [400, `'add' and 'replace' operations need a value: ${pyRepr(p.op)}`],
  // allocations
  allocation_not_found: (p) => [404, `Allocation ${p.ident} could not be found.`],
  allocation_uuid_taken: (p) => [409, `An allocation with UUID ${p.uuid} already exists.`],
  allocation_name_taken: (p) => [409, p.name === null ? 'An allocation with that name already exists.' : `An allocation with name ${p.name} already exists.`],
  allocation_uuid_is_instance: (p) => [409, `Instance ${p.uuid} is already associated with a node; an allocation cannot have that UUID.`],
  allocation_changed_concurrently: () => [409, 'The allocation changed concurrently; retry.'],
  candidate_nodes_not_found: (p) => [400, `Nodes cannot be found: ${p.idents.join(', ')}`],
  node_allocation_not_found: (p) => [404, `Allocation for node ${p.ident} was not found`],
  // allot: a service instance of the identifier API holds it (docs/ids.md)
  allocation_held: (p) => [
    409,
    `Cannot remove allocation ${p.allocation}: it is held by ${p.held_by}, which releases it (terminate the instance or change its attributes).`,
  ],
  deallocation_refused: (p) => [
    409,
    p.reason === 'active'
      ? `Cannot remove allocation ${p.allocation} for node ${p.node}, because the node is active (and maintenance mode is off)`
      : `Cannot remove allocation ${p.allocation} for node ${p.node}, because the node is in state ${p.state} where updates are not allowed (and maintenance mode is off)`,
  ],
  backfill_node_allocated: (p) => [409, backfill(p, `it already has allocation ${p.allocation}.`)],
  backfill_node_not_active: (p) => [409, backfill(p, `Node must be in the "active" state, but the current state is "${p.state}"`)],
  backfill_mismatch: (p) => {
    const problems: string[] = [];
    if (p.resourceClass) problems.push(`Resource class ${p.resourceClass[0]} does not match the requested resource class ${p.resourceClass[1]}`);
    if (p.traits) problems.push(`List of traits ${JSON.stringify(p.traits[0])} does not match the requested traits ${JSON.stringify(p.traits[1])}`);
    if (p.candidates) problems.push(`Candidate nodes must be empty or contain the target node, but got ${JSON.stringify(p.candidates)}`);
    return [400, backfill(p, problems.join('; '))];
  },
  backfill_no_room: (p) => [409, backfill(p, 'its resource provider in Placement has no room (something else holds it).')],
  backfill_changed_concurrently: (p) => [409, backfill(p, 'it changed concurrently; retry.')],
  // a write that lost its race more often than --max-attempts allows
  concurrent_update: (p) => [409, `The change conflicted with ${p.what}; retry the request.`],
};

/** A domain error as Ironic answers it; null for anything else. */
export function translate(err: unknown, context: ErrorContext): ApiError | null {
  if (!(err instanceof DomainError) || !Object.hasOwn(DOMAIN, err.code)) return null;
  // the code is one of bare metal's, raised with its facts (baremetalDomainError checks them)
  const word = DOMAIN[err.code as BaremetalErrorCode] as (p: Record<string, unknown>, op: ErrorContext) => Wording;
  const [status, message] = word(err.params, context);
  return new ApiError(status, `baremetal.${err.code}`, message);
}

// ---- rendering -------------------------------------------------------------------------------

/** The pipeline's refusals that Ironic's web framework (not Ironic itself) answers, and what they say. */
const FRAMEWORK: Record<string, (err: ApiError) => string> = {
  // routing errors say nothing, unless a version gate explains itself
  [HTTP.notFound]: (err) => (err.extra.versionGate ? err.message : ''),
  [HTTP.methodNotAllowed]: (err) => (err.extra.versionGate ? err.message : ''),
  [HTTP.notImplemented]: (err) => err.message,
  [HTTP.unsupportedMediaType]: (err) => err.message,
  [HTTP.badUrl]: (err) => err.message,
  [HTTP.uriTooLong]: (err) => err.message,
  [HTTP.headersTooLarge]: (err) => err.message,
  [HTTP.bodyTooLarge]: () => 'The request body is larger than this server accepts.',
};

export function renderError(err: ApiError, _context?: ErrorContext): RenderedError {
  const status = err.status;
  const framework = err.code === CODES.framework ? err.message : FRAMEWORK[err.code]?.(err);
  const inner =
    framework !== undefined
      ? { code: status, title: STATUS_CODES[status] ?? 'Error', description: framework }
      : { faultcode: status >= 500 ? 'Server' : 'Client', faultstring: err.message, debuginfo: null };
  return { status, contentType: 'application/json', body: pythonJson({ error_message: pythonJson(inner) }) };
}

/** JSON as Python's json.dumps writes it by default. */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`);
  return `{${entries.join(', ')}}`;
}
