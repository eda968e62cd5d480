// The one optimistic-concurrency helper: move a row's generation from `expected` to
// `expected + 1`, or report that someone else moved it first.
import { nowIso } from '../core/clock.js';
import type { Tx } from './transaction.js';

export type VersionedTable = 'resource_providers' | 'consumers';

/**
 * `UPDATE … SET generation = generation + 1 WHERE id = ? AND generation = ?`.
 * When no row matched, throws what `lost()` returns: a client-facing 409 when the client supplied
 * the generation, a RetryableConflict when the server read it itself.
 */
export async function bumpGeneration(tx: Tx, table: VersionedTable, id: number, expected: number, lost: () => Error): Promise<number> {
  const result = await tx.db
    .updateTable(table)
    .set({ generation: expected + 1, updated_at: nowIso() })
    .where('id', '=', id)
    .where('generation', '=', expected)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw lost();
  return expected + 1;
}
