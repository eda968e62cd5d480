// What a set-based fill of many rows needs on either database: a database opened for a bulk write
// (statements over every row, which a loaded machine may take minutes over), migrated, with the
// standard names, one transaction; a series of numbers and uuids derived from a number column in
// SQL. Used by the tests' provider fill (fill-providers.ts) and the candidates bench's
// (bench/lib/fill-candidates.ts).
import { type RawBuilder, sql } from 'kysely';
import type { Tx } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { transaction } from '../../src/db/transaction.js';
import { syncStandardNames } from '../../src/placement/services/standard-names.js';

export interface FillSql {
  /** a query of the numbers first…last as column `i` */
  numbers(first: number, last: number): RawBuilder<unknown>;
  /** a uuid made of the number column `of`, its fourth group `variant` */
  uuid(of: string, variant: string): RawBuilder<unknown>;
  /** the time stamp every row gets */
  now: string;
}

export async function bulkFill(url: string, dialect: 'sqlite' | 'postgres', fill: (tx: Tx, s: FillSql) => Promise<void>): Promise<void> {
  const database = await openDatabase(url, { sqliteSync: 'off', statementTimeoutMs: 600_000, idleInTransactionTimeoutMs: 600_000 });
  try {
    await database.measureClock?.();
    await migrate(database);
    await syncStandardNames(database);
    const hex = (width: number, of: string) => (dialect === 'sqlite' ? sql.raw(`printf('%0${width}x', ${of})`) : sql.raw(`lpad(to_hex(${of}), ${width}, '0')`));
    const s: FillSql = {
      numbers: (first, last) =>
        dialect === 'sqlite'
          ? sql`with recursive n(i) as (select ${first} union all select i + 1 from n where i < ${last}) select i from n`
          : sql`select i from generate_series(cast(${first} as integer), cast(${last} as integer)) as i`,
      uuid: (of, variant) => sql`${hex(8, of)} || '-0000-4000-${sql.raw(variant)}-' || ${hex(12, of)}`,
      now: new Date().toISOString(),
    };
    await transaction(database, (tx) => fill(tx, s));
  } finally {
    await database.close();
  }
}
