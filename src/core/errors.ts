// The one error type of allot's domains. Each API maps it to its own wire format in one place
// (placement/errors.ts, baremetal/errors.ts, ids/errors.ts); the `code` strings never change once
// published because clients branch on them.

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 406 | 409 | 412 | 413 | 415 | 422 | 428 | 500 | 502 | 503 | 504 | 507;

export class AllotError extends Error {
  constructor(
    readonly status: ErrorStatus,
    /** stable machine-readable code, e.g. `placement.concurrent_update` */
    readonly code: string,
    message: string,
    /** extra fields an API may render (RFC 9457 extensions, allowed methods, …) */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AllotError';
  }
}

export const badRequest = (message: string, code = 'allot.bad_request', extra?: Record<string, unknown>) =>
  new AllotError(400, code, message, extra);
export const notFound = (message: string, code = 'allot.not_found', extra?: Record<string, unknown>) =>
  new AllotError(404, code, message, extra);
export const conflict = (message: string, code = 'allot.conflict', extra?: Record<string, unknown>) =>
  new AllotError(409, code, message, extra);

/**
 * Thrown inside a transaction when a compare-and-set lost against another writer that the client
 * could not have known about. The transaction helper retries the whole transaction a bounded number
 * of times; when retries run out it becomes `exhausted()`'s error.
 */
export class RetryableConflict extends Error {
  constructor(
    message: string,
    readonly exhausted: () => AllotError,
  ) {
    super(message);
    this.name = 'RetryableConflict';
  }
}
