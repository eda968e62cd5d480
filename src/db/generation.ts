// The one optimistic-concurrency helper: move a row's generation (or version) from `expected` to
// `expected + 1`, or report that someone else moved it first.
import type { Compilable } from 'kysely';
import { writeStatement } from './statement.js';
import type { Tx } from './database.js';

/** Each versioned table and the name of its counter column. */
const VERSION_COLUMNS = {
  resource_providers: 'generation',
  consumers: 'generation',
  ids_pools: 'generation',
  ids_allocations: 'version',
  ids_allocation_specs: 'version',
  ids_service_instances: 'version',
} as const;

export type VersionedTable = keyof typeof VERSION_COLUMNS;

/**
 * `UPDATE … SET generation = generation + 1 WHERE id = ? AND generation = ?` (the column is
 * `version` on some tables), setting `also` in the same statement.
 * When no row matched, throws what `lost()` returns: a client-facing 409 when the client supplied
 * the generation, a RetryableConflict when the server read it itself.
 */
export async function bumpGeneration(
  tx: Tx,
  table: VersionedTable,
  id: number | string,
  expected: number,
  lost: () => Error,
  also: Record<string, unknown> = {},
): Promise<number> {
  const { statement, params } = bump(tx, table, id, expected, also);
  if ((await statement.run(tx, params)) !== 1) throw lost();
  return expected + 1;
}

/**
 * The same compare-and-set as a query, for a caller that sends it with other writes in one round
 * trip (`writeTogether`, last, so that its changed-row count is the one returned): 1 row changed
 * means the generation moved from `expected` to `expected + 1`.
 */
export function bumpGenerationQuery(tx: Tx, table: VersionedTable, id: number | string, expected: number, also: Record<string, unknown> = {}): Compilable {
  const { statement, params } = bump(tx, table, id, expected, also);
  return statement.compilable(tx, params);
}

/**
 * The compare-and-set of both: hot paths (every claim bumps a consumer and a provider, every
 * identifier allocation its pools), so plain SQL, one text per shape.
 */
function bump(tx: Tx, table: VersionedTable, id: number | string, expected: number, also: Record<string, unknown>) {
  const column = VERSION_COLUMNS[table];
  const extra = Object.keys(also).filter((c) => c !== column && c !== 'updated_at');
  const sets = [...extra.map((c) => `${c} = ?`), `${column} = ?`, 'updated_at = ?'].join(', ');
  return {
    statement: writeStatement(`update ${table} set ${sets} where id = ? and ${column} = ?`),
    params: [...extra.map((c) => also[c]), expected + 1, tx.clock.nowIso(), id, expected],
  };
}
