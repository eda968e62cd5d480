// Resource providers and their trees: reading, listing with filters, creating, renaming,
// re-parenting and deleting. Every change to what a provider offers bumps its generation here.
import { sql } from 'kysely';
import { RetryableConflict } from '../../core/errors.js';
import { type ParentProblem, placementDomainError } from '../core/domain-errors.js';
import type { Db, ReadOnlyKysely, Tx } from '../../db/database.js';
import { bumpGeneration } from '../../db/generation.js';
import { rawRead, writeStatement } from '../../db/statement.js';

import { noteProvidersChanged } from './provider-index.js';

export interface ProviderView {
  id: number;
  uuid: string;
  name: string;
  generation: number;
  parent_provider_uuid: string | null;
  root_provider_uuid: string;
  root_provider_id: number;
  created_at: string;
  updated_at: string;
}

function selectProviders(db: ReadOnlyKysely) {
  return db
    .selectFrom('resource_providers as rp')
    .leftJoin('resource_providers as parent', 'parent.id', 'rp.parent_provider_id')
    .innerJoin('resource_providers as root', 'root.id', 'rp.root_provider_id')
    .select([
      'rp.id',
      'rp.uuid',
      'rp.name',
      'rp.generation',
      'parent.uuid as parent_provider_uuid',
      'root.uuid as root_provider_uuid',
      'rp.root_provider_id',
      'rp.created_at',
      'rp.updated_at',
    ]);
}

export async function findProvider(db: Db, uuid: string): Promise<ProviderView | undefined> {
  const row = await selectProviders(db.db).where('rp.uuid', '=', uuid).executeTakeFirst();
  return row as ProviderView | undefined;
}

export const providerNotFound = (uuid: string) => placementDomainError('provider_not_found', { uuid }, `no resource provider ${uuid}`);

export async function requireProvider(db: Db, uuid: string): Promise<ProviderView> {
  const provider = await findProvider(db, uuid);
  if (!provider) throw providerNotFound(uuid);
  return provider;
}

/**
 * Inside a write: the provider, locked until commit (PostgreSQL row lock; SQLite's writer lock
 * already covers it), so its generation and everything hanging off it stay as read.
 */
export async function lockProvider(tx: Tx, uuid: string): Promise<ProviderView> {
  const provider = await findAndLockProvider(tx, uuid);
  if (!provider) throw providerNotFound(uuid);
  return provider;
}

/** The provider locked until commit, or undefined when it does not exist (any more). */
export async function findAndLockProvider(tx: Tx, uuid: string): Promise<ProviderView | undefined> {
  if (tx.dialect === 'sqlite') return findProvider(tx, uuid);
  // Lock first, then read: the read, a statement of its own, sees the provider as the writer before
  // us left it. (One statement locking the joined read would not: a parent changed meanwhile
  // makes PostgreSQL's recheck of the join drop the row.)
  if (!(await LOCK_BY_UUID.one(tx, [uuid]))) return undefined;
  return findProvider(tx, uuid);
}

const LOCK_BY_UUID = writeStatement<{ id: number }>('select id from resource_providers where uuid = ? for update');

/** The generation a client sent is not the provider's. */
export const generationMismatch = (uuid: string, actual: number, given: number) =>
  placementDomainError('provider_generation_mismatch', { uuid, actual, given }, `provider ${uuid} is at generation ${actual}, not ${given}`);

/** The client's generation was right when read, and another writer moved it before the bump. */
const changedConcurrently = (uuid: string) => placementDomainError('provider_changed_concurrently', { uuid }, `provider ${uuid} changed concurrently`);

/** The client's generation, checked against a provider it locked. */
export function checkGeneration(provider: ProviderView, clientGeneration: number | undefined): void {
  if (clientGeneration !== undefined && clientGeneration !== provider.generation)
    throw generationMismatch(provider.uuid, provider.generation, clientGeneration);
}

/**
 * Bump a provider's generation after a change. `clientGeneration` is what the client sent (its
 * mismatch is the client's 409); without it, we compare with what we read, and losing is retried.
 */
export async function bumpProvider(
  tx: Tx,
  provider: ProviderView,
  { clientGeneration, usageOnly = false }: { clientGeneration?: number; usageOnly?: boolean } = {},
): Promise<number> {
  // A change of usage alone is reported to the candidates index by the caller (noteUsageChanged).
  if (!usageOnly) noteProvidersChanged(tx, [provider.id]);
  if (clientGeneration !== undefined) {
    checkGeneration(provider, clientGeneration);
    return bumpGeneration(tx, 'resource_providers', provider.id, clientGeneration, () => changedConcurrently(provider.uuid));
  }
  return bumpGeneration(
    tx,
    'resource_providers',
    provider.id,
    provider.generation,
    () => new RetryableConflict(`provider ${provider.uuid} changed concurrently`, () => changedConcurrently(provider.uuid)),
  );
}

