// SQL of allocation specs: per attribute, where its value comes from (a pool, a lookup in an
// external inventory keyed by another attribute, or an external inventory that owns the allocation).
import type { Selectable } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import type { Db, Tx } from '../../db/database.js';
import type { IdsAllocationSpecTable } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { readStatement } from '../../db/statement.js';

import { idsDomainError } from '../core/domain-errors.js';
import type { SpecAttribute, SpecCreate, Spec as WireSpec } from '../../client/ids-wire.js';

// The attributes' shapes are the API's (schemas.ts): a node and capacity are reserved by
// services/engine-holdings.ts.
export type { SpecAttribute };

/** A spec as stored: the API's Spec (schemas.ts) and its row id. */
export type Spec = WireSpec & { id: number };

const toSpec = (row: Selectable<IdsAllocationSpecTable>): Spec => ({
  id: row.id,
  name: row.name,
  description: row.description,
  attributes: JSON.parse(row.attributes) as Record<string, SpecAttribute>,
  project_id: row.project_id,
  version: row.version,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

// every reservation reads its spec: a statement written once, not built and compiled per request
const specByName = readStatement<Selectable<IdsAllocationSpecTable>>('select * from ids_allocation_specs where name = ?');

export async function findSpec(db: Db, name: string): Promise<Spec | undefined> {
  const row = await specByName.one(db, [name]);
  return row && toSpec(row);
}

/** The spec of this name; `spec_not_found` when there is none. */
export async function getSpec(db: Db, name: string): Promise<Spec> {
  const spec = await findSpec(db, name);
  if (!spec) throw idsDomainError('spec_not_found', { spec: name });
  return spec;
}

export async function specById(db: Db, id: number): Promise<Spec> {
  return toSpec(await db.db.selectFrom('ids_allocation_specs').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
}

/** Specs by name after `after`; of a project and the shared ones when `project` is given. */
export async function listSpecs(db: Db, after: string | null, limit: number, project?: string | null): Promise<Spec[]> {
  let q = db.db.selectFrom('ids_allocation_specs').selectAll();
  if (after !== null) q = q.where('name', '>', after);
  if (project !== undefined)
    q = q.where((eb) => (project === null ? eb('project_id', 'is', null) : eb.or([eb('project_id', 'is', null), eb('project_id', '=', project)])));
  return (await q.orderBy('name').limit(limit).execute()).map(toSpec);
}

/** Insert a spec; a racer that created the name first makes the transaction run again. */
export async function insertSpec(tx: Tx, input: SpecCreate, attributes: string): Promise<Spec> {
  const now = tx.clock.nowIso();
  try {
    const row = await tx.db
      .insertInto('ids_allocation_specs')
      .values({
        name: input.name,
        description: input.description ?? '',
        attributes,
        project_id: input.project_id ?? null,
        version: 1,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toSpec(row);
  } catch (err) {
    if (isUniqueViolation(err))
      throw new RetryableConflict('spec created concurrently', () => idsDomainError('spec_created_concurrently', { spec: input.name }));
    throw err;
  }
}

export async function specInUse(db: Db, specId: number): Promise<boolean> {
  return (await db.db.selectFrom('ids_service_instances').select('id').where('spec_id', '=', specId).limit(1).executeTakeFirst()) !== undefined;
}

export async function deleteSpecRow(tx: Tx, specId: number): Promise<void> {
  await tx.db.deleteFrom('ids_allocation_specs').where('id', '=', specId).execute();
}
