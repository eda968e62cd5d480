// The identifier API's errors: the one place an error becomes an RFC 9457
// `application/problem+json` body. Domain errors (core/domain-errors.ts: a code and its facts) get
// their status, problem code and wording from DOMAIN_ERRORS below; the pipeline's own refusals
// (http.*) and database faults are mapped in `codeFor`. `type` is a stable URN built from the
// stable `code`, so clients may branch on either; docs/ids.md lists every code.
import { STATUS_CODES } from 'node:http';
import { DomainError } from '../core/errors.js';
import { ApiError, HTTP, type HttpStatus } from '../http/errors.js';
import type { ErrorContext, RenderedError } from '../http/pipeline.js';
import type { ImportOutcome } from '../client/ids-wire.js';
import type { IdsDomainErrors, IdsErrorCode } from './core/domain-errors.js';

const PROBLEM_TYPE_PREFIX = 'urn:allot:problem:';

/** Every code this API answers with, and when. */
export const PROBLEM_CODES = {
  'ids.invalid_request': 'the request is malformed: bad JSON, wrong types, unknown fields, a bad query parameter',
  'ids.unsupported_media_type': 'the body is not application/json',
  'ids.not_acceptable': 'the client does not accept JSON',
  'ids.not_found': 'no such resource or path',
  'ids.method_not_allowed': 'the path exists but not with this method (see Allow)',
  'ids.body_too_large': 'the body is larger than the server accepts',
  'ids.uri_too_long': 'the URL, or one of its path segments, is longer than the server accepts',
  'ids.headers_too_large': 'the request headers are larger than the server accepts',
  'ids.method_not_implemented': 'the HTTP method is not one this server knows',
  'ids.unauthorized': 'the request carries no valid credentials',
  'ids.forbidden': 'the credentials do not allow this operation on this resource',
  'ids.invalid_pool_definition': 'the ranges, excluded values, static band or prefix length make no sense',
  'ids.invalid_value': 'a value, count or prefix length does not fit the pool kind',
  'ids.pool_exists': 'a pool of this name exists with another definition',
  'ids.pool_in_use': 'the pool still has allocations',
  'ids.pool_exhausted': 'no free block of the requested size in the automatic band, or an external inventory has nothing left (`inventory`)',
  'ids.value_in_use': 'the requested value is held by another owner',
  'ids.value_outside_pool': 'the requested value is not in any range of the pool',
  'ids.value_excluded': 'the requested value is excluded from the pool',
  'ids.value_held_by_instance': 'the value is referred to by an attribute set of a live service instance; release it with ?force=true to take it anyway',
  'ids.idempotency_mismatch': 'the owner and purpose already hold a value, requested with different parameters',
  'ids.import_conflicts': 'an import would conflict with what is held; nothing was imported',
  'ids.precondition_failed': 'If-Match does not name the current version',
  'ids.concurrent_update': 'lost a race against another writer too many times; retry',
  'ids.invalid_state': 'the resource is not in a state that allows this',
  'ids.spec_exists': 'an allocation spec of this name exists with other attributes',
  'ids.spec_in_use': 'service instances still use the allocation spec',
  'ids.unknown_inventory': 'the spec names an external inventory that is not configured',
  'ids.attribute_read_only': 'the attribute is filled by allocation and cannot be set by the client',
  'ids.missing_attribute': 'an attribute an allocation needs (a lookup key, an owner attribute) is not set',
  'ids.lookup_not_found': 'the external inventory has no value for the lookup key',
  'ids.instance_exists': 'a service instance with this id exists with other content',
  'ids.node_unavailable': "no bare-metal node matching a node attribute can be had now (`reason`: the bare-metal service's)",
  'ids.capacity_unavailable': "no resource provider can take a capacity attribute's resources now (`reason`)",
  'ids.inventory_unavailable': 'the external inventory failed or answered nonsense',
  'ids.inventory_timeout': 'the external inventory did not answer in time',
  'ids.identity_unavailable': 'the identity service (Keystone) cannot be asked who the caller is: unreachable, failing, or refusing allot',
  'ids.database_unavailable':
    'the database is unreachable, read-only (failing over), too slow, or lost the connection while committing (read back before retrying); see Retry-After',
  'ids.storage_full': "the database's disk is full; writes work again once space is freed",
  'ids.service_unavailable': 'this allot process is starting (loading) or stopping: another one (or this one, soon) answers; see Retry-After',
  'ids.internal_error': 'an unexpected error; the request id identifies it in the log',
} as const satisfies Record<string, string>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** How one domain error reads on the wire. */
interface Wording<P> {
  status: HttpStatus;
  code: ProblemCode;
  detail(p: P): string;
  /** RFC 9457 extension members */
  members?(p: P): Record<string, unknown>;
}

