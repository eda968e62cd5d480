// The one microversion type of allot: OpenStack APIs (Placement, Ironic) version every behaviour
// change as MAJOR.MINOR; handlers ask "is this request at least X?" or pick an entry (a schema, a
// set of fields) from a table keyed by the version that introduced it.
import type { JsonSchema } from './json-schema.js';
import { memo } from './memo.js';

export class Microversion {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  static parse(text: string): Microversion {
    const m = /^(\d+)\.(\d+)$/.exec(text);
    if (!m) throw new Error(`not a version: ${text}`);
    return new Microversion(Number(m[1]), Number(m[2]));
  }

  compare(other: Microversion | string): number {
    const o = typeof other === 'string' ? literal(other) : other;
    return this.major - o.major || this.minor - o.minor;
  }

  /** true when this request's version is `version` or later */
  atLeast(version: string): boolean {
    return this.compare(version) >= 0;
  }

  toString(): string {
    return `${this.major}.${this.minor}`;
  }
}

/**
 * A version written in the code (`mv.atLeast('1.15')`, version tables), parsed once: handlers ask
 * dozens of these per request. Only code literals come here, so the cache stays small.
 */
const literal = memo((text: string) => Microversion.parse(text), 1000);

/** Pick the entry for the highest version that is not above `mv` (e.g. a schema per version). */
export function byVersion<T>(mv: Microversion, table: Record<string, T>): T {
  let best: [Microversion, T] | null = null;
  for (const [version, value] of Object.entries(table)) {
    const v = literal(version);
    if (mv.compare(v) >= 0 && (!best || v.compare(best[0]) > 0)) best = [v, value];
  }
  if (!best) throw new Error(`no entry at or below ${mv} in version table`);
  return best[1];
}

/** A schema, or a table of schemas keyed by the microversion that introduced each. */
export type Schemas = JsonSchema | Readonly<Record<string, JsonSchema>>;

/** The schema of `schemas` at microversion `mv`. */
export function schemaAt(schemas: Schemas, mv: Microversion): JsonSchema {
  return isVersionTable(schemas) ? byVersion(mv, schemas) : schemas;
}

function isVersionTable(s: Schemas): s is Readonly<Record<string, JsonSchema>> {
  return Object.keys(s).length > 0 && Object.keys(s).every((k) => /^\d+\.\d+$/.test(k));
}
