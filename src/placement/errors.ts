// Placement's wire format for errors, the one place AllotError becomes a Placement response:
//   {"errors": [{"status", "title", "detail", "request_id", "code" (1.23+)}]}
// `detail` is laid out as Placement's WSGI stack lays it out ("<explanation>\n\n <message>  "),
// because some clients look for substrings in it.
import { STATUS_CODES } from 'node:http';
import { AllotError } from '../core/errors.js';
import type { Microversion } from '../core/microversion.js';

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
  415: 'The request media type is not supported by this server.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
  507: 'There was not enough space to save the resource',
};

export const placementError = (status: AllotError['status'], message: string, code: string = CODES.undefined) =>
  new AllotError(status, code, message);

export interface RenderedError {
  status: number;
  contentType: string;
  body: string;
}

export type ErrorMedia = 'json' | 'html' | 'text';

/** How an error is rendered for an Accept header: JSON unless the client clearly wants text. */
export function errorMedia(accept: string | undefined): ErrorMedia {
  if (!accept || accepts(accept, 'application/json')) return 'json';
  if (accepts(accept, 'text/html')) return 'html';
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

export function renderError(err: AllotError, opts: { mv: Microversion | null; requestId: string; media: ErrorMedia; method: string }): RenderedError {
  const status = err.status;
  const title = STATUS_CODES[status] ?? 'Error';
  const explanation = status === 405 ? `The method ${opts.method} is not allowed for this resource.` : (EXPLANATIONS[status] ?? '');
  const detail = err.message ? `${explanation}\n\n ${err.message}  ` : `${explanation}\n\n   `;
  if (opts.media === 'json') {
    const entry: Record<string, unknown> = { status, title, detail, request_id: opts.requestId };
    if (opts.mv?.atLeast('1.23')) entry.code = err.code;
    return { status, contentType: 'application/json', body: JSON.stringify({ errors: [entry] }) };
  }
  if (opts.media === 'html') {
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return {
      status,
      contentType: 'text/html; charset=UTF-8',
      body: `<html>\n <head>\n  <title>${status} ${esc(title)}</title>\n </head>\n <body>\n  <h1>${status} ${esc(title)}</h1>\n  ${esc(explanation)}<br /><br />\n${esc(err.message)}\n\n\n </body>\n</html>`,
    };
  }
  return { status, contentType: 'text/plain; charset=UTF-8', body: `${status} ${title}\n\n${explanation}\n\n${err.message}\n` };
}