const q = JSON.stringify;

/**
 * Every domain error of the identifier domain → its status, problem code and wording. A batch
 * failure (`in_batch`) reads as the failure of its item, with the item's `index`, and an
 * instance's (`in_attribute`) as the failure of the attribute's value, naming it (see describe).
 */
export const DOMAIN_ERRORS: { [C in Exclude<IdsErrorCode, 'in_batch' | 'in_attribute' | 'in_instance'>]: Wording<IdsDomainErrors[C]> } = {
  // pools
  pool_not_found: { status: 404, code: 'ids.not_found', detail: (p) => `pool ${q(p.pool)} not found` },
  pool_exists: { status: 409, code: 'ids.pool_exists', detail: (p) => `A pool named ${q(p.pool)} exists with another definition` },
  pool_created_concurrently: { status: 409, code: 'ids.pool_exists', detail: () => 'pool created concurrently' },
  pool_not_empty: { status: 409, code: 'ids.pool_in_use', detail: (p) => `Pool ${q(p.pool)} still has ${p.allocations} allocation(s); release them first` },
  pool_change_strands_allocations: {
    status: 409,
    code: 'ids.pool_in_use',
    detail: (p) => `${p.count} allocation(s) would fall outside the changed pool`,
    members: (p) => ({ allocations: p.allocations }),
  },
  invalid_pool_definition: { status: 422, code: 'ids.invalid_pool_definition', detail: (p) => p.reason },
  malformed_range: {
    status: 400,
    code: 'ids.invalid_request',
    detail: (p) => `${p.field}[${p.index}] ${q(p.value)} ${p.reason}`,
    members: (p) => ({ errors: [{ pointer: `/${p.field}/${p.index}`, detail: `${q(p.value)} ${p.reason}` }] }),
  },
  // values and allocations
  invalid_value: { status: 422, code: 'ids.invalid_value', detail: (p) => p.reason },
  pool_exhausted: {
    status: 409,
    code: 'ids.pool_exhausted',
    detail: (p) => `Pool ${p.pool} has no free block of ${p.size} value(s) left for automatic allocation`,
    members: (p) => ({ pool: p.pool }),
  },
  value_outside_pool: { status: 422, code: 'ids.value_outside_pool', detail: (p) => `${q(p.value)} is not inside the ranges of pool ${p.pool}` },
  value_excluded: { status: 422, code: 'ids.value_excluded', detail: (p) => `${q(p.value)} is excluded from pool ${p.pool}` },
  value_in_use: {
    status: 409,
    code: 'ids.value_in_use',
    detail: (p) => `${q(p.value)} in pool ${p.pool} is held by owner ${q(p.owner)}`,
    members: (p) => ({ held_by: { allocation_id: p.allocation_id, owner: p.owner, purpose: p.purpose } }),
  },
  value_crosses_static_band: {
    status: 409,
    code: 'ids.value_in_use',
    detail: (p) => `${q(p.value)} crosses the edge of the static band of pool ${p.pool}; request it in parts`,
  },
  idempotency_mismatch: {
    status: 409,
    code: 'ids.idempotency_mismatch',
    detail: (p) =>
      `Owner ${q(p.owner)} with purpose ${q(p.purpose)} already holds ${q(p.held)} in pool ${p.pool}, requested with other parameters (${p.differs.join(', ')})`,
    members: (p) => ({ allocation_id: p.allocation_id, differs: p.differs }),
  },
  allocation_not_found: { status: 404, code: 'ids.not_found', detail: (p) => `allocation ${p.id} not found` },
  invalid_value_parameter: {
    status: 400,
    code: 'ids.invalid_request',
    detail: (p) => `value ${q(p.value)}: ${p.reason}`,
    members: (p) => ({ errors: [{ parameter: 'value', detail: p.reason }] }),
  },
  value_not_allocated: {
    status: 404,
    code: 'ids.not_found',
    detail: (p) =>
      `no allocation of pool ${q(p.pool)} has the value ${q(p.value)}` +
      (p.overlapping ? `; allocation ${p.overlapping.allocation_id} of value ${q(p.overlapping.value)} holds part of it (name that value, or its id)` : ''),
    members: (p) => (p.overlapping ? { overlapping: p.overlapping } : {}),
  },
  value_held_by_instance: {
    status: 409,
    code: 'ids.value_held_by_instance',
    detail: (p) =>
      `${q(p.value)} in pool ${p.pool} is attribute ${p.attribute} of the ${p.sets.join(', ')} set(s) of service instance ${p.instance}; ` +
      'releasing it would let another owner take a value the instance uses (add ?force=true to release it anyway)',
    members: (p) => ({ instance: p.instance, attribute: p.attribute, sets: p.sets }),
  },
  not_reserved: { status: 409, code: 'ids.invalid_state', detail: () => 'ttl_seconds extends a reservation; this allocation is not (or no longer) reserved' },
  version_mismatch: {
    status: 412,
    code: 'ids.precondition_failed',
    detail: (p) => `If-Match does not match the current version ("${p.current}")`,
    members: (p) => ({ current_etag: `"${p.current}"` }),
  },
  changed_concurrently: { status: 409, code: 'ids.concurrent_update', detail: (p) => `The ${p.resource} changed concurrently; retry.` },
  concurrent_update: { status: 409, code: 'ids.concurrent_update', detail: (p) => `The change conflicted with ${p.what}; retry the request.` },
  // imports
  import_conflicts: {
    status: 409,
    code: 'ids.import_conflicts',
    detail: (p) => `${p.conflicts.length} item(s) conflict with the pool; nothing was imported`,
    members: (p) => ({ conflicts: p.conflicts.map(conflictView) }),
  },
  import_repeats_owner: {
    status: 409,
    code: 'ids.idempotency_mismatch',
    detail: (p) => `owner ${q(p.owner)} with purpose ${q(p.purpose)} appears twice in the import`,
  },
  import_overlaps_item: { status: 409, code: 'ids.value_in_use', detail: (p) => `overlaps item ${p.item} of the same import` },
  owner_holds_other_value: {
    status: 409,
    code: 'ids.idempotency_mismatch',
    detail: (p) => `owner ${q(p.owner)} already holds another value in pool ${p.pool}`,
  },
  value_not_free: { status: 409, code: 'ids.value_in_use', detail: () => 'not free' },
  // allocation specs
  spec_not_found: { status: 404, code: 'ids.not_found', detail: (p) => `allocation spec ${q(p.spec)} not found` },
  spec_exists: { status: 409, code: 'ids.spec_exists', detail: (p) => `An allocation spec named ${q(p.spec)} exists with other attributes` },
  spec_created_concurrently: { status: 409, code: 'ids.spec_exists', detail: () => 'created concurrently' },
  spec_in_use: { status: 409, code: 'ids.spec_in_use', detail: (p) => `Service instances use allocation spec ${q(p.spec)}` },
  key_attribute_allocated: {
    status: 422,
    code: 'ids.invalid_request',
    detail: (p) => `attribute ${p.attribute}: ${p.key_attribute} is itself allocated; a key or owner attribute must be set by the client`,
  },
  // nodes and capacity
  node_unavailable: { status: 409, code: 'ids.node_unavailable', detail: (p) => `no node can be had: ${p.reason}`, members: (p) => ({ reason: p.reason }) },
  capacity_unavailable: {
    status: 409,
    code: 'ids.capacity_unavailable',
    detail: (p) => `no capacity can be had: ${p.reason}`,
    members: (p) => ({ reason: p.reason }),
  },
  invalid_attribute_reference: {
    status: 422,
    code: 'ids.invalid_request',
    detail: (p) => `attribute ${p.attribute}: ${q(p.refers_to)} ${p.reason}`,
    members: (p) => ({ errors: [{ pointer: `/attributes/${p.attribute}`, detail: `${q(p.refers_to)} ${p.reason}` }] }),
  },
  node_in_use: {
    status: 409,
    code: 'ids.invalid_state',
    detail: (p) => `the instance cannot let go of ${p.attribute === null ? 'its' : `attribute ${q(p.attribute)}'s`} node ${p.node}: ${p.reason}`,
    members: (p) => ({ node: p.node, allocation: p.allocation, ...(p.attribute === null ? {} : { attribute: p.attribute }) }),
  },
  project_not_allowed: {
    status: 403,
    code: 'ids.forbidden',
    detail: (p) => `only callers allowed ids:all_projects name another project than their own (${q(p.project)})`,
  },
  // external inventories
  unknown_inventory: { status: 422, code: 'ids.unknown_inventory', detail: (p) => `No external inventory named ${q(p.inventory)} is configured` },
  inventory_lacks_operation: {
    status: 422,
    code: 'ids.unknown_inventory',
    detail: (p) => `Inventory ${p.inventory} does not offer ${p.operation}${p.attribute === undefined ? '' : ` (attribute ${p.attribute})`}`,
  },
  inventory_timeout: {
    status: 504,
    code: 'ids.inventory_timeout',
    detail: (p) => `Inventory ${p.inventory} did not answer ${p.operation} within ${p.timeout_ms} ms`,
    members: (p) => ({ inventory: p.inventory }),
  },
  inventory_exhausted: {
    status: 409,
    code: 'ids.pool_exhausted',
    detail: (p) => `Inventory ${p.inventory} has no ${p.attribute} left to allocate (${p.reason})`,
    members: (p) => ({ inventory: p.inventory, attribute: p.attribute }),
  },
  inventory_failed: {
    status: 502,
    code: 'ids.inventory_unavailable',
    detail: (p) => `Inventory ${p.inventory} failed ${p.operation}: ${p.reason}`,
    members: (p) => ({ inventory: p.inventory }),
  },
  // service instances
  instance_not_found: { status: 404, code: 'ids.not_found', detail: (p) => `service instance ${p.id} not found` },
  unknown_spec: { status: 422, code: 'ids.invalid_request', detail: (p) => `allocation spec ${q(p.spec)} not found` },
  instance_exists: { status: 409, code: 'ids.instance_exists', detail: (p) => `Service instance ${p.id} exists with other content` },
  attribute_read_only: {
    status: 400,
    code: 'ids.attribute_read_only',
    detail: (p) => `Attribute ${p.attribute} is filled by allocation (${p.from}) and cannot be set`,
    members: (p) => ({ attribute: p.attribute }),
  },
  action_not_allowed: {
    status: 409,
    code: 'ids.invalid_state',
    detail: (p) => `${p.action.replace('_', ' ')} is not allowed in state ${p.state} (allowed in: ${p.allowed.join(', ')})`,
    members: (p) => ({ state: p.state }),
  },
  unknown_lifecycle: {
    status: 422,
    code: 'ids.invalid_request',
    detail: (p) => `No lifecycle named ${q(p.lifecycle)} (known: ${p.known.join(', ')})`,
    members: (p) => ({ lifecycle: p.lifecycle }),
  },
  candidate_not_validated: {
    status: 409,
    code: 'ids.invalid_state',
    detail: () => 'Validate the candidate attributes before promoting them',
    members: (p) => ({ state: p.state }),
  },
  no_rollback_set: { status: 409, code: 'ids.invalid_state', detail: () => 'There is no rollback set to return to', members: (p) => ({ state: p.state }) },
  changed_during_validation: { status: 409, code: 'ids.concurrent_update', detail: () => 'The instance changed while it was being validated; validate again' },
  owner_key_too_long: {
    status: 400,
    code: 'ids.invalid_request',
    detail: (p) =>
      `Attribute ${p.owner_attribute} (the owner of ${p.attribute} in its inventory) is ${p.length} characters long; an owner key has at most ${p.max}`,
    members: (p) => ({ attribute: p.owner_attribute }),
  },
  missing_lookup_key: {
    status: 422,
    code: 'ids.missing_attribute',
    detail: (p) => `Attribute ${p.key_attribute} (the lookup key of ${p.attribute}) is not set`,
    members: (p) => ({ attribute: p.key_attribute }),
  },
  missing_owner_attribute: {
    status: 422,
    code: 'ids.missing_attribute',
    detail: (p) => `Attribute ${p.owner_attribute} (the owner of ${p.attribute} in inventory ${p.inventory}) is not set`,
    members: (p) => ({ attribute: p.owner_attribute }),
  },
  lookup_not_found: {
    status: 422,
    code: 'ids.lookup_not_found',
    detail: (p) => `Inventory ${p.inventory} has no ${p.attribute} for ${q(p.key)}`,
    members: (p) => ({ attribute: p.attribute }),
  },
  // outbox
  outbox_entry_not_found: { status: 404, code: 'ids.not_found', detail: (p) => `outbox entry ${p.id} not found` },
  outbox_entry_delivered: {
    status: 409,
    code: 'ids.invalid_state',
    detail: (p) => `Outbox entry ${p.id} is already delivered`,
    members: (p) => ({ state: p.state }),
  },
};

