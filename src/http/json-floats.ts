// Float fields written as floats. Placement writes its answers with Python's json module, which
// gives every float a fraction or an exponent (`"allocation_ratio": 1.0`, `16.0`, `1.5`,
// `3.4028234663852886e+38`); JSON.stringify writes a whole-number float as an integer (`1`), which
// a client decoding into typed fields may take for one. An answer holding such a field marks its
// float values with JsonFloat and is serialised here, into the JsonText the pipeline sends as it is.
import { JsonText } from './pipeline.js';

/** A number the wire says is a float (the api-ref's `type: float`). */
export class JsonFloat {
  constructor(readonly value: number) {}
}

/** The number as a JSON float literal: a whole number gets `.0`; JavaScript's exponent form (1e+21) already is one. */
function floatLiteral(value: number): string {
  const text = JSON.stringify(value);
  return /^-?[0-9]+$/.test(text) ? `${text}.0` : text;
}

/** JSON of plain data (objects, arrays, strings, numbers, booleans, null), its JsonFloat values as floats. */
function serialise(value: unknown): string {
  if (value instanceof JsonFloat) return floatLiteral(value.value);
  if (Array.isArray(value)) return `[${value.map(serialise).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).filter(([, member]) => member !== undefined);
    return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${serialise(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function jsonWithFloats(body: unknown): JsonText {
  return new JsonText(serialise(body));
}
