// SQL for bare-metal allocations and their requested traits. Every write a worker makes to an
// allocation is guarded by `conductor_affinity = <me>` (the spec's "HA and take over"), so a
// conductor that lost the allocation to a take-over can never overwrite the new owner's work.
import type { Insertable } from 'kysely';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import type { Db, ReadOnlyKysely, Tx } from '../../db/database.js';
import { type Statement, writeStatement } from '../../db/statement.js';
import type { BaremetalAllocationRow, BaremetalAllocationTable } from '../../db/schema.js';

import type { ColumnCondition, Page } from '../core/paging.js';
import { applyColumns, applyPage } from './paging.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export type AllocationState = 'allocating' | 'active' | 'error';
export const ALLOCATION_STATES: readonly AllocationState[] = ['allocating', 'active', 'error'];

export interface AllocationRecord extends BaremetalAllocationRow {
  traits: string[];
  node_uuid: string | null;
}

function selectAllocations(db: ReadOnlyKysely) {
  return db.selectFrom('baremetal_allocations as t').leftJoin('baremetal_nodes as n', 'n.id', 't.node_id').selectAll('t').select('n.uuid as node_uuid');
}

async function withTraits(db: Db, rows: Array<BaremetalAllocationRow & { node_uuid: string | null }>): Promise<AllocationRecord[]> {
  if (rows.length === 0) return [];
  const traits = new Map<number, string[]>();
  const ids = rows.map((r) => r.id);
  for (let i = 0; i < ids.length; i += 500) {
    const found = await db.db
      .selectFrom('baremetal_allocation_traits')
      .select(['allocation_id', 'trait'])
      .where('allocation_id', 'in', ids.slice(i, i + 500))
      .orderBy('trait')
      .execute();
    for (const r of found) traits.set(r.allocation_id, [...(traits.get(r.allocation_id) ?? []), r.trait]);
  }
  return rows.map((r) => ({ ...r, traits: traits.get(r.id) ?? [] }));
}

/** An allocation by uuid (any spelling oslo's is_uuid_like accepts) or by name. */
export async function findAllocation(db: Db, ident: string): Promise<AllocationRecord | undefined> {
  const q = selectAllocations(db.db);
  const row = await (isUuidLike(ident) ? q.where('t.uuid', '=', normalizeUuid(ident)) : q.where('t.name', '=', ident)).executeTakeFirst();
  return row ? (await withTraits(db, [row]))[0] : undefined;
}

export const allocationNotFound = (ident: string) => baremetalDomainError('allocation_not_found', { ident }, `no allocation ${ident}`);
export const allocationUuidTaken = (uuid: string) => baremetalDomainError('allocation_uuid_taken', { uuid }, `an allocation has uuid ${uuid}`);
export const allocationNameTaken = (name: string | null) => baremetalDomainError('allocation_name_taken', { name }, `an allocation is named ${name}`);

/** An allocation that exists; `allocation_not_found` otherwise. */
export async function requireAllocation(db: Db, ident: string): Promise<AllocationRecord> {
  const allocation = await findAllocation(db, ident);
  if (!allocation) throw allocationNotFound(ident);
  return allocation;
}

export async function findAllocationById(db: Db, id: number): Promise<AllocationRecord | undefined> {
  const row = await selectAllocations(db.db).where('t.id', '=', id).executeTakeFirst();
  return row ? (await withTraits(db, [row]))[0] : undefined;
}

/** The allocation, its row locked until commit on PostgreSQL. */
export async function lockAllocation(tx: Tx, ident: string | number): Promise<AllocationRecord | undefined> {
  if (tx.dialect === 'postgres') {
    let q = tx.db.selectFrom('baremetal_allocations').select('id');
    q = typeof ident === 'number' ? q.where('id', '=', ident) : isUuidLike(ident) ? q.where('uuid', '=', normalizeUuid(ident)) : q.where('name', '=', ident);
    const locked = await q.forUpdate().executeTakeFirst();
    if (!locked) return undefined;
    return findAllocationById(tx, locked.id);
  }
  return typeof ident === 'number' ? findAllocationById(tx, ident) : findAllocation(tx, ident);
}

