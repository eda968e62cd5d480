// The `Prefer` request header (RFC 7240): what a client would like the server to do, which the
// server may ignore. Parsed by the RFC's grammar —
//
//   Prefer     = 1#preference
//   preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
//   word       = token / quoted-string
//
// — over every `Prefer` header of the request, as one comma-separated list. Names are compared
// without case; the first occurrence of a name counts and later ones are ignored (§2); an empty
// value is no value; parameters are read past (no preference allot honours has any); an element
// that does not parse is ignored, as a preference the server does not understand (§2: never an
// error).

/** A preference's name (lower case) → its value (null: none given, or empty), first occurrence only. */
export function parsePreferences(header: string | string[] | undefined): Map<string, string | null> {
  const preferences = new Map<string, string | null>();
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const element of splitOutsideQuotes(text, ',')) {
    const preference = parsePreference(splitOutsideQuotes(element, ';')[0] ?? '');
    if (preference && !preferences.has(preference.name)) preferences.set(preference.name, preference.value);
  }
  return preferences;
}

/**
 * `wait=N` (RFC 7240 §4.3): the seconds the client would wait for the final answer, or null when
 * it asks for none — absent, or a value that is not delta-seconds (digits only), which the server
 * ignores.
 */
export function preferredWait(header: string | string[] | undefined): number | null {
  const value = parsePreferences(header).get('wait');
  if (value === undefined || value === null || !/^[0-9]+$/.test(value)) return null;
  return Number(value);
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function parsePreference(text: string): { name: string; value: string | null } | null {
  const equals = scan(text, '=', 0);
  const name = (equals < 0 ? text : text.slice(0, equals)).trim();
  if (!TOKEN.test(name)) return null;
  if (equals < 0) return { name: name.toLowerCase(), value: null };
  const raw = text.slice(equals + 1).trim();
  let value: string | null;
  if (raw.startsWith('"')) {
    value = unquote(raw);
    if (value === null) return null;
  } else {
    if (raw !== '' && !TOKEN.test(raw)) return null;
    value = raw;
  }
  return { name: name.toLowerCase(), value: value === '' ? null : value };
}

/** A quoted-string's content (quoted pairs resolved), or null when the text is not exactly one. */
function unquote(raw: string): string | null {
  let out = '';
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      if (i + 1 >= raw.length) return null;
      out += raw[++i];
    } else if (c === '"') {
      return i === raw.length - 1 ? out : null;
    } else {
      out += c;
    }
  }
  return null;
}

/** Split at `separator` where it is not inside a quoted-string. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = scan(text, separator, 0); i >= 0; i = scan(text, separator, start)) {
    parts.push(text.slice(start, i));
    start = i + 1;
  }
  parts.push(text.slice(start));
  return parts;
}

/** The index of the next `char` at or after `from` outside a quoted-string, or -1. */
function scan(text: string, char: string, from: number): number {
  let quoted = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === char) return i;
  }
  return -1;
}