export interface ProviderFilters {
  name?: string;
  uuid?: string;
  inTree?: string;
  /** each set: member of at least one of these aggregate uuids */
  aggregatesAnyOf?: string[][];
  forbiddenAggregates?: string[];
  /** trait ids: all required, none forbidden, one of each any-of set */
  requiredTraits?: number[];
  forbiddenTraits?: number[];
  traitsAnyOf?: number[][];
  /** resource class id → amount that must still fit */
  resources?: Map<number, number>;
}

export async function listProviders(db: Db, f: ProviderFilters): Promise<ProviderView[]> {
  let q = selectProviders(db.db);
  if (f.name !== undefined) q = q.where('rp.name', '=', f.name);
  if (f.uuid !== undefined) q = q.where('rp.uuid', '=', f.uuid);
  if (f.inTree !== undefined) {
    const tree = f.inTree;
    q = q.where('rp.root_provider_id', '=', (eb) => eb.selectFrom('resource_providers').select('root_provider_id').where('uuid', '=', tree));
  }
  const inAggregates = (uuids: string[]) =>
    db.db
      .selectFrom('resource_provider_aggregates as ra')
      .innerJoin('aggregates as a', 'a.id', 'ra.aggregate_id')
      .select('ra.resource_provider_id')
      .where('a.uuid', 'in', uuids);
  for (const anyOf of f.aggregatesAnyOf ?? []) q = q.where('rp.id', 'in', inAggregates(anyOf));
  if (f.forbiddenAggregates?.length) q = q.where('rp.id', 'not in', inAggregates(f.forbiddenAggregates));
  const withTraits = (ids: number[]) => db.db.selectFrom('resource_provider_traits').select('resource_provider_id').where('trait_id', 'in', ids);
  for (const id of f.requiredTraits ?? []) q = q.where('rp.id', 'in', withTraits([id]));
  for (const anyOf of f.traitsAnyOf ?? []) q = q.where('rp.id', 'in', withTraits(anyOf));
  if (f.forbiddenTraits?.length) q = q.where('rp.id', 'not in', withTraits(f.forbiddenTraits));
  for (const [classId, amount] of f.resources ?? []) {
    q = q.where('rp.id', 'in', (eb) =>
      eb
        .selectFrom('inventories as i')
        .select('i.resource_provider_id')
        .where('i.resource_class_id', '=', classId)
        .where('i.min_unit', '<=', amount)
        .where('i.max_unit', '>=', amount)
        .where(sql<number>`${amount} % i.step_size`, '=', 0)
        .where(sql<number>`(i.total - i.reserved) * i.allocation_ratio`, '>=', sql<number>`i.used + ${amount}`),
    );
  }
  return (await q.orderBy('rp.id').execute()) as ProviderView[];
}

export interface NewProvider {
  uuid: string;
  name: string;
  parentUuid: string | null;
}

export const nameTaken = (name: string) => placementDomainError('provider_name_taken', { name }, `a provider named ${name} exists`);
export const uuidTaken = (uuid: string) => placementDomainError('provider_uuid_taken', { uuid }, `a provider ${uuid} exists`);
const invalidParent = (uuid: string, name: string, problem: ParentProblem) =>
  placementDomainError('invalid_parent', { uuid, name, problem }, `provider ${uuid}: parent not acceptable (${problem})`);

