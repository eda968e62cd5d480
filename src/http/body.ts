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
