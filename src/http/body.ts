// Reading a JSON request body, with one set of safety rules for every API: the body must carry no
// content coding (gzip, …: 415, so a client learns to send it plain instead of reading "not
// UTF-8"), the bytes must be UTF-8, the document no deeper than MAX_DEPTH, every number finite,
// every integer literal exact as a JavaScript number, and no string (value or key) may hold a NUL
// character — PostgreSQL cannot store one, so it would otherwise fail deep inside a write on one
// database and not the other.
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
    throw httpError(400, HTTP.badJson, `The request body holds an integer beyond ±${SAFE_DIGITS}, which cannot be kept exactly.`, { reason: 'integer' });
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

// --- integers JSON.parse would round ---
//
// JSON.parse turns 9007199254740993 into 9007199254740992 without a word, and the rounded value
// would be stored and compared (an idempotent repeat with another number looked "the same"). Once
// parsed the difference is gone, and Node 20's reviver has no access to the source text, so the
// text is read: an integer literal (no fraction, no exponent) beyond ±Number.MAX_SAFE_INTEGER is
// refused. A literal with a fraction or an exponent (1e308, 1.5e300) is a float and is rounded as
// floats are: Placement takes allocation_ratio that way. Digits inside strings do not count.

/** Number.MAX_SAFE_INTEGER as text: a longer run of digits, or a larger one as long, is inexact. */
const SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);
/**
 * Every inexact integer literal holds a run of at least 16 digits, which ordinary bodies (uuids,
 * names, small numbers) never do: one regular-expression test keeps the scan below off them. It
 * tries a run only from its first digit: the plain `[0-9]{16}` retries inside every run and took
 * 30 ms on 1.3 MB of small integers. Measured on 1.3 MB bodies (readJson, median of 15, this
 * machine): 10 000 string-heavy items +0.9 ms on 7.3 ms when the test says no, +2.2 ms when a
 * 16-digit string makes the scan run; 100 000 integers +3.8 ms on 14.5 ms, +7.5 ms with the scan.
 */
const LONG_DIGIT_RUN = new RegExp(`(?:^|[^0-9])[0-9]{${SAFE_DIGITS.length}}`);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;

const isDigit = (c: number) => c >= ZERO && c <= NINE;
/** what may follow a float's first `.`, `e` or `E`: digits, an exponent and its sign */
const isFloatTail = (c: number) => isDigit(c) || c === LOWER_E || c === UPPER_E || c === PLUS || c === MINUS;

/** Does `text`, a document JSON.parse accepted, hold an integer literal beyond ±MAX_SAFE_INTEGER? */
export function holdsInexactInteger(text: string): boolean {
  if (!LONG_DIGIT_RUN.test(text)) return false;
  const end = text.length;
  let i = 0;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = afterString(text, i + 1);
    } else if (c === MINUS || isDigit(c)) {
      const first = c === MINUS ? i + 1 : i;
      let j = first;
      while (j < end && isDigit(text.charCodeAt(j))) j++;
      const next = text.charCodeAt(j);
      if (next === DOT || next === LOWER_E || next === UPPER_E) {
        // a float: skip its fraction and exponent
        j++;
        while (j < end && isFloatTail(text.charCodeAt(j))) j++;
      } else {
        const digits = j - first;
        if (digits > SAFE_DIGITS.length || (digits === SAFE_DIGITS.length && text.slice(first, j) > SAFE_DIGITS)) return true;
      }
      i = j;
    } else {
      i++;
    }
  }
  return false;
}

/** The index just past the quote that ends the string whose first character is at `from`. */
function afterString(text: string, from: number): number {
  for (let at = from; ; ) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return text.length;
    // escaped when an odd number of backslashes stands before it (`\"`, but not `\\"`)
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}
