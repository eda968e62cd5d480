// The identifier API's error format, the one place an ApiError becomes an RFC 9457
// `application/problem+json` body. `type` is a stable URN built from the stable `code`, so
// clients may branch on either; docs/ids.md lists every code.
import { STATUS_CODES } from 'node:http';
import { ApiError, HTTP } from '../http/errors.js';
import type { ErrorContext, RenderedError } from '../http/pipeline.js';

export const PROBLEM_TYPE_PREFIX = 'urn:allot:problem:';

/** Every code this API answers with, and when. */
export const PROBLEM_CODES: Record<string, string> = {
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
  'ids.pool_exhausted': 'no free block of the requested size in the automatic band',
  'ids.value_in_use': 'the requested value is held by another owner',
  'ids.value_outside_pool': 'the requested value is not in any range of the pool',
  'ids.value_excluded': 'the requested value is excluded from the pool',
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
  'ids.inventory_unavailable': 'the external inventory failed or answered nonsense',
  'ids.inventory_timeout': 'the external inventory did not answer in time',
  'ids.identity_unavailable': 'the identity service (Keystone) cannot be asked who the caller is: unreachable, failing, or refusing allot',
  'ids.database_unavailable': 'the database is unreachable, read-only (failing over), too slow, or lost the connection while committing (read back before retrying); see Retry-After',
  'ids.storage_full': "the database's disk is full; writes work again once space is freed",
  'ids.internal_error': 'an unexpected error; the request id identifies it in the log',
};

export interface Problem {
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
const FROM_PIPELINE: Record<string, string> = {
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
};

function codeFor(err: ApiError): string {
  if (err.code.startsWith('ids.')) return err.code;
  if (err.code === HTTP.unavailable) return err.status === 507 ? 'ids.storage_full' : 'ids.database_unavailable';
  return FROM_PIPELINE[err.code] ?? (err.status >= 500 ? 'ids.internal_error' : 'ids.invalid_request');
}

export function toProblem(err: ApiError, requestId: string, instance: string): Problem {
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

export const idsError = (status: ApiError['status'], code: string, message: string, extra?: Record<string, unknown>) =>
  new ApiError(status, code, message, extra);
export const invalidRequest = (message: string, extra?: Record<string, unknown>) => idsError(400, 'ids.invalid_request', message, extra);
export const notFoundError = (what: string) => idsError(404, 'ids.not_found', `${what} not found`);
export const preconditionFailed = (current: number) =>
  idsError(412, 'ids.precondition_failed', `If-Match does not match the current version ("${current}")`, { current_etag: `"${current}"` });