/** A domain error as the client reads it. */
export interface DescribedError {
  status: HttpStatus;
  code: ProblemCode;
  detail: string;
  members: Record<string, unknown>;
}

/** The wording of a domain error of this domain; null for a code this API does not know. */
export function describe(err: DomainError): DescribedError | null {
  if (err.code === 'in_batch') {
    const { index, error } = err.params as IdsDomainErrors['in_batch'];
    const inner = describe(error);
    return inner && { ...inner, detail: `allocations[${index}]: ${inner.detail}`, members: { ...inner.members, index } };
  }
  if (err.code === 'in_attribute') {
    const { attribute, error } = err.params as IdsDomainErrors['in_attribute'];
    const inner = describe(error);
    return inner && { ...inner, detail: `attribute ${q(attribute)}: ${inner.detail}`, members: { ...inner.members, attribute } };
  }
  if (err.code === 'in_instance') {
    const { id, error } = err.params as IdsDomainErrors['in_instance'];
    const inner = describe(error);
    return inner && { ...inner, detail: `service instance ${id} was created; then ${inner.detail}`, members: { ...inner.members, service_instance_id: id } };
  }
  const wording = (DOMAIN_ERRORS as Record<string, Wording<Record<string, unknown>> | undefined>)[err.code];
  if (!wording) return null;
  return { status: wording.status, code: wording.code, detail: wording.detail(err.params), members: wording.members?.(err.params) ?? {} };
}

