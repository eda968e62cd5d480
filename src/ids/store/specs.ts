// Allocation specs: per attribute, where its value comes from (a pool, a lookup in an external
// inventory keyed by another attribute, or an external inventory that owns the allocation).
import type { Selectable } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import type { Database, Db } from '../../db/database.js';
import type { IdsAllocationSpecTable } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import { idsError, notFoundError, preconditionFailed } from '../errors.js';
import type { IdsRuntime } from '../runtime.js';
import type { Strategy } from '../core/pool-space.js';

export type SpecAttribute =
  | { from: 'pool'; pool: string; strategy?: Strategy; count?: number; prefix_length?: number }
  | { from: 'lookup'; inventory: string; key_attribute: string }
  | { from: 'inventory'; inventory: string; owner_attribute?: string };

export interface SpecInput {
  name: string;
  description?: string;
  attributes: Record<string, SpecAttribute>;
}

export type SpecRow = Selectable<IdsAllocationSpecTable>;

export interface Spec {
  id: number;
  name: string;
  description: string;
  attributes: Record<string, SpecAttribute>;
  version: number;
  created_at: string;
  updated_at: string;
}

export const toSpec = (row: SpecRow): Spec => ({
  id: row.id,
  name: row.name,
  description: row.description,
  attributes: JSON.parse(row.attributes) as Record<string, SpecAttribute>,
  version: row.version,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export function specView(spec: Spec) {
  const { id: _id, ...rest } = spec;
  return rest;
}

function checkSpec(input: SpecInput, runtime: IdsRuntime): void {
  for (const [attr, s] of Object.entries(input.attributes)) {
    if (s.from === 'pool') continue;
    const entry = runtime.entry(s.inventory);
    const needs = s.from === 'lookup' ? 'lookup' : 'allocateForOwner';
    if (!entry.inventory[needs]) throw idsError(422, 'ids.unknown_inventory', `Inventory ${s.inventory} does not offer ${needs} (attribute ${attr})`);
    const keyAttr = s.from === 'lookup' ? s.key_attribute : s.owner_attribute;
    if (keyAttr !== undefined && keyAttr in input.attributes) {
      throw idsError(422, 'ids.invalid_request', `attribute ${attr}: ${keyAttr} is itself allocated; a key or owner attribute must be set by the client`);
    }
  }
}

/** Create a spec; the same name with the same attributes again answers the existing one. */
export async function createSpec(database: Database, runtime: IdsRuntime, input: SpecInput): Promise<{ spec: Spec; created: boolean }> {
  checkSpec(input, runtime);
  const attributes = JSON.stringify(input.attributes);
  return transaction(database, async (tx) => {
    const existing = await tx.db.selectFrom('ids_allocation_specs').selectAll().where('name', '=', input.name).executeTakeFirst();
    if (existing) {
      if (existing.attributes === attributes) return { spec: toSpec(existing), created: false };
      throw idsError(409, 'ids.spec_exists', `An allocation spec named ${JSON.stringify(input.name)} exists with other attributes`);
    }
    const now = tx.clock.nowIso();
    try {
      const row = await tx.db
        .insertInto('ids_allocation_specs')
        .values({ name: input.name, description: input.description ?? '', attributes, version: 1, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { spec: toSpec(row), created: true };
    } catch (err) {
      if (isUniqueViolation(err)) throw new RetryableConflict('spec created concurrently', () => idsError(409, 'ids.spec_exists', 'created concurrently'));
      throw err;
    }
  });
}

export async function getSpec(db: Db, name: string): Promise<Spec> {
  const row = await db.db.selectFrom('ids_allocation_specs').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw notFoundError(`allocation spec ${JSON.stringify(name)}`);
  return toSpec(row);
}

export async function specById(db: Db, id: number): Promise<Spec> {
  return toSpec(await db.db.selectFrom('ids_allocation_specs').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
}

export async function listSpecs(db: Db, after: string | null, limit: number): Promise<Spec[]> {
  let q = db.db.selectFrom('ids_allocation_specs').selectAll();
  if (after !== null) q = q.where('name', '>', after);
  return (await q.orderBy('name').limit(limit).execute()).map(toSpec);
}

export async function deleteSpec(database: Database, name: string, ifMatch: number | null): Promise<void> {
  await transaction(database, async (tx) => {
    const spec = await getSpec(tx, name);
    if (ifMatch !== null && ifMatch !== spec.version) throw preconditionFailed(spec.version);
    const used = await tx.db.selectFrom('ids_service_instances').select('id').where('spec_id', '=', spec.id).limit(1).executeTakeFirst();
    if (used) throw idsError(409, 'ids.spec_in_use', `Service instances use allocation spec ${JSON.stringify(name)}`);
    await tx.db.deleteFrom('ids_allocation_specs').where('id', '=', spec.id).execute();
  });
}