/** Create a provider inside a caller's transaction (createProvider, and the bare-metal node mirror). */
export async function insertProvider(tx: Tx, input: NewProvider): Promise<ProviderView> {
  if (input.parentUuid === input.uuid) throw invalidParent(input.uuid, input.name, 'self');
  if (await tx.db.selectFrom('resource_providers').select('id').where('uuid', '=', input.uuid).executeTakeFirst()) throw uuidTaken(input.uuid);
  if (await tx.db.selectFrom('resource_providers').select('id').where('name', '=', input.name).executeTakeFirst()) throw nameTaken(input.name);
  let parent: ProviderView | undefined;
  if (input.parentUuid) {
    parent = await findAndLockProvider(tx, input.parentUuid);
    if (!parent) throw invalidParent(input.uuid, input.name, 'missing');
  }
  const now = tx.clock.nowIso();
  const inserted = await tx.db
    .insertInto('resource_providers')
    .values({
      uuid: input.uuid,
      name: input.name,
      generation: 0,
      parent_provider_id: parent?.id ?? null,
      root_provider_id: parent?.root_provider_id ?? null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (!parent) await tx.db.updateTable('resource_providers').set({ root_provider_id: inserted.id }).where('id', '=', inserted.id).execute();
  noteProvidersChanged(tx, [inserted.id]);
  return (await findProvider(tx, input.uuid))!;
}

export interface ProviderUpdate {
  name: string;
  /** undefined: not given, keep the parent; null: un-parent (1.37+) */
  parentUuid?: string | null;
}

/** Rename and/or re-parent a provider (`reparentAllowed`: 1.37+ may re-parent and un-parent). */
export async function changeProvider(tx: Tx, uuid: string, input: ProviderUpdate, reparentAllowed: boolean): Promise<ProviderView> {
  const provider = await lockProvider(tx, uuid);
  const changes: { name?: string; parent_provider_id?: number | null; updated_at: string } = { updated_at: tx.clock.nowIso() };
  if (input.name !== provider.name) {
    const clash = await tx.db.selectFrom('resource_providers').select('id').where('name', '=', input.name).executeTakeFirst();
    if (clash) throw nameTaken(input.name);
    changes.name = input.name;
  }
  let newRoot: number | undefined;
  if (input.parentUuid !== undefined && input.parentUuid !== provider.parent_provider_uuid) {
    if (input.parentUuid === null) {
      if (!reparentAllowed) throw invalidParent(uuid, provider.name, 'unparent');
      changes.parent_provider_id = null;
      newRoot = provider.id;
    } else {
      if (provider.parent_provider_uuid !== null && !reparentAllowed) throw invalidParent(uuid, provider.name, 'reparent');
      const parent = await findAndLockProvider(tx, input.parentUuid);
      if (!parent) throw invalidParent(uuid, provider.name, 'missing');
      if (await isInSubtree(tx, parent.id, provider.id)) throw invalidParent(uuid, provider.name, 'loop');
      changes.parent_provider_id = parent.id;
      newRoot = parent.root_provider_id;
    }
  }
  await tx.db.updateTable('resource_providers').set(changes).where('id', '=', provider.id).execute();
  if (changes.parent_provider_id !== undefined) {
    const subtree = await subtreeIds(tx, provider.id);
    if (newRoot !== provider.root_provider_id) {
      await tx.db.updateTable('resource_providers').set({ root_provider_id: newRoot! }).where('id', 'in', subtree).execute();
    }
    noteProvidersChanged(tx, subtree);
  }
  return (await findProvider(tx, uuid))!;
}

/** ids of a provider and all its descendants */
async function subtreeIds(db: Db, rootId: number): Promise<number[]> {
  const rows = await rawRead(
    db,
    sql<{ id: number }>`
    with recursive subtree(id) as (
      select cast(${rootId} as integer)
      union all
      select rp.id from resource_providers rp join subtree s on rp.parent_provider_id = s.id
    )
    select id from subtree`,
  );
  return rows.map((r) => Number(r.id));
}

async function isInSubtree(db: Db, candidateId: number, subtreeRootId: number): Promise<boolean> {
  return (await subtreeIds(db, subtreeRootId)).includes(candidateId);
}

/** Delete a provider (refused while it has allocations or children). */
export async function deleteProvider(tx: Tx, uuid: string): Promise<void> {
  const provider = await findAndLockProvider(tx, uuid);
  if (!provider) throw providerNotFound(uuid);
  const allocation = await tx.db.selectFrom('allocations').select('id').where('resource_provider_id', '=', provider.id).limit(1).executeTakeFirst();
  if (allocation) throw placementDomainError('provider_has_allocations', { uuid }, `provider ${uuid} has allocations`);
  const child = await tx.db.selectFrom('resource_providers').select('id').where('parent_provider_id', '=', provider.id).limit(1).executeTakeFirst();
  if (child) throw placementDomainError('provider_has_children', { uuid }, `provider ${uuid} has children`);
  await tx.db.deleteFrom('inventories').where('resource_provider_id', '=', provider.id).execute();
  await tx.db.deleteFrom('resource_provider_traits').where('resource_provider_id', '=', provider.id).execute();
  await tx.db.deleteFrom('resource_provider_aggregates').where('resource_provider_id', '=', provider.id).execute();
  // A root points at itself; clear that before the row goes.
  await tx.db.updateTable('resource_providers').set({ root_provider_id: null }).where('id', '=', provider.id).execute();
  await tx.db.deleteFrom('resource_providers').where('id', '=', provider.id).execute();
  noteProvidersChanged(tx, [provider.id]);
}
