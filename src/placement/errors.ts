// Placement's wire format for errors, the one place an error becomes a Placement response:
//   {"errors": [{"status", "title", "detail", "request_id", "code" (1.23+)}]}
// `detail` is laid out as Placement's WSGI stack lays it out ("<explanation>\n\n <message>  "),
// because some clients look for substrings in it.
//
// The stores and services raise domain errors (core/domain-errors.ts: a stable code and the
// facts); DOMAIN below is the one table that gives each its status, Placement's error code and
// Placement's words — which, as in Placement's own handlers, may differ with the operation that met
// the error. Its type lists every code, so a code left out or misspelt does not compile.
import { STATUS_CODES } from 'node:http';
import type { Errors } from '../client/placement-wire.js';
import { DomainError } from '../core/errors.js';
import { accepts } from '../http/accept.js';
import { ApiError, HTTP, type HttpStatus } from '../http/errors.js';
import type { ErrorContext, RenderedError } from '../http/pipeline.js';
import type { ParentProblem, PlacementDomainErrors, PlacementErrorCode } from './core/domain-errors.js';

/** Error codes published in the Placement API reference; never change them. */
export const CODES = {
  undefined: 'placement.undefined_code',
  inventoryInUse: 'placement.inventory.inuse',
  concurrentUpdate: 'placement.concurrent_update',
  duplicateName: 'placement.duplicate_name',
  providerInUse: 'placement.resource_provider.inuse',
  cannotDeleteParent: 'placement.resource_provider.cannot_delete_parent',
  providerNotFound: 'placement.resource_provider.not_found',
  duplicateKey: 'placement.query.duplicate_key',
  badValue: 'placement.query.bad_value',
  missingValue: 'placement.query.missing_value',
} as const;

/** An error code Placement answers with (1.23+). */
type PlacementCode = (typeof CODES)[keyof typeof CODES];

const EXPLANATIONS: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  401: 'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  406: 'The resource could not be generated that was acceptable to your browser.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The request is larger than the server is willing or able to process.',
  414: 'The request URI was too long for this server.',
  415: 'The request media type is not supported by this server.',
  431: 'The request header fields were too large.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  501: 'The server does not support the method of the request.',
  503: 'The server is currently unavailable. Please try again at a later time.',
  507: 'There was not enough space to save the resource',
};

export const placementError = (status: HttpStatus, message: string, code: PlacementCode = CODES.undefined) => new ApiError(status, code, message);

/** What a domain error becomes: status, Placement's code, message. */
type Wording = [HttpStatus, PlacementCode, string];
/** The operation that met the error: Placement words some errors per handler. */
type Operation = Pick<ErrorContext, 'method' | 'route'>;

const inUse = (p: PlacementDomainErrors['inventory_in_use']) => `Inventory for '${p.classes.join(', ')}' on resource provider '${p.provider}' in use.`;