/** What a client is told about a failure, kept as an instance's or outbox entry's `last_error`. */
export function problemDetail(err: unknown): string {
  return (err instanceof DomainError ? describe(err)?.detail : undefined) ?? (err as Error).message;
}

/** One refused item of an import, as listed in the answer (and in an `import_conflicts` problem). */
export function conflictView(c: { index: number; value: unknown; error: DomainError }): ImportOutcome['conflicts'][number] {
  const d = describe(c.error);
  // value_in_use's member: who holds it, an object
  const heldBy = d?.members.held_by as Record<string, unknown> | undefined;
  return {
    index: c.index,
    value: c.value,
    code: d?.code ?? 'ids.internal_error',
    detail: d?.detail ?? c.error.message,
    ...(heldBy ? { held_by: heldBy } : {}),
  };
}

/** The pipeline's `translate`: a domain error of this API as an ApiError (null: not ours). */
export function translate(err: unknown): ApiError | null {
  if (!(err instanceof DomainError)) return null;
  const d = describe(err);
  return d && new ApiError(d.status, d.code, d.detail, d.members);
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance: string;
  request_id: string;
  [extension: string]: unknown;
}

/** The pipeline's own refusals (http.*), in this API's codes. */
const FROM_PIPELINE: Record<string, ProblemCode> = {
  [HTTP.notFound]: 'ids.not_found',
  [HTTP.methodNotAllowed]: 'ids.method_not_allowed',
  [HTTP.notImplemented]: 'ids.method_not_implemented',
  [HTTP.unauthorized]: 'ids.unauthorized',
  [HTTP.forbidden]: 'ids.forbidden',
  [HTTP.notAcceptable]: 'ids.not_acceptable',
  [HTTP.unsupportedMediaType]: 'ids.unsupported_media_type',
  [HTTP.badJson]: 'ids.invalid_request',
  [HTTP.badQuery]: 'ids.invalid_request',
  [HTTP.badUrl]: 'ids.invalid_request',
  [HTTP.badRequest]: 'ids.invalid_request',
  [HTTP.bodyTooLarge]: 'ids.body_too_large',
  [HTTP.uriTooLong]: 'ids.uri_too_long',
  [HTTP.headersTooLarge]: 'ids.headers_too_large',
  [HTTP.internal]: 'ids.internal_error',
  [HTTP.identityUnavailable]: 'ids.identity_unavailable',
  [HTTP.notReady]: 'ids.service_unavailable',
};

