// Ironic's wire format for errors, the one place an ApiError becomes a bare-metal response.
// The body is always {"error_message": "<a JSON document as a string>"}; the inner document is
// one of two shapes, as the reference Ironic answers:
//   - Ironic's own faults:      {"faultcode": "Client"|"Server", "faultstring": …, "debuginfo": null}
//   - the web framework's:      {"code": N, "title": …, "description": …}
//     for routing, method and version errors (`frameworkError`).
// The inner document is written the way Python's json.dumps writes it (", " and ": " separators,
// non-ASCII escaped), because that is what clients have always seen.
import { STATUS_CODES } from 'node:http';
import { ApiError, HTTP, type HttpStatus } from '../http/errors.js';
import type { ErrorContext, RenderedError } from '../http/pipeline.js';

/** Stable codes of bare-metal errors (what tests and logs branch on; not on the wire). */
export const CODES = {
  client: 'baremetal.client',
  framework: 'baremetal.framework',
  notFound: 'baremetal.not_found',
  conflict: 'baremetal.conflict',
  locked: 'baremetal.node_locked',
  invalidState: 'baremetal.invalid_state',
  server: 'baremetal.server',
} as const;

/** An Ironic fault (faultcode Client for 4xx, Server for 5xx). */
export const ironicError = (status: HttpStatus, message: string, code: string = CODES.client) => new ApiError(status, code, message);
export const badRequest = (message: string) => ironicError(400, message);
export const notFound = (message: string) => ironicError(404, message, CODES.notFound);
export const conflict = (message: string, code: string = CODES.conflict) => ironicError(409, message, code);
/** Ironic answers 406 "Request not acceptable." for a field or parameter newer than the request. */
export const notAcceptable = (detail?: string) => ironicError(406, detail ? `Request not acceptable. ${detail}` : 'Request not acceptable.');

/**
 * A web-framework error (routing, method, version negotiation). `versionRangeOnly` marks the 406
 * of negotiation, which carries the min/max headers but no negotiated version.
 */
export const frameworkError = (status: HttpStatus, description: string, extra: { versionRangeOnly?: boolean; allow?: string[] } = {}) =>
  new ApiError(status, CODES.framework, description, extra);

export const nodeNotFound = (ident: string) => notFound(`Node ${ident} could not be found.`);
export const allocationNotFound = (ident: string) => notFound(`Allocation ${ident} could not be found.`);
export const nodeLocked = (node: string, host: string) =>
  conflict(`Node ${node} is locked by host ${host}, please retry after the current operation is completed.`, CODES.locked);

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
