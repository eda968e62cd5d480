// Reading a JSON request body, with one set of safety rules for every API: the bytes must be
// UTF-8, the document no deeper than MAX_DEPTH, every number finite, and no string (value or key)
// may hold a NUL character — PostgreSQL cannot store one, so it would otherwise fail deep inside
// a write on one database and not the other.
import { HTTP, httpError } from './errors.js';

/** Deepest nesting accepted: deep enough for any document of ours, shallow enough to walk and store. */
export const MAX_DEPTH = 64;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Parse and check a body; throws an ApiError (http.bad_json) saying what is wrong. */
export function readJson(body: Buffer): unknown {
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
  return data;
}

function checkShape(data: unknown): void {
  const stack: Array<[unknown, number]> = [[data, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) throw httpError(400, HTTP.badJson, 'The request body holds a NUL character in a string.', { reason: 'nul' });
      if (!value.isWellFormed()) throw httpError(400, HTTP.badJson, 'The request body holds a lone surrogate (\\ud800-\\udfff) in a string.', { reason: 'surrogate' });
      continue;
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw httpError(400, HTTP.badJson, 'The request body holds a number too large to represent.', { reason: 'number' });
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_DEPTH) throw httpError(400, HTTP.badJson, `The request body is nested more than ${MAX_DEPTH} levels deep.`, { reason: 'depth' });
    if (Array.isArray(value)) {
      for (const child of value) stack.push([child, depth + 1]);
    } else {
      for (const [key, child] of Object.entries(value)) {
        stack.push([key, depth], [child, depth + 1]);
      }
    }
  }
}