function codeFor(err: ApiError): ProblemCode {
  if (err.code in PROBLEM_CODES) return err.code as ProblemCode;
  if (err.code === HTTP.unavailable) return err.status === 507 ? 'ids.storage_full' : 'ids.database_unavailable';
  return FROM_PIPELINE[err.code] ?? (err.status >= 500 ? 'ids.internal_error' : 'ids.invalid_request');
}

function toProblem(err: ApiError, requestId: string, instance: string): Problem {
  const code = codeFor(err);
  const { versionGate: _, ...extra } = err.extra;
  return {
    type: `${PROBLEM_TYPE_PREFIX}${code}`,
    title: STATUS_CODES[err.status] ?? 'Error',
    status: err.status,
    detail: err.message,
    code,
    instance,
    request_id: requestId,
    ...extra,
  };
}

export function renderProblem(err: ApiError, context: ErrorContext): RenderedError {
  return { status: err.status, contentType: 'application/problem+json', body: JSON.stringify(toProblem(err, context.requestId, context.path)) };
}

/** An error of the API layer above the domain (routes, request helpers): status and code given here. */
export const idsError = (status: HttpStatus, code: ProblemCode, message: string, extra?: Record<string, unknown>) => new ApiError(status, code, message, extra);
export const invalidRequest = (message: string, extra?: Record<string, unknown>) => idsError(400, 'ids.invalid_request', message, extra);
