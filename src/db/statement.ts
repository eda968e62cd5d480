// Hand-written SQL for the hot paths (a claim runs a dozen statements): `?` placeholders,
// rewritten for PostgreSQL (`$1`, …), run through Kysely's executor without its query builder and
// compiler — which cost more CPU than SQLite took to run the statements (profiled: ~45% of a
// claim). On PostgreSQL each text is a named prepared statement (parsed and planned once per
// connection) — as are the texts of rawRead and writeTogether below, hand-written hot-path SQL too
// (planning a free-range probe cost more than running it: 2.9 ms against 1.1 ms a reservation's
// probe, issue 31). Everything else keeps using the typed builder. A statement can also be one of
// the writes another statement takes in (`compilable`: writeTogether, ClosingWrites), so a hot
// write sent that way is not built and compiled per request either (issue 31: a reservation's
// instance, pools and free spans).
//
// A read runs on any handle; a write only inside a transaction (its methods take a Tx), like the
// builders. Make constant texts once, at module level; a text built per call (an IN list of n
// placeholders) costs one small string rewrite.
import { type Compilable, CompiledQuery, type RawBuilder } from 'kysely';
import { type Database, type Db, kyselyOf, type Tx } from './database.js';
import { prepareOnPostgres } from './open.js';

export interface Statement<R, H extends Db> {
  /** all rows */
  all(db: H, params: readonly unknown[]): Promise<R[]>;
  /** the first row, if any */
  one(db: H, params: readonly unknown[]): Promise<R | undefined>;
  /** rows changed */
  run(db: H, params: readonly unknown[]): Promise<number>;
  /** the statement with these values as a write another statement takes in (ClosingWrites, writeTogether), in the handle's dialect */
  compilable(db: H, params: readonly unknown[]): Compilable<R>;
}

/** A statement that only reads (`select …`, `pragma …`): runs on any handle. */
export function readStatement<R = Record<string, unknown>>(text: string): Statement<R, Db> {
  if (!/^\s*(select|pragma)\b/i.test(text)) throw new Error(`not a read: ${text.slice(0, 60)}`);
  return makeStatement<R, Db>(text);
}

/** A statement that writes (or locks): runs only inside a transaction. */
export function writeStatement<R = Record<string, unknown>>(text: string): Statement<R, Tx> {
  return makeStatement<R, Tx>(text);
}

function makeStatement<R, H extends Db>(text: string): Statement<R, H> {
  let n = 0;
  const postgresText = text.replace(/\?/g, () => `$${++n}`);
  const exec = (db: H, params: readonly unknown[]) => {
    const pg = db.dialect === 'postgres';
    if (pg) prepareOnPostgres(databaseOf(db), postgresText);
    return kyselyOf(db).executeQuery<R>(CompiledQuery.raw(pg ? postgresText : text, [...params]));
  };
  return {
    all: async (db, params) => (await exec(db, params)).rows,
    one: async (db, params) => (await exec(db, params)).rows[0],
    run: async (db, params) => Number((await exec(db, params)).numAffectedRows ?? 0),
    compilable: (db, params) => ({ compile: () => CompiledQuery.raw(db.dialect === 'postgres' ? postgresText : text, [...params]) as CompiledQuery<R> }),
  };
}

/** The database a handle belongs to (a Tx names it; a Database is it). */
function databaseOf(db: Db): Database {
  return 'database' in db ? (db as Tx).database : (db as Database);
}

/**
 * PostgreSQL: a write written as parts another statement's text takes in — its data-modifying
 * CTEs, the condition that it wrote everything (for the statement's `allot_assert`), and its
 * result columns — so that two writes that must happen together are one round trip.
 */
export interface StatementParts {
  ctes: string[];
  check: string;
  columns: string[];
}

/**
 * One domain's write as parts of a statement another domain builds (Placement's claim of the node
 * a bare-metal statement reserves): it renders its own parts with the statement's placeholders, on
 * a row the statement names, and reads its own result columns back once the statement ran — the
 * statement's builder knows nothing of its tables.
 */
export interface EmbeddedWrite {
  /** one text per shape: part of the key the enclosing statement's text is kept under */
  readonly shape: string;
  /** the values of its placeholders, in order */
  readonly params: readonly unknown[];
  /** its parts: placeholders named by `param`, the time stamp `now`, on the row whose uuid the SQL `rowUuid` gives */
  parts(param: (type: 'text' | 'integer') => string, now: string, rowUuid: string): StatementParts;
  /** once the statement ran: the row it returned (the parts' columns among others) */
  written(tx: Tx, row: Record<string, unknown>): void;
}

/** `?, ?, ?` for a list of n values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/**
 * A read written with Kysely's `sql` template (recursive CTEs, unions of probes) on any handle.
 * Refused unless it is a query: the template cannot be a way round transaction().
 */
