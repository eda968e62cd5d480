// The rows the candidates index (provider-index.ts) is built from, read in bulk: a chunk of
// providers — an id range, or a list of ids — with their inventories, traits and aggregates in ONE
// statement, each of the four as one text the database packs ("f,f,f;f,f,f"), which the index
// reads field by field as it applies it. At a million providers the rows as driver objects (one per
// row, a property per column) cost more than everything else in a load: with node-postgres their
// parsing and garbage collection, with better-sqlite3 a JavaScript value per column. Names come
// as ids, resolved with the name tables (`readNames`).
import type { Database } from '../../db/database.js';
import { readStatement } from '../../db/statement.js';
import type { ThreadReader } from '../../db/thread-reader.js';

/**
 * Some providers and their rows, each part packed by the database as one text: fields separated
 * by ',' (or ':' where a short form of the row follows) and rows by ';' (read with PackedLines).
 */
export interface PackedProviders {
  /** id, generation, parent id (0: none), root id, uuid — a root "id,generation:uuid"; in any order */
  providers: string;
  /**
   * provider id, class id, then total, reserved, min_unit, max_unit, step_size, allocation_ratio, used
   * — with the defaults "provider,class:total,allocation_ratio,used"; in any order
   */
  inventories: string;
  /** provider id, trait id; in any order */
  traits: string;
  /** provider id, aggregate uuid; in any order */
  aggregates: string;
  /** the largest resource class and trait ids these rows name (0: none): whether the name tables know them all */
  maxClassId: number;
  maxTraitId: number;
  /** a chunk: the id of the `aheadBy`-th provider after its end (LAST_CHUNK: there are fewer) */
  ahead: number;
}

/**
 * Which providers: those with ids in (after, through] (a chunk of a full load, which also finds
 * the end of a chunk to come: the `aheadBy`-th provider after `through`), or these ids.
 */
export type ProviderSelection = { after: number; through: number; aheadBy: number } | { ids: readonly number[] };

/** The end of a chunk that takes every provider after its start: there is no next chunk. */
export const LAST_CHUNK = Number.MAX_SAFE_INTEGER;

const packedText = (dialect: Database['dialect'], selection: 'chunk' | 'ids') => {
  // PostgreSQL: format()'s %s writes integers and (shortest exact) doubles as text — with half the
  // server CPU of concat_ws (610 against 710–1 260 ms for 200 000 providers' inventories), which
  // looks up each argument's output function on every row. SQLite: format(), 17 significant digits
  // so that a ratio reads back as the same double. Rows come in the order of the scan (by id,
  // through the primary key or the (provider, class) index) and their reader copes with any (an
  // ORDER BY inside the aggregate cost a sort per chunk, a quarter of the statement).
  const pg = dialect === 'postgres';
  const pack = (fields: string[], format: string) =>
    pg ? `format('${format.replace(/%[^,:;]+/g, '%s')}', ${fields.join(', ')})` : `format('${format}', ${fields.join(', ')})`;
  // Fewer characters where most rows say the same (each value written costs the database as much
  // as the row's scan, and the index as much again to read): an inventory with the defaults
  // (reserved 0, min_unit 1, max_unit = total, step_size 1) is written "provider,class:total,ratio,used",
  // a root provider "id,generation:uuid" — the ':' says which (PackedLines.endedWith). Measured
  // on SQLite, 200 000 providers' inventories: 35 % fewer characters, a fifth less CPU
  // (docs/performance.md).
  const shortOr = (when: string, short: string, full: string) => `case when ${when} then ${short} else ${full} end`;
  const aggregate = (row: string) => (pg ? `string_agg(${row}, ';')` : `group_concat(${row}, ';')`);
  // A chunk is an id range whose ends earlier statements found, and finds in the same statement
  // the end of a chunk to come (CHUNK_END's walk), so that several chunks can be asked for at once
  // (provider-index.ts: LOAD_AHEAD) and each end is found once, by one statement.
  const id = pg ? 'cast(? as bigint)' : '?';
  const where =
    selection === 'chunk'
      ? (c: string) => `${c} > ${id} and ${c} <= ${id}`
      : pg
        ? (c: string) => `${c} = any(cast(? as integer[]))`
        : (c: string) => `${c} in (select value from json_each(?))`;
  const inventory = shortOr(
    'reserved = 0 and min_unit = 1 and step_size = 1 and max_unit = total',
    pack(['resource_provider_id', 'resource_class_id', 'total', 'allocation_ratio', 'used'], '%d,%d:%d,%!.17g,%d'),
    pack(
      ['resource_provider_id', 'resource_class_id', 'total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio', 'used'],
      '%d,%d,%d,%d,%d,%d,%d,%!.17g,%d',
    ),
  );
  const provider = shortOr(
    'parent_provider_id is null and (root_provider_id is null or root_provider_id = id)',
    pack(['id', 'generation', 'uuid'], '%d,%d:%s'),
    pack(['id', 'generation', 'coalesce(parent_provider_id, 0)', 'coalesce(root_provider_id, id)', 'uuid'], '%d,%d,%d,%d,%s'),
  );
  // (as a subquery: a statement is a read when it begins with select)
  return `select * from (select p.providers, i.inventories, i.max_class, t.traits, t.max_trait, a.aggregates${selection === 'chunk' ? `, ${chunkEnd(dialect)} as ahead` : ''} from
    (select ${aggregate(provider)} as providers from resource_providers where ${where('id')}) as p,
    (select ${aggregate(inventory)} as inventories, max(resource_class_id) as max_class
      from inventories where ${where('resource_provider_id')}) as i,
    (select ${aggregate(pack(['resource_provider_id', 'trait_id'], '%d,%d'))} as traits, max(trait_id) as max_trait
      from resource_provider_traits where ${where('resource_provider_id')}) as t,
    (select ${aggregate(pack(['pa.resource_provider_id', 'a.uuid'], '%d,%s'))} as aggregates
      from resource_provider_aggregates pa join aggregates a on a.id = pa.aggregate_id where ${where('pa.resource_provider_id')}) as a) as packed`;
};

