// The identifier API's error format, the one place an AllotError becomes an RFC 9457
// `application/problem+json` body. `type` is a stable URN built from the stable `code`, so
// clients may branch on either; docs/ids.md lists every code.
import { STATUS_CODES } from 'node:http';
import { AllotError } from '../core/errors.js';

export const PROBLEM_TYPE_PREFIX = 'urn:allot:problem:';

/** Every code this API answers with, and when. */
export const PROBLEM_CODES: Record<string, string> = {
  'ids.invalid_request': 'the request is malformed: bad JSON, wrong types, unknown fields, a bad query parameter',
  'ids.unsupported_media_type': 'the body is not application/json',
  'ids.not_acceptable': 'the client does not accept JSON',
  'ids.not_found': 'no such resource or path',
  'ids.method_not_allowed': 'the path exists but not with this method (see Allow)',
  'ids.body_too_large': 'the body is larger than the server accepts',
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

/** Map the generic codes other layers raise (allot.*) to this API's codes. */
function codeFor(err: AllotError): string {
  if (err.code.startsWith('ids.')) return err.code;
  if (err.code === 'allot.concurrent_update') return 'ids.concurrent_update';
  if (err.status === 404) return 'ids.not_found';
  if (err.status === 409) return 'ids.concurrent_update';
  if (err.status === 413) return 'ids.body_too_large';
  if (err.status === 415) return 'ids.unsupported_media_type';
  if (err.status >= 500) return 'ids.internal_error';
  return 'ids.invalid_request';
}

export function toProblem(err: AllotError, requestId: string, instance: string): Problem {
  const code = codeFor(err);
  return {
    type: `${PROBLEM_TYPE_PREFIX}${code}`,
    title: STATUS_CODES[err.status] ?? 'Error',
    status: err.status,
    detail: err.message,
    code,
    instance,
    request_id: requestId,
    ...err.extra,
  };
}

export const idsError = (status: AllotError['status'], code: string, message: string, extra?: Record<string, unknown>) =>
  new AllotError(status, code, message, extra);
export const invalidRequest = (message: string, extra?: Record<string, unknown>) => idsError(400, 'ids.invalid_request', message, extra);
export const notFoundError = (what: string) => idsError(404, 'ids.not_found', `${what} not found`);
export const preconditionFailed = (current: number) =>
  idsError(412, 'ids.precondition_failed', `If-Match does not match the current version ("${current}")`, { current_etag: `"${current}"` });