export async function rawRead<R>(db: Db, query: RawBuilder<R>): Promise<R[]> {
  const compiled = query.compile(kyselyOf(db));
  if (!/^\s*\(?\s*(select|with)\b/i.test(compiled.sql) || /\b(insert|update|delete)\s/i.test(compiled.sql)) {
    throw new Error(`not a read: ${compiled.sql.slice(0, 60)}`);
  }
  if (db.dialect === 'postgres') prepareOnPostgres(databaseOf(db), compiled.sql);
  return (await kyselyOf(db).executeQuery<R>(compiled)).rows;
}

/**
 * Several writes of one transaction in one round trip. On PostgreSQL they become one statement:
 * every write but the last a data-modifying CTE (PostgreSQL runs each exactly once, referenced or
 * not), the last the statement itself. On SQLite they run one after another (in-process: there is
 * no round trip to save). The writes must not change the same row twice (the parts of one
 * PostgreSQL statement all see the same snapshot). Returns the rows the last write changed, so a
 * compare-and-set can go last.
 */
export async function writeTogether(tx: Tx, writes: ReadonlyArray<Compilable>): Promise<number> {
  const kysely = kyselyOf(tx);
  const compiled = writes.map((w) => w.compile());
  if (tx.dialect !== 'postgres') {
    let changed = 0;
    for (const c of compiled) changed = Number((await kysely.executeQuery(c)).numAffectedRows ?? 0);
    return changed;
  }
  // Kysely numbers each query's parameters from $1: shift them into one sequence.
  const params: unknown[] = [];
  const texts = compiled.map((c) => {
    const offset = params.length;
    params.push(...c.parameters);
    return c.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
  });
  const last = texts.pop()!;
  const text = texts.length === 0 ? last : `with ${texts.map((t, i) => `w${i} as (${t})`).join(', ')} ${last}`;
  prepareOnPostgres(databaseOf(tx), text);
  return Number((await kysely.executeQuery(CompiledQuery.raw(text, params))).numAffectedRows ?? 0);
}

/**
 * PostgreSQL: writes a transaction holds back for its last statement, so that rows every other
 * transaction of their kind waits for (a shared provider's, a pool's) are locked from that
 * statement to the commit instead of across the round trips before it (a reservation: issue 31).
 * Each write becomes a data-modifying CTE that must change `rows` rows (null: unchecked); each
 * embedded part adds its CTEs, its condition and its result columns. `send` runs them as ONE
 * statement asserting every count and condition: it raises, and keeps nothing, when any fails.
 * The writes must not change one row twice (the parts of a statement share its snapshot).
 */
export class ClosingWrites {
  private readonly writes: Array<{ query: Compilable; rows: number | null }> = [];
  private readonly parts: EmbeddedWrite[] = [];

  /** A write the statement makes, changing exactly `rows` rows (null: any number). */
  add(query: Compilable, rows: number | null): void {
    this.writes.push({ query, rows });
  }

  /** Another domain's write as parts of the statement (it names its own rows). */
  embed(part: EmbeddedWrite): void {
    this.parts.push(part);
  }

  async send(tx: Tx): Promise<void> {
    if (tx.dialect !== 'postgres') throw new Error('closing writes are PostgreSQL statements');
    if (!this.writes.length && !this.parts.length) return;
    const params: unknown[] = [tx.clock.nowIso()];
    const ctes: string[] = [];
    const checks: string[] = [];
    for (const [i, { query, rows }] of this.writes.entries()) {
      const c = query.compile();
      const offset = params.length;
      params.push(...c.parameters);
      const text = c.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
      ctes.push(`w${i} as (${text}${/\breturning\b/i.test(text) ? '' : ' returning 1'})`);
      if (rows !== null) checks.push(`(select count(*) from w${i}) = ${rows}`);
    }
    const columns: string[] = [];
    for (const part of this.parts) {
      // the part names its placeholders in the order of its values
      const start = params.length;
      const rendered = part.parts((type) => `$${params.push(undefined)}::${type}`, '$1::text', 'null');
      if (params.length - start !== part.params.length) throw new Error(`a part of shape ${part.shape} named other values than it has`);
      params.splice(start, part.params.length, ...part.params);
      ctes.push(...rendered.ctes);
      checks.push(rendered.check);
      columns.push(...rendered.columns);
    }
    const text = `with ${ctes.join(',\n')}\nselect allot_assert(${checks.join(' and ') || 'true'}, 'closing writes refused') as ok${columns.map((c) => `, ${c}`).join('')}`;
    prepareOnPostgres(databaseOf(tx), text);
    const row = (await kyselyOf(tx).executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, params))).rows[0]!;
    for (const part of this.parts) part.written(tx, row);
  }
}
