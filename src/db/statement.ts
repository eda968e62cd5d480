// Hand-written SQL for the hot paths (a claim runs a dozen statements): `?` placeholders,
// rewritten once for PostgreSQL (`$1`, …), run through Kysely's executor without its query
// builder and compiler — which cost more CPU than SQLite took to run the statements (profiled:
// ~45% of a claim). On PostgreSQL each text is a named prepared statement (parsed and planned once
// per connection). Everything else keeps using the typed builder.
import { CompiledQuery } from 'kysely';
import { type Db, preparedOnPostgres } from './database.js';

export interface Statement<R> {
  /** all rows */
  all(db: Db, params: readonly unknown[]): Promise<R[]>;
  /** the first row, if any */
  one(db: Db, params: readonly unknown[]): Promise<R | undefined>;
  /** rows changed */
  run(db: Db, params: readonly unknown[]): Promise<number>;
}

const cache = new Map<string, Statement<any>>();

/** The statement for this SQL text (made once per distinct text, e.g. per IN-list length). */
export function statement<R = Record<string, unknown>>(text: string): Statement<R> {
  let s = cache.get(text);
  if (!s) cache.set(text, (s = makeStatement<R>(text)));
  return s as Statement<R>;
}

function makeStatement<R>(text: string): Statement<R> {
  let n = 0;
  const postgresText = text.replace(/\?/g, () => `$${++n}`);
  preparedOnPostgres(postgresText);
  const compile = (db: Db, params: readonly unknown[]) => CompiledQuery.raw(db.dialect === 'postgres' ? postgresText : text, [...params]);
  const exec = (db: Db, params: readonly unknown[]) => db.db.executeQuery<R>(compile(db, params));
  return {
    all: async (db, params) => (await exec(db, params)).rows,
    one: async (db, params) => (await exec(db, params)).rows[0],
    run: async (db, params) => Number((await exec(db, params)).numAffectedRows ?? 0),
  };
}

/** `?, ?, ?` for a list of n values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}