/** The id of the (offset + 1)-th provider after an id; LAST_CHUNK when there are fewer. */
const chunkEnd = (dialect: Database['dialect']) => {
  const id = dialect === 'postgres' ? 'cast(? as bigint)' : '?';
  return `coalesce((select id from resource_providers where id > ${id} order by id limit 1 offset ${id}), ${LAST_CHUNK})`;
};
const CHUNK_END = {
  postgres: readStatement<{ ahead: number | string }>(`select ${chunkEnd('postgres')} as ahead`),
  sqlite: readStatement<{ ahead: number | string }>(`select ${chunkEnd('sqlite')} as ahead`),
};

/** The id of the `count`-th provider after the id `after` (LAST_CHUNK: there are fewer): a full load's first chunk ends. */
export async function readChunkEnd(database: Database, after: number, count: number): Promise<number> {
  const row = await CHUNK_END[database.dialect].one(database, [after, count - 1]);
  return Number(row?.ahead ?? LAST_CHUNK);
}

type Packed = {
  providers: string | null;
  inventories: string | null;
  max_class: number | null;
  traits: string | null;
  max_trait: number | null;
  aggregates: string | null;
  ahead?: number | string;
};
const SQLITE_CHUNK = packedText('sqlite', 'chunk');
const STATEMENTS = {
  chunk: {
    postgres: readStatement<Packed>(packedText('postgres', 'chunk')),
    sqlite: readStatement<Packed>(SQLITE_CHUNK),
  },
  // The ids go as one parameter (an array on PostgreSQL, a JSON array on SQLite): thousands of
  // stale providers cost one bind, not thousands.
  ids: {
    postgres: readStatement<Packed>(packedText('postgres', 'ids')),
    sqlite: readStatement<Packed>(packedText('sqlite', 'ids')),
  },
};

