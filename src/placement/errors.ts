// Placement's wire format for errors, the one place an error becomes a Placement response:
//   {"errors": [{"status", "title", "detail", "request_id", "code" (1.23+)}]}
// `detail` is laid out as Placement's WSGI stack lays it out ("<explanation>\n\n <message>  "),
// because some clients look for substrings in it.
import { STATUS_CODES } from 'node:http';
import { ApiError, HTTP, type HttpStatus } from '../http/errors.js';
import type { ErrorContext, RenderedError } from '../http/pipeline.js';

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

export const placementError = (status: HttpStatus, message: string, code: string = CODES.undefined) => new ApiError(status, code, message);

/** How an error is rendered for an Accept header: JSON unless the client clearly wants text. */
function errorMedia(accept: string | string[] | undefined): 'json' | 'html' | 'text' {
  const a = Array.isArray(accept) ? accept.join(', ') : accept;
  if (!a || accepts(a, 'application/json')) return 'json';
  if (accepts(a, 'text/html')) return 'html';
  return 'text';
}

/** Does an Accept header admit this media type (honouring wildcards and q=0)? */
export function accepts(accept: string, type: string): boolean {
  const [major] = type.split('/');
  return accept.split(',').some((part) => {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) return false;
    return range === type || range === '*/*' || range === `${major}/*`;
  });
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
  if (media === 'json') {
    const detail = message ? `${explanation}\n\n ${message}  ` : `${explanation}\n\n   `;
    const entry: Record<string, unknown> = { status, title, detail, request_id: context.requestId };
    if (context.mv?.atLeast('1.23')) entry.code = err.code.startsWith('placement.') ? err.code : CODES.undefined;
    return { status, contentType: 'application/json', body: JSON.stringify({ errors: [entry] }) };
  }
  if (media === 'html') {
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return {
      status,
      contentType: 'text/html; charset=UTF-8',
      body: `<html>\n <head>\n  <title>${status} ${esc(title)}</title>\n </head>\n <body>\n  <h1>${status} ${esc(title)}</h1>\n  ${esc(explanation)}<br /><br />\n${esc(message)}\n\n\n </body>\n</html>`,
    };
  }
  return { status, contentType: 'text/plain; charset=UTF-8', body: `${status} ${title}\n\n${explanation}\n\n${message}\n` };
}