/** Each domain code Placement can meet, worded as Placement's handler for that operation words it. */
const DOMAIN: { [C in PlacementErrorCode]: (p: PlacementDomainErrors[C], op: Operation) => Wording } = {
  // providers
  provider_not_found: (p, op) => [
    404,
    CODES.undefined,
    `No resource provider with uuid ${p.uuid} found${op.method === 'DELETE' && op.route === '/resource_providers/:uuid' ? ' for delete' : ''}`,
  ],
  provider_name_taken: (p) => [409, CODES.duplicateName, `Conflicting resource provider name: ${p.name} already exists.`],
  provider_uuid_taken: (p) => [409, CODES.duplicateName, `Conflicting resource provider uuid: ${p.uuid} already exists.`],
  invalid_parent: (p, op) => [
    400,
    CODES.undefined,
    op.method === 'POST'
      ? `Unable to create resource provider "${p.name}", ${p.uuid}: ${PARENT_PROBLEMS[p.problem]}`
      : `Unable to save resource provider ${p.uuid}: Object action update failed because: ${PARENT_PROBLEMS[p.problem]}`,
  ],
  provider_generation_mismatch: (p, op) => [
    409,
    CODES.concurrentUpdate,
    op.route === '/reshaper'
      ? `resource provider generation conflict for provider ${p.uuid}: actual: ${p.actual}, given: ${p.given}`
      : op.route?.endsWith('/traits') || op.route?.endsWith('/aggregates')
        ? "Resource provider's generation already changed. Please update the generation and try again."
        : 'resource provider generation conflict',
  ],
  provider_changed_concurrently: (p) => [
    409,
    CODES.concurrentUpdate,
    `resource provider generation conflict: provider ${p.uuid} was changed concurrently; read it again and retry.`,
  ],
  provider_has_allocations: (p) => [409, CODES.providerInUse, `Unable to delete resource provider ${p.uuid}: Resource provider has allocations.`],
  provider_has_children: (p) => [409, CODES.cannotDeleteParent, `Unable to delete parent resource provider ${p.uuid}: It has child resource providers.`],
  // traits
  trait_not_found: (p) => [404, CODES.undefined, `No such trait(s): ${p.name}.`],
  unknown_traits: (p, op) => [
    400,
    CODES.undefined,
    op.method === 'GET' ? `No such trait(s): ${p.names.join(', ')}.` : `No such trait ${p.names.join(', ')}`, // GET: a list's `required`
  ],
  trait_is_standard: (p) => [400, CODES.undefined, `Cannot delete standard trait ${p.name}.`],
  trait_in_use: (p) => [409, CODES.undefined, `The trait ${p.name} is in use by a resource provider.`],
  // resource classes
  resource_class_not_found: (p, op) => {
    // a list's `resources` filter, and the class of a new inventory, are the client's request
    if (op.route === '/resource_providers') return [400, CODES.undefined, `Invalid resource class in resources parameter: No such resource class ${p.name}.`];
    if (op.route === '/resource_providers/:uuid/inventories' && op.method === 'POST') return [400, CODES.undefined, `No such resource class ${p.name}.`];
    return [404, CODES.undefined, `No such resource class ${p.name}.`];
  },
  resource_class_exists: (p, op) => [
    409,
    CODES.undefined,
    op.method === 'POST' ? `Conflicting resource class already exists: ${p.name}` : `Resource class already exists: ${p.name}`,
  ],
  resource_class_is_standard: (p, op) =>
    op.method === 'DELETE'
      ? [400, CODES.undefined, `Cannot delete standard resource class ${p.name}: Cannot delete standard resource class ${p.name}.`]
      : [400, CODES.undefined, `Cannot update standard resource class ${p.name}`],
  resource_class_in_use: (p) => [409, CODES.undefined, `Error in delete resource class: Class is in use in inventory: ${p.name}`],
  // inventories
  inventory_exists: (p) => [409, CODES.concurrentUpdate, `Update conflict: Inventory for '${p.class}' on resource provider '${p.provider}' already exists.`],
  inventory_not_found: (p, op) =>
    op.method === 'DELETE'
      ? [404, CODES.undefined, `No inventory of class ${p.class} found for delete`]
      : [400, CODES.undefined, `No inventory record with resource class for resource provider ${p.provider}: No inventory of class ${p.class} found.`],
  unknown_inventory_class: (p, op) =>
    op.route === '/reshaper'
      ? [400, CODES.undefined, `malformed reshaper data: No such resource class ${p.names.join(', ')}.`]
      : [400, CODES.undefined, `Unknown resource class in inventory for resource provider ${p.provider}: No such resource class ${p.names.join(', ')}.`],
  inventory_in_use: (p, op) => {
    // Placement words this per handler (and one handler even files it under concurrent_update).
    if (op.route === '/resource_providers/:uuid/inventories/:resource_class')
      return [409, CODES.concurrentUpdate, `Unable to delete inventory of class ${p.classes[0]}: ${inUse(p)}`];
    if (op.method === 'DELETE') return [409, CODES.inventoryInUse, inUse(p)];
    return [409, CODES.inventoryInUse, `update conflict: ${inUse(p)}`];
  },
  inventory_changed_concurrently: () => [409, CODES.concurrentUpdate, 'Update conflict: the inventory was changed concurrently; retry.'],
  // allocations
  unknown_resource_class: (p) => [400, CODES.undefined, `Unable to allocate inventory for consumer ${p.consumer}: No such resource class ${p.name}.`],
  allocation_provider_missing: (p, op) => [
    400,
    op.route === '/reshaper' ? CODES.providerNotFound : CODES.undefined,
    `Allocation for resource provider '${p.uuid}' that does not exist.`,
  ],
  reshape_provider_missing: (p) => [
    400,
    CODES.providerNotFound,
    `Resource provider ${p.uuid} in inventories not found: No resource provider with uuid ${p.uuid} found`,
  ],
  consumer_generation_conflict: (p) => [
    409,
    CODES.concurrentUpdate,
    // Python prints a missing generation as None, and a generation expected to be null as null.
    `consumer generation conflict - expected ${p.expected === null ? 'null' : p.expected} but got ${p.got === null || p.got === undefined ? (p.expected === null ? 'null' : 'None') : p.got}`,
  ],
  consumer_not_found: (p) => [404, CODES.undefined, `No allocations for consumer '${p.uuid}'`],
  resource_classes_changed: () => [409, CODES.undefined, 'Resource classes changed concurrently; retry.'],
  inventory_constraint_violated: (p) => [
    409,
    CODES.undefined,
    `Unable to allocate inventory: Unable to create allocation for '${p.class}' on resource provider '${p.provider}'. The requested amount would violate inventory constraints.`,
  ],
  inventory_invalid: (p) => [409, CODES.undefined, `Unable to allocate inventory: Inventory for '${p.class}' on resource provider '${p.provider}' invalid.`],
  capacity_exceeded: (p) => [
    409,
    CODES.undefined,
    `Unable to allocate inventory: Unable to create allocation for '${p.class}' on resource provider '${p.provider}'. The requested amount would exceed the capacity.`,
  ],
  concurrent_update: (p) => [409, CODES.concurrentUpdate, `The change conflicted with ${p.what}; retry the request.`],
  // allot: providers another service of this process owns (the bare-metal service's nodes)
  provider_owned: (p) => [
    409,
    CODES.undefined,
    `Unable to allocate inventory: resource provider(s) ${p.providers.map((u) => `'${u}'`).join(', ')} belong to ${p.owner}; allocations on them are made through that service.`,
  ],
  // allot: a consumer a service instance of the identifier API holds (docs/ids.md)
  consumer_held: (p) => [
    409,
    CODES.undefined,
    `Unable to change the allocations of consumer '${p.consumer}': it is held by ${p.held_by}, and changes only through its holder (release it there).`,
  ],
};

