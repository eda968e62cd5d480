// Reading a JSON request body, with one set of safety rules for every API: the body must carry no
// content coding (gzip, …: 415, so a client learns to send it plain instead of reading "not
// UTF-8"), the bytes must be UTF-8, the document no deeper than MAX_DEPTH, every number finite,
// every integer literal exact as a JavaScript number, and no string (value or key) may hold a NUL
// character — PostgreSQL cannot store one, so it would otherwise fail deep inside a write on one
// database and not the other.
import { MAX_EXACT_INTEGER, holdsInexactInteger } from '../core/exact-json.js';
import { HTTP, httpError } from './errors.js';

/** Deepest nesting accepted: deep enough for any document of ours, shallow enough to walk and store. */
export const MAX_DEPTH = 64;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parse and check a body; throws an ApiError: http.unsupported_media_type (415) when
 * `contentEncoding` names a coding, http.bad_json (400) saying what is wrong with the JSON.
 */
export function readJson(body: Buffer, contentEncoding?: string): unknown {
  refuseContentCoding(contentEncoding);
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw httpError(400, HTTP.badJson, 'The request body is not valid UTF-8.', { reason: 'utf8' });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw httpError(400, HTTP.badJson, (err as Error).message, { reason: 'syntax' });
  }
  checkShape(data);
  if (holdsInexactInteger(text))
    throw httpError(400, HTTP.badJson, `The request body holds an integer beyond ±${MAX_EXACT_INTEGER}, which cannot be kept exactly.`, { reason: 'integer' });
  return data;
}

/**
 * 415 for a body sent with a content coding (RFC 9110 §15.5.16): none is decoded here, and the
 * coded bytes would otherwise be read as text and refused as "not UTF-8". `identity` (no coding)
 * is let through; `Accept-Encoding: identity` in the answer says what would have been accepted.
 */
function refuseContentCoding(header: string | undefined): void {
  if (header === undefined) return;
  const codings = header
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c.toLowerCase() !== 'identity');
  if (codings.length === 0) return;
  throw httpError(
    415,
    HTTP.unsupportedMediaType,
    `The request body is encoded with ${codings.join(', ')} (Content-Encoding); this server accepts only bodies without a content coding.`,
    {},
    { 'accept-encoding': 'identity' },
  );
}

function checkShape(data: unknown): void {
  const problem = jsonProblem(data);
  if (problem) throw httpError(400, HTTP.badJson, `The request body ${problem.message}.`, { reason: problem.reason });
}

/**
 * Why a parsed JSON document cannot be kept (NUL, lone surrogate, a number too large, nested
 * deeper than MAX_DEPTH), or null when it can. Also for JSON that comes from elsewhere (an
 * external inventory's answer) before it is stored.
 */
export function jsonProblem(data: unknown): { reason: string; message: string } | null {
  const stack: Array<[unknown, number]> = [[data, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) return { reason: 'nul', message: 'holds a NUL character in a string' };
      if (!value.isWellFormed()) return { reason: 'surrogate', message: 'holds a lone surrogate (\\ud800-\\udfff) in a string' };
      continue;
    }
    if (typeof value === 'number' && !Number.isFinite(value)) return { reason: 'number', message: 'holds a number too large to represent' };
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_DEPTH) return { reason: 'depth', message: `is nested more than ${MAX_DEPTH} levels deep` };
    if (Array.isArray(value)) {
      for (const child of value) stack.push([child, depth + 1]);
    } else {
      for (const [key, child] of Object.entries(value)) {
        stack.push([key, depth], [child, depth + 1]);
      }
    }
  }
  return null;
}
