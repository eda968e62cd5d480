// Errors of the HTTP layer: a status, a stable code and a message, thrown by the pipeline and by
// the API code above the domain (routes, an API's request helpers). Each API's errors.ts is the one
// place that turns these, domain errors and database faults into that API's wire format.
export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 406 | 408 | 409 | 412 | 413 | 414 | 415 | 422 | 428 | 431 | 500 | 501 | 502 | 503 | 504 | 507;

export class ApiError extends Error {
  constructor(
    readonly status: HttpStatus,
    /** stable machine-readable code, e.g. `placement.concurrent_update`, `http.not_found` */
    readonly code: string,
    message: string,
    /** extra fields an API may render (RFC 9457 extensions, allowed methods, …) */
    readonly extra: Record<string, unknown> = {},
    /** response headers that go with this error whatever the API's format (`WWW-Authenticate`) */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The pipeline's own refusals, before any API code runs; each API words them its own way. */
export const HTTP = {
  notFound: 'http.not_found',
  methodNotAllowed: 'http.method_not_allowed',
  notImplemented: 'http.not_implemented',
  unauthorized: 'http.unauthorized',
  forbidden: 'http.forbidden',
  notAcceptable: 'http.not_acceptable',
  unsupportedMediaType: 'http.unsupported_media_type',
  badJson: 'http.bad_json',
  badQuery: 'http.bad_query',
  badUrl: 'http.bad_url',
  badRequest: 'http.bad_request',
  requestTimeout: 'http.request_timeout',
  bodyTooLarge: 'http.body_too_large',
  uriTooLong: 'http.uri_too_long',
  headersTooLarge: 'http.headers_too_large',
  unavailable: 'http.unavailable',
  /** this allot process is starting (its database answers: it is loading) or stopping: not its database's fault */
  notReady: 'http.not_ready',
  /** the identity service (Keystone) cannot tell who the caller is: unreachable, failing, refusing allot */
  identityUnavailable: 'http.identity_unavailable',
  internal: 'http.internal',
} as const;

export const httpError = (status: HttpStatus, code: string, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>) =>
  new ApiError(status, code, message, extra, headers);