const PARENT_PROBLEMS: Record<ParentProblem, string> = {
  self: 'parent provider UUID cannot be same as UUID. Please set parent provider UUID to None.',
  missing: 'parent provider UUID does not exist.',
  unparent: 'un-parenting a provider is not currently allowed.',
  reparent: 're-parenting a provider is not currently allowed.',
  loop: 'creating loop in the provider tree is not allowed.',
};

/** A domain error as Placement answers it; null for anything else. */
export function translate(err: unknown, context: ErrorContext): ApiError | null {
  if (!(err instanceof DomainError) || !Object.hasOwn(DOMAIN, err.code)) return null;
  // the table's type ties each code to its params; the raiser (placementDomainError) did the same
  const word = DOMAIN[err.code as PlacementErrorCode] as (p: Record<string, unknown>, op: Operation) => Wording;
  const [status, code, message] = word(err.params, context);
  return new ApiError(status, code, message);
}

/** How an error is rendered for an Accept header: JSON unless the client clearly wants text. */
function errorMedia(accept: string | string[] | undefined): 'json' | 'html' | 'text' {
  const a = Array.isArray(accept) ? accept.join(', ') : accept;
  if (!a || accepts(a, 'application/json')) return 'json';
  if (accepts(a, 'text/html')) return 'html';
  return 'text';
}

/** The message Placement shows for the pipeline's own refusals (routing errors carry none). */
function messageOf(err: ApiError): string {
  switch (err.code) {
    case HTTP.notFound:
    case HTTP.methodNotAllowed:
      return '';
    case HTTP.unauthorized:
      return 'The request you have made requires authentication.';
    case HTTP.badJson:
      return `Malformed JSON: ${err.message}`;
    default:
      return err.message;
  }
}

export function renderError(err: ApiError, context: ErrorContext): RenderedError {
  const status = err.status;
  const title = STATUS_CODES[status] ?? 'Error';
  const message = messageOf(err);
  const explanation = status === 405 ? `The method ${context.method} is not allowed for this resource.` : (EXPLANATIONS[status] ?? '');
  const media = errorMedia(context.headers.accept);
  // webob strips the HTML it renders for JSON and text: every newline of the message becomes a
  // space (a schema error's pprint layout included), as clients that match the text expect.
  const flat = message.replace(/\r/g, '').replace(/\n/g, ' ');
  if (media === 'json') {
    const detail = flat ? `${explanation}\n\n ${flat}  ` : `${explanation}\n\n   `;
    const entry: Errors['errors'][number] = { status, title, detail, request_id: context.requestId };
    if (context.mv?.atLeast('1.23')) entry.code = err.code.startsWith('placement.') ? err.code : CODES.undefined;
    const body: Errors = { errors: [entry] };
    return { status, contentType: 'application/json', body: JSON.stringify(body) };
  }
  if (media === 'html') {
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return {
      status,
      contentType: 'text/html; charset=UTF-8',
      body: `<html>\n <head>\n  <title>${status} ${esc(title)}</title>\n </head>\n <body>\n  <h1>${status} ${esc(title)}</h1>\n  ${esc(explanation)}<br /><br />\n${esc(message)}\n\n\n </body>\n</html>`,
    };
  }
  return { status, contentType: 'text/plain; charset=UTF-8', body: `${status} ${title}\n\n${explanation}\n\n${flat}\n` };
}
