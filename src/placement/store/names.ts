// Resource classes and traits by name. The standard ones (os-resource-classes, os-traits) are
// written at start-up so every Placement client finds them; CUSTOM_* ones are created by users.
import type { Database, Db, ReadOnlyKysely } from '../../db/database.js';
import { type Tx, transaction } from '../../db/transaction.js';
import { placeholders, readStatement } from '../../db/statement.js';
import standardClasses from '../data/standard-resource-classes.json' with { type: 'json' };
import standardTraits from '../data/standard-traits.json' with { type: 'json' };

export const STANDARD_RESOURCE_CLASSES: readonly string[] = standardClasses.resource_classes;
export const STANDARD_TRAITS: readonly string[] = standardTraits.traits;

type NameTable = 'resource_classes' | 'traits' | 'consumer_types';

/** Insert whichever standard names are missing. Safe when several processes start together. */
export async function syncStandardNames(database: Database): Promise<void> {
  const now = database.clock.nowIso();
  for (const [table, names] of [
    ['resource_classes', STANDARD_RESOURCE_CLASSES],
    ['traits', STANDARD_TRAITS],
  ] as const) {
    const existing = new Set((await database.db.selectFrom(table).select('name').where('is_standard', '=', 1).execute()).map((r) => r.name));
    const missing = names.filter((n) => !existing.has(n));
    if (missing.length === 0) continue;
    await transaction(database, async (tx) => {
      for (let i = 0; i < missing.length; i += 200) {
        const rows = missing.slice(i, i + 200).map((name) => ({ name, is_standard: 1, created_at: now, updated_at: now }));
        await tx.db
          .insertInto(table)
          .values(rows)
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
      }
    });
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
    const rows = await readStatement<{ id: number; name: string }>(`select id, name from ${table} where name in (${placeholders(chunk.length)})`).all(db, chunk);
    for (const r of rows) out.set(r.name, Number(r.id));
  }
  return out;
}

export async function idByName(db: ReadOnlyKysely, table: NameTable, name: string): Promise<number | undefined> {
  const row = await db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirst();
  return row?.id;
}

const cachedIds = new WeakMap<Database, Map<NameTable, Map<string, number>>>();

/**
 * idsByName with a per-process cache of the names already seen, for the claim path. `cached` says
 * which answers came from the cache: another process may have renamed that class, or deleted it
 * and made a new one, so the caller checks them against what it reads and, when one is wrong,
 * forgets the cache (forgetCachedNames) and tries again. This process's own renames and deletes
 * forget it at once.
 */
export async function cachedIdsByName(tx: Tx, table: NameTable, names: readonly string[]): Promise<{ ids: Map<string, number>; cached: Set<string> }> {
  // Remembered only once committed: a row this transaction created may yet be rolled back.
  return lookUpCached(tx, tx.database, table, names, (remember) => tx.afterCommit(remember));
}

/**
 * The same for a read outside any transaction (GET /allocation_candidates checks that the names
 * it is given exist): what it finds is committed, so it is remembered at once. A name deleted by
 * another process stays known here until this process's provider index reloads everything,
 * which such a delete announces; meanwhile a search for it finds no provider.
 */
export async function knownIdsByName(database: Database, table: NameTable, names: readonly string[]): Promise<Map<string, number>> {
  return (await lookUpCached(database, database, table, names, (remember) => remember())).ids;
}

async function lookUpCached(db: Db, database: Database, table: NameTable, names: readonly string[], whenSafe: (remember: () => void) => void) {
  let tables = cachedIds.get(database);
  if (!tables) cachedIds.set(database, (tables = new Map()));
  let cache = tables.get(table);
  if (!cache) tables.set(table, (cache = new Map()));
  const ids = new Map<string, number>();
  const cached = new Set<string>();
  const missing: string[] = [];
  for (const name of names) {
    const id = cache.get(name);
    if (id === undefined) missing.push(name);
    else ids.set(name, id), cached.add(name);
  }
  const found = await idsByName(db, table, missing);
  for (const [name, id] of found) ids.set(name, id);
  const into = cache;
  if (found.size) whenSafe(() => found.forEach((id, name) => into.set(name, id)));
  return { ids, cached };
}

export function forgetCachedNames(database: Database): void {
  cachedIds.delete(database);
}
