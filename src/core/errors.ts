// The errors of allot's domains (stores and services). A domain error names what went wrong with
// a stable code and the facts (`capacity_exceeded` with the class and provider); it says nothing of
// HTTP. Each API's errors.ts is the one place that maps a code to a status and that API's wording.

export class DomainError extends Error {
  constructor(
    /** stable machine-readable code, e.g. `capacity_exceeded` */
    readonly code: string,
    /** the facts an API words its message from */
    readonly params: Record<string, unknown> = {},
    /** an English description, for logs and for APIs that show it as it is */
    message: string = code,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** A write lost a race against other writers more often than the retry policy allows. */
export const concurrentUpdate = (what = 'a concurrent writer') =>
  new DomainError('concurrent_update', { what }, `The change conflicted with ${what}; retry the request.`);

/**
 * Thrown inside a transaction when a compare-and-set lost against another writer that the client
 * could not have known about. The transaction helper retries the whole transaction a bounded number
 * of times; when retries run out it throws `exhausted()`'s error instead.
 */
export class RetryableConflict extends Error {
  constructor(
    message: string,
    readonly exhausted: () => Error,
  ) {
    super(message);
    this.name = 'RetryableConflict';
  }
}
