// Float fields written as floats. Placement writes its answers with Python's json module, which
// gives every float a fraction or an exponent (`"allocation_ratio": 1.0`, `16.0`, `1.5`,
// `3.4028234663852886e+38`); JSON.stringify writes a whole-number float as an integer (`1`), which
// a client decoding into typed fields may take for one. An answer holding such a field names its
// float members and is serialised here, into the JsonText the pipeline sends as it is; the body
// itself stays plain data, so it keeps its wire type.
import type { Json } from '../core/json-text.js';
import { JsonText } from './pipeline.js';

/** The number as a JSON float literal: a whole number gets `.0`; JavaScript's exponent form (1e+21) already is one. */
function floatLiteral(value: number): string {
  const text = JSON.stringify(value);
  return /^-?[0-9]+$/.test(text) ? `${text}.0` : text;
}

/** JSON of plain data (objects, arrays, strings, numbers, booleans, null), a number held by a member named in `floats` as a float. */
function serialise(value: unknown, floats: ReadonlySet<string>, float = false): string {
  if (float && typeof value === 'number') return floatLiteral(value);
  if (Array.isArray(value)) return `[${value.map((item) => serialise(item, floats)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).filter(([, member]) => member !== undefined);
    return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${serialise(member, floats, floats.has(key))}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `body` as JSON text, the numbers of its members named in `floats` (the api-ref's `type: float`) written as floats. */
export function jsonWithFloats<T>(body: T, floats: readonly string[]): JsonText<T> {
  return new JsonText(serialise(body, new Set(floats)) as Json<T>);
}