/** A column of the allocation table (what the allocation list's column filters compare: routes/allocations.ts). */
export type AllocationColumn = keyof BaremetalAllocationTable & string;

/** The allocation list's filters: the declared column filters the request gives, and what the route makes of the others. */
export interface AllocationFilters {
  columns: readonly ColumnCondition[];
  nodeId?: number;
  owner?: string;
}

export async function listAllocations(db: Db, f: AllocationFilters, page: Page): Promise<AllocationRecord[]> {
  let q = applyColumns(selectAllocations(db.db), f.columns, db.dialect);
  if (f.nodeId !== undefined) q = q.where('t.node_id', '=', f.nodeId);
  if (f.owner !== undefined) q = q.where('t.owner', '=', f.owner);
  return withTraits(db, await applyPage(q, page).execute());
}

/** The allocation as inserted (without its node: it has none yet). */
export async function insertAllocation(tx: Tx, values: Insertable<BaremetalAllocationTable>, traits: string[]): Promise<AllocationRecord> {
  const row = await tx.db.insertInto('baremetal_allocations').values(values).returningAll().executeTakeFirstOrThrow();
  return withNewTraits(tx, row, traits);
}

/**
 * A new allocation, inserted unless its uuid is some node's instance_uuid (it would become that
 * node's instance): the check and the insert in one statement. Undefined when refused so; a uuid
 * or name another allocation has fails on its unique index.
 */
export async function insertNewAllocation(
  tx: Tx,
  values: Insertable<BaremetalAllocationTable> & { node_id: null; updated_at: null },
  traits: string[],
): Promise<AllocationRecord | undefined> {
  // node_id and updated_at are left out (null by default): the other columns are all text, which
  // PostgreSQL needs to type the parameters of the SELECT the insert reads from.
  const { node_id, updated_at, ...given } = values;
  const columns = Object.keys(given) as Array<keyof typeof given>;
  const row = await newAllocationInsert(columns).one(tx, [...columns.map((c) => given[c]), values.uuid]);
  return row && withNewTraits(tx, row, traits);
}

/**
 * The insert's text per set of columns (two callers, one set each): made once instead of built
 * and compiled per allocation — bare metal's SQLite path, and every reservation's (issue 31).
 */
const newAllocationInserts = new Map<string, Statement<BaremetalAllocationRow, Tx>>();
const allocationColumns = new Set<string>([
  'uuid',
  'name',
  'resource_class',
  'state',
  'last_error',
  'conductor_affinity',
  'candidate_nodes',
  'extra',
  'owner',
  'held_by',
  'created_at',
]);
function newAllocationInsert(columns: readonly string[]): Statement<BaremetalAllocationRow, Tx> {
  const key = columns.join(',');
  let statement = newAllocationInserts.get(key);
  if (!statement) {
    for (const c of columns) if (!allocationColumns.has(c)) throw new Error(`not an insertable column of baremetal_allocations: ${c}`);
    statement = writeStatement<BaremetalAllocationRow>(
      `insert into baremetal_allocations (${key}) select ${columns.map((c) => `? as ${c}`).join(', ')}
       where not exists (select id from baremetal_nodes where instance_uuid = ?) returning *`,
    );
    newAllocationInserts.set(key, statement);
  }
  return statement;
}

async function withNewTraits(tx: Tx, row: BaremetalAllocationRow, traits: string[]): Promise<AllocationRecord> {
  const unique = [...new Set(traits)].sort();
  if (unique.length)
    await writeStatement(`insert into baremetal_allocation_traits (allocation_id, trait) values ${unique.map(() => '(?, ?)').join(', ')}`).run(
      tx,
      unique.flatMap((trait) => [row.id, trait]),
    );
  return { ...row, traits: unique, node_uuid: null };
}

/** PATCH (1.57): a new name and extra. */
export async function updateAllocation(tx: Tx, id: number, changes: { name: string | null; extra: string }): Promise<void> {
  await tx.db
    .updateTable('baremetal_allocations')
    .set({ ...changes, updated_at: tx.clock.nowIso() })
    .where('id', '=', id)
    .execute();
}

