// Resource classes and traits by name. The standard ones (os-resource-classes, os-traits) are
// written at start-up so every Placement client finds them; CUSTOM_* ones are created by users.
import type { Db, Tx } from '../../db/database.js';

import { placeholders, readStatement } from '../../db/statement.js';
import standardClasses from '../data/standard-resource-classes.json' with { type: 'json' };
import standardTraits from '../data/standard-traits.json' with { type: 'json' };

export const STANDARD_RESOURCE_CLASSES: readonly string[] = standardClasses.resource_classes;
export const STANDARD_TRAITS: readonly string[] = standardTraits.traits;

type NameTable = 'resource_classes' | 'traits' | 'consumer_types';

/** Insert the standard names of `table` that are missing (another process may insert them too). */
export async function insertStandardNames(tx: Tx, table: 'resource_classes' | 'traits', names: readonly string[]): Promise<void> {
  const existing = new Set((await tx.db.selectFrom(table).select('name').where('is_standard', '=', 1).execute()).map((r) => r.name));
  const missing = names.filter((n) => !existing.has(n));
  const now = tx.clock.nowIso();
  for (let i = 0; i < missing.length; i += 200) {
    const rows = missing.slice(i, i + 200).map((name) => ({ name, is_standard: 1, created_at: now, updated_at: now }));
    await tx.db
      .insertInto(table)
      .values(rows)
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
}

/** name → id for the given names that exist. */
export async function idsByName(db: Db, table: NameTable, names: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (names.length === 0) return out;
  const unique = [...new Set(names)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    // plain SQL: every claim resolves its class names here
    const rows = await readStatement<{ id: number; name: string }>(`select id, name from ${table} where name in (${placeholders(chunk.length)})`).all(
      db,
      chunk,
    );
    for (const r of rows) out.set(r.name, Number(r.id));
  }
  return out;
}

/**
 * The ids of the names this process has seen, per table: every claim resolves its class names, and
 * a lookup per claim was a round trip. One per process and database (the Placement context).
 *
 * A cached answer may be stale: another process may have renamed that class, or deleted it and
 * made a new one. `forTx` says which answers came from the cache, so the claim checks them against
 * what it reads under its locks and, when one is wrong, forgets the cache and runs again. This
 * process's own renames and deletes announce themselves to the provider index, which forgets the
 * cache at once.
 */
export class NameCache {
  private readonly tables = new Map<NameTable, Map<string, number>>();

  /** Inside a write: remembered only once committed (a row this transaction made may yet go). */
  forTx(tx: Tx, table: NameTable, names: readonly string[]): Promise<{ ids: Map<string, number>; cached: Set<string> }> {
    return this.lookUp(tx, table, names, (remember) => tx.afterCommit(remember));
  }

  /**
   * Outside a transaction (GET /allocation_candidates checks that the names it is given exist):
   * what it finds is committed, so it is remembered at once. A name deleted by another process
   * stays known until the provider index reloads everything, which such a delete announces;
   * meanwhile a search for it finds no provider.
   */
  async known(db: Db, table: NameTable, names: readonly string[]): Promise<Map<string, number>> {
    return (await this.lookUp(db, table, names, (remember) => remember())).ids;
  }

  forget(): void {
    this.tables.clear();
  }

  private async lookUp(db: Db, table: NameTable, names: readonly string[], whenSafe: (remember: () => void) => void) {
    let cache = this.tables.get(table);
    if (!cache) this.tables.set(table, (cache = new Map()));
    const ids = new Map<string, number>();
    const cached = new Set<string>();
    const missing: string[] = [];
    for (const name of names) {
      const id = cache.get(name);
      if (id === undefined) missing.push(name);
      else {
        ids.set(name, id);
        cached.add(name);
      }
    }
    const found = await idsByName(db, table, missing);
    for (const [name, id] of found) ids.set(name, id);
    const into = cache;
    if (found.size)
      whenSafe(() => {
        for (const [name, id] of found) into.set(name, id);
      });
    return { ids, cached };
  }
}
