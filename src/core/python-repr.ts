// How Python prints a JSON value. Placement's and Ironic's error messages are Python's text —
// `repr()` in Ironic's ("Couldn't apply patch '{'op': 'add', ...}'"), pprint in the validation
// errors of python-jsonschema that Placement shows — and clients match substrings of them.

/**
 * Python's repr() of a JSON value (dicts in their own order, as Python 3.7+ prints them).
 * Bounded in depth and length: an error about a 1 MB body must not become a 1 MB message.
 */
export function pyRepr(value: unknown, depth = 0): string {
  const out = repr(value, depth, false);
  return out.length > 2000 ? `${out.slice(0, 2000)}...` : out;
}

function repr(value: unknown, depth: number, sortDicts: boolean): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyStr(value);
  if (depth > 20) return '...';
  if (Array.isArray(value))
    return `[${value
      .slice(0, 100)
      .map((v) => repr(v, depth + 1, sortDicts))
      .join(', ')}${value.length > 100 ? ', ...' : ''}]`;
  if (typeof value === 'object') {
    const entries = dictItems(value as Record<string, unknown>, sortDicts);
    const inner = entries.slice(0, 100).map(([k, v]) => `${pyStr(k)}: ${repr(v, depth + 1, sortDicts)}`);
    return `{${inner.join(', ')}${entries.length > 100 ? ', ...' : ''}}`;
  }
  return String(value);
}

function dictItems(value: Record<string, unknown>, sorted: boolean): Array<[string, unknown]> {
  const entries = Object.entries(value);
  // Python orders strings by code point; JavaScript's `<` by UTF-16 unit (they differ past U+FFFF).
  if (sorted) entries.sort(([a], [b]) => byCodePoint(a, b));
  return entries;
}

function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** A number as Python prints it: JSON integers as ints, others as Python's shortest float repr. */
export function pyNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  // The shortest digits that round-trip, as both languages find them; Python writes them in
  // scientific notation below 1e-4 and from 1e16 up, with at least two exponent digits.
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  const s = String(n);
  return s.includes('.') ? s : `${s}.0`;
}

/** Python's repr() of a string: single quotes unless it holds one and no double quote. */
export function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ' || ch === '\x7f') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return quote + out + quote;
}

/**
 * Python's `pprint.pformat(value, width)`: dict keys sorted, and a value that does not fit in
 * what is left of the line broken over several, one item per line, continuation lines indented
 * under the opening bracket; long strings split at whitespace into adjacent literals.
 */
export function pformat(value: unknown, width = 80): string {
  return format(value, 0, 0, 0, width);
}

function format(value: unknown, indent: number, allowance: number, level: number, width: number): string {
  const rep = repr(value, 0, true);
  if (rep.length <= width - indent - allowance) return rep;
  if (Array.isArray(value)) return `[${formatItems(value, indent, allowance + 1, level + 1, width)}]`;
  if (typeof value === 'object' && value !== null) return `{${formatDictItems(value as Record<string, unknown>, indent, allowance + 1, level + 1, width)}}`;
  if (typeof value === 'string') return formatString(value, indent, allowance, level + 1, width);
  return rep;
}

function formatDictItems(value: Record<string, unknown>, indent: number, allowance: number, level: number, width: number): string {
  const items = dictItems(value, true);
  const inner = indent + 1;
  return items
    .map(([key, item], i) => {
      const last = i === items.length - 1;
      const k = pyStr(key);
      return `${k}: ${format(item, inner + k.length + 2, last ? allowance : 1, level, width)}`;
    })
    .join(`,\n${' '.repeat(inner)}`);
}

function formatItems(items: unknown[], indent: number, allowance: number, level: number, width: number): string {
  const inner = indent + 1;
  return items.map((item, i) => format(item, inner, i === items.length - 1 ? allowance : 1, level, width)).join(`,\n${' '.repeat(inner)}`);
}

/** Python's str.splitlines(keepends=True). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's str.splitlines() boundaries, control characters included
const LINE = /[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]|$)/g;

function formatString(value: string, indent: number, allowance: number, level: number, width: number): string {
  if (value.length === 0) return pyStr(value);
  const lines = (value.match(LINE) ?? []).filter((l) => l !== '');
  let ind = indent;
  let allow = allowance;
  if (level === 1) {
    ind += 1;
    allow += 1;
  }
  const maxWidth = width - ind;
  const chunks: string[] = [];
  lines.forEach((line, i) => {
    const lastLine = i === lines.length - 1;
    const rep = pyStr(line);
    if (rep.length <= maxWidth - (lastLine ? allow : 0)) {
      chunks.push(rep);
      return;
    }
    // alternating runs of non-space and space, split where the next would not fit
    const parts = line.match(/\S*\s*/g)!.filter((p) => p !== '');
    let current = '';
    parts.forEach((part, j) => {
      const candidate = current + part;
      const limit = maxWidth - (j === parts.length - 1 && lastLine ? allow : 0);
      if (pyStr(candidate).length > limit) {
        if (current) chunks.push(pyStr(current));
        current = part;
      } else {
        current = candidate;
      }
    });
    if (current) chunks.push(pyStr(current));
  });
  if (chunks.length === 1) return chunks[0]!;
  const body = chunks.join(`\n${' '.repeat(ind)}`);
  return level === 1 ? `(${body})` : body;
}