/** An allocation's uuid by id (for the worker's failure message), if it still exists. */
export async function allocationUuid(db: Db, id: number): Promise<string | undefined> {
  return (await db.db.selectFrom('baremetal_allocations').select('uuid').where('id', '=', id).executeTakeFirst())?.uuid;
}

/** Who holds the allocation besides the API's clients (a service instance), or null. */
export async function allocationHolder(db: Db, id: number): Promise<string | null> {
  return (await db.db.selectFrom('baremetal_allocations').select('held_by').where('id', '=', id).executeTakeFirst())?.held_by ?? null;
}

/** The allocations a holder holds that have their node, with the node's uuid and name (one statement). */
export async function nodesHeldBy(db: Db, holder: string): Promise<Array<{ allocation: string; node: string; nodeName: string | null }>> {
  return db.db
    .selectFrom('baremetal_allocations as t')
    .innerJoin('baremetal_nodes as n', 'n.id', 't.node_id')
    .select(['t.uuid as allocation', 'n.uuid as node', 'n.name as nodeName'])
    .where('t.held_by', '=', holder)
    .orderBy('t.id')
    .execute();
}

export async function deleteAllocationRow(tx: Tx, id: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_allocation_traits').where('allocation_id', '=', id).execute();
  await tx.db.deleteFrom('baremetal_allocations').where('id', '=', id).execute();
}

/**
 * Finish an allocation this conductor works: `UPDATE … WHERE id = ? AND conductor_affinity = <me>
 * AND state = 'allocating'`. False when the allocation was deleted or taken over meanwhile.
 */
export async function finishAllocation(
  tx: Tx,
  id: number,
  conductor: string,
  outcome: { state: 'active'; nodeId: number } | { state: 'error'; lastError: string },
  now = tx.clock.nowIso(),
): Promise<boolean> {
  const changes = outcome.state === 'active' ? ['active', outcome.nodeId, null] : ['error', null, outcome.lastError];
  return (await finishing.run(tx, [...changes, now, id, conductor])) === 1;
}
const finishing = writeStatement(
  "update baremetal_allocations set state = ?, node_id = ?, last_error = ?, updated_at = ? where id = ? and conductor_affinity = ? and state = 'allocating'",
);

/** ids of this conductor's unfinished allocations, oldest first (resumed at start). */
export async function ownAllocating(db: Db, conductor: string): Promise<number[]> {
  const rows = await db.db
    .selectFrom('baremetal_allocations')
    .select('id')
    .where('state', '=', 'allocating')
    .where('conductor_affinity', '=', conductor)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Unfinished allocations whose conductor is not among `alive`. */
export async function orphanedAllocations(db: Db, alive: string[]): Promise<Array<{ id: number; conductor_affinity: string | null }>> {
  let q = db.db.selectFrom('baremetal_allocations').select(['id', 'conductor_affinity']).where('state', '=', 'allocating');
  if (alive.length) q = q.where((eb) => eb.or([eb('conductor_affinity', 'is', null), eb('conductor_affinity', 'not in', alive)]));
  return q.orderBy('id').execute();
}

/**
 * The take-over compare-and-set of the spec:
 * `UPDATE allocations SET conductor_affinity = <me> WHERE id = ? AND conductor_affinity = <dead>`.
 * True when this conductor now owns the allocation; false when another one was faster.
 */
export async function takeOverAllocation(db: Tx, id: number, dead: string | null, me: string): Promise<boolean> {
  const q = db.db.updateTable('baremetal_allocations').set({ conductor_affinity: me }).where('id', '=', id).where('state', '=', 'allocating');
  const result = await (dead === null ? q.where('conductor_affinity', 'is', null) : q.where('conductor_affinity', '=', dead)).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** How many allocations are in each state (the metrics' gauge, read at scrape time). */
export async function countAllocationsByState(db: Db): Promise<Map<string, number>> {
  const rows = await db.db
    .selectFrom('baremetal_allocations')
    .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('state')
    .execute();
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}