/** The rows of some providers, in one statement; a chunk on SQLite through `reader` when given (another thread). */
export async function readProviders(database: Database, which: ProviderSelection, reader?: ThreadReader): Promise<PackedProviders> {
  const dialect = database.dialect;
  const chunk = !('ids' in which);
  // a chunk: where the walk to a later end starts, then its range for each of the four parts (ids: the same list for each)
  const params = chunk
    ? [which.through, which.aheadBy - 1, ...Array<number[]>(4).fill([which.after, which.through]).flat()]
    : Array<unknown>(4).fill(dialect === 'postgres' ? which.ids : JSON.stringify(which.ids));
  // the statement is sent before this function first awaits: a caller that goes on with other
  // work (applying the chunk before) has the database at work meanwhile
  const row =
    reader && dialect === 'sqlite' && chunk
      ? await reader.one<Packed>(SQLITE_CHUNK, params)
      : await STATEMENTS[chunk ? 'chunk' : 'ids'][dialect].one(database, params);
  return {
    providers: row?.providers ?? '',
    inventories: row?.inventories ?? '',
    traits: row?.traits ?? '',
    aggregates: row?.aggregates ?? '',
    maxClassId: Number(row?.max_class ?? 0),
    maxTraitId: Number(row?.max_trait ?? 0),
    ahead: Number(row?.ahead ?? LAST_CHUNK),
  };
}

/** Resource class and trait names by id, and the largest id of each. */
export async function readNames(database: Database): Promise<Names> {
  const [classes, traits] = await Promise.all([CLASS_NAMES.all(database, []), TRAIT_NAMES.all(database, [])]);
  const byId = (rows: Array<{ id: number; name: string }>) => new Map(rows.map((r) => [Number(r.id), r.name]));
  const maxId = (rows: Array<{ id: number }>) => Math.max(0, ...rows.map((r) => Number(r.id)));
  return { classes: byId(classes), traits: byId(traits), maxClassId: maxId(classes), maxTraitId: maxId(traits) };
}

export interface Names {
  classes: Map<number, string>;
  traits: Map<number, string>;
  maxClassId: number;
  maxTraitId: number;
}
const CLASS_NAMES = readStatement<{ id: number; name: string }>('select id, name from resource_classes');
const TRAIT_NAMES = readStatement<{ id: number; name: string }>('select id, name from traits');

/** Reads "f,f:f;f,f,f" field by field: integers as digits, everything else as text. */
export class PackedLines {
  private at = 0;
  constructor(private readonly source: string) {}

  get done(): boolean {
    return this.at >= this.source.length;
  }

  /** whether the field just read ended with this character (its code): ':' says a short row follows */
  endedWith(code: number): boolean {
    return this.source.charCodeAt(this.at - 1) === code;
  }

  /** the next integer, left to be read again */
  peekInt(): number {
    const at = this.at;
    const n = this.int();
    this.at = at;
    return n;
  }

  int(): number {
    const t = this.source;
    let i = this.at;
    const negative = t.charCodeAt(i) === 45; // '-'
    if (negative) i++;
    let n = 0;
    for (let c = t.charCodeAt(i); c >= 48 && c <= 57; c = t.charCodeAt(++i)) n = n * 10 + (c - 48);
    this.at = i + 1; // past the ',', ':' or ';'
    return negative ? -n : n;
  }

  /**
   * The next number, as Number() would read it. Without a string: digits with at most 15 of them
   * (an integer below 2^53 over a power of ten below 10^22, both exact as doubles, so their quotient
   * is the correctly rounded value); anything else (an exponent, more digits) through Number().
   */
  real(): number {
    const t = this.source;
    const from = this.at;
    let i = from;
    const negative = t.charCodeAt(i) === 45; // '-'
    if (negative) i++;
    let n = 0;
    let digits = 0;
    let scale = 1;
    let c = t.charCodeAt(i);
    for (; c >= 48 && c <= 57; c = t.charCodeAt(++i), digits++) n = n * 10 + (c - 48);
    if (c === 46)
      // '.'
      for (c = t.charCodeAt(++i); c >= 48 && c <= 57; c = t.charCodeAt(++i), digits++) {
        n = n * 10 + (c - 48);
        scale *= 10;
      }
    if (digits === 0 || digits > 15 || !(i >= t.length || c === 44 || c === 59)) return Number(this.text());
    this.at = i + 1; // past the ',' or ';'
    const value = n / scale;
    return negative ? -value : value;
  }

  text(): string {
    const t = this.source;
    let end = this.at;
    for (let c = t.charCodeAt(end); end < t.length && c !== 44 && c !== 59; c = t.charCodeAt(++end));
    const value = t.slice(this.at, end);
    this.at = end + 1;
    return value;
  }
}
