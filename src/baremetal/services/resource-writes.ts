// What the chassis, port and deploy-template services share: a patch's checked edit, a write that
// may collide on a unique column, and how JSON and boolean columns are written.
import type { DomainError } from '../../core/errors.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';

export const asJson = (v: unknown) => JSON.stringify(v ?? {});
export const flag = (b: boolean) => (b ? 1 : 0);

/** What the route makes of a document after a patch: the checked values, and which fields changed. */
export interface Edit<T> {
  fields: T;
  changed(field: keyof T & string): boolean;
}

/**
 * A write whose unique columns may have been taken by a concurrent one between the check and the
 * insert: the loser reports what it collided with, found by `collision` after the fact.
 */
export async function uniquely<T>(work: () => Promise<T>, collision: () => Promise<DomainError>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) throw await collision();
    throw err;
  }
}
