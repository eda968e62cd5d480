// Service instances: attribute sets (candidate, active, rollback), a lifecycle, and the values
// allocated for them. A value is held while it appears in any set of a live instance; every
// change of the sets ends with `reconcileHoldings`, which releases pool values no set refers to
// any more and writes the deallocation of external ones to the outbox, in the same transaction.
//
// Validation calls external inventories outside the database transaction (they may be slow or
// down). Before an inventory allocates for an owner, a pending holding is committed, so a value
// the inventory hands out is never forgotten: if the instance goes away first, terminating it
// sends the deallocation for that owner anyway.
import type { Selectable } from 'kysely';
import { ApiError } from '../../http/errors.js';
import { RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import type { Database, Db } from '../../db/database.js';
import { bumpGeneration } from '../../db/generation.js';
import type { IdsServiceInstanceTable } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { type Tx, transaction } from '../../db/transaction.js';
import { idsError, notFoundError, preconditionFailed } from '../errors.js';
import type { JsonValue } from '../inventories/types.js';
import type { IdsRuntime } from '../runtime.js';
import { type InstanceState, type Lifecycle, afterAttributeUpdate, afterTerminate, isLive, requireAllowed } from '../core/lifecycle.js';
import { type AllocationRequest, allocationView, releaseInPool } from './allocate.js';
import { allocateInTx } from './allocations.js';
import { flushPool, lockPoolById } from './pools.js';
import { type Spec, getSpec, specById } from './specs.js';

export type InstanceRow = Selectable<IdsServiceInstanceTable>;
export type Attributes = Record<string, JsonValue>;

export const ownerOf = (instanceId: string) => `service-instance/${instanceId}`;

const parseSet = (text: string | null): Attributes | null => (text === null ? null : (JSON.parse(text) as Attributes));
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export interface InstanceView {
  id: string;
  service_type: string;
  allocation_spec: string;
  lifecycle: string;
  state: string;
  version: number;
  candidate_attributes: Attributes | null;
  candidate_validated: boolean;
  active_attributes: Attributes | null;
  rollback_attributes: Attributes | null;
  last_error: string | null;
  pending_deallocations: number;
  created_at: string;
  updated_at: string;
  terminated_at: string | null;
}

export async function instanceView(db: Db, row: InstanceRow, spec?: Spec): Promise<InstanceView> {
  const s = spec ?? (await specById(db, row.spec_id));
  const pending = await db.db
    .selectFrom('ids_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('instance_id', '=', row.id)
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    service_type: row.service_type,
    allocation_spec: s.name,
    lifecycle: row.lifecycle,
    state: row.state,
    version: row.version,
    candidate_attributes: parseSet(row.candidate),
    candidate_validated: row.candidate_validated === 1,
    active_attributes: parseSet(row.active),
    rollback_attributes: parseSet(row.rollback),
    last_error: row.last_error,
    pending_deallocations: Number(pending.n),
    created_at: row.created_at,
    updated_at: row.updated_at,
    terminated_at: row.terminated_at,
  };
}

async function readInstance(db: Db, id: string): Promise<InstanceRow> {
  const row = await db.db.selectFrom('ids_service_instances').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFoundError(`service instance ${id}`);
  return row;
}

async function lockInstance(tx: Tx, id: string): Promise<InstanceRow> {
  let q = tx.db.selectFrom('ids_service_instances').selectAll().where('id', '=', id);
  if (tx.dialect === 'postgres') q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw notFoundError(`service instance ${id}`);
  return row;
}

const lost = () => new RetryableConflict('instance changed under its lock', () => idsError(409, 'ids.concurrent_update', 'The instance changed concurrently; retry.'));

async function saveInstance(tx: Tx, row: InstanceRow, changes: Partial<InstanceRow>): Promise<InstanceRow> {
  await bumpGeneration(tx, 'ids_service_instances', row.id, row.version, lost, changes);
  return readInstance(tx, row.id);
}

function checkWritable(spec: Spec, attributes: Attributes, allowPoolValues: boolean): void {
  for (const name of Object.keys(attributes)) {
    const s = spec.attributes[name];
    if (!s) continue;
    if (s.from === 'pool' && allowPoolValues) continue;
    throw idsError(400, 'ids.attribute_read_only', `Attribute ${name} is filled by allocation (${s.from}) and cannot be set`, { attribute: name });
  }
}

export interface InstanceInput {
  id?: string;
  service_type?: string;
  allocation_spec: string;
  lifecycle?: Lifecycle;
  attributes: Attributes;
}

/**
 * Create an instance in state `start` with its attributes as the candidate set. Pool attributes
 * may be given (a value already in use: validation takes exactly it); others are read-only.
 * A client-chosen id makes creation idempotent.
 */
export async function createInstance(database: Database, input: InstanceInput): Promise<{ view: InstanceView; created: boolean }> {
  return transaction(database, async (tx) => {
    const spec = await getSpec(tx, input.allocation_spec).catch((err) => {
      if (err instanceof ApiError && err.status === 404) throw idsError(422, 'ids.invalid_request', err.message);
      throw err;
    });
    checkWritable(spec, input.attributes, true);
    const id = (input.id ?? newUuid()).toLowerCase();
    const lifecycle = input.lifecycle ?? 'simple';
    const serviceType = input.service_type ?? spec.name;
    const existing = await tx.db.selectFrom('ids_service_instances').selectAll().where('id', '=', id).executeTakeFirst();
    if (existing) {
      const sets = [parseSet(existing.candidate), parseSet(existing.active)].filter((s): s is Attributes => s !== null);
      const matches =
        existing.spec_id === spec.id &&
        existing.lifecycle === lifecycle &&
        existing.service_type === serviceType &&
        sets.some((set) => Object.entries(input.attributes).every(([k, v]) => same(set[k], v)));
      if (!matches) throw idsError(409, 'ids.instance_exists', `Service instance ${id} exists with other content`);
      return { view: await instanceView(tx, existing, spec), created: false };
    }
    const now = tx.clock.nowIso();
    try {
      await tx.db
        .insertInto('ids_service_instances')
        .values({
          id,
          service_type: serviceType,
          spec_id: spec.id,
          lifecycle,
          state: 'start',
          version: 1,
          candidate: JSON.stringify(input.attributes),
          candidate_validated: 0,
          active: null,
          rollback: null,
          last_error: null,
          terminated_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new RetryableConflict('instance created concurrently', () => idsError(409, 'ids.instance_exists', 'created concurrently'));
      throw err;
    }
    return { view: await instanceView(tx, await readInstance(tx, id), spec), created: true };
  });
}

export async function getInstance(db: Db, id: string): Promise<InstanceView> {
  return instanceView(db, await readInstance(db, id));
}

export async function listInstances(db: Db, filter: { state?: string; service_type?: string }, after: string | null, limit: number) {
  let q = db.db.selectFrom('ids_service_instances').selectAll();
  if (filter.state) q = q.where('state', '=', filter.state);
  if (filter.service_type) q = q.where('service_type', '=', filter.service_type);
  if (after !== null) q = q.where('id', '>', after);
  const rows = await q.orderBy('id').limit(limit + 1).execute();
  const items = [];
  for (const r of rows.slice(0, limit)) items.push(await instanceView(db, r));
  return { items, next: rows.length > limit ? rows[limit - 1]!.id : null };
}

/** The columns to change, or null for nothing to do (no version bump). */
type Change = (tx: Tx, row: InstanceRow, spec: Spec) => Promise<Partial<InstanceRow> | null>;

/** Lock, check If-Match, apply a change, bump the version, reconcile holdings. */
async function change(database: Database, id: string, ifMatch: number | null, apply: Change): Promise<InstanceView> {
  return transaction(database, async (tx) => {
    const row = await lockInstance(tx, id);
    if (ifMatch !== null && ifMatch !== row.version) throw preconditionFailed(row.version);
    const spec = await specById(tx, row.spec_id);
    const changes = await apply(tx, row, spec);
    if (changes === null) return instanceView(tx, row, spec);
    let saved = await saveInstance(tx, row, changes);
    const terminating = saved.state === 'terminated' || saved.state === 'deallocating';
    await reconcileHoldings(tx, saved, spec, terminating);
    if (saved.state === 'deallocating') {
      const state = afterTerminate(saved.lifecycle as Lifecycle, await pendingCount(tx, id));
      if (state === 'terminated') {
        await tx.db.updateTable('ids_service_instances').set({ state, terminated_at: tx.clock.nowIso() }).where('id', '=', id).execute();
        saved = await readInstance(tx, id);
      }
    }
    return instanceView(tx, saved, spec);
  });
}

const pendingCount = async (db: Db, instanceId: string) =>
  Number(
    (
      await db.db
        .selectFrom('ids_outbox')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('instance_id', '=', instanceId)
        .where('state', '=', 'pending')
        .executeTakeFirstOrThrow()
    ).n,
  );

/** JSON merge patch (RFC 7396) of the candidate set; null removes an attribute. */
export function updateAttributes(database: Database, id: string, attributes: Attributes, ifMatch: number | null): Promise<InstanceView> {
  return change(database, id, ifMatch, async (_tx, row, spec) => {
    requireAllowed(row.state as InstanceState, 'update_attributes');
    checkWritable(spec, attributes, false);
    const base = parseSet(row.candidate) ?? parseSet(row.active) ?? {};
    const next: Attributes = { ...base };
    for (const [k, v] of Object.entries(attributes)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    return { candidate: JSON.stringify(next), candidate_validated: 0, state: afterAttributeUpdate(row.state as InstanceState) };
  });
}

export function promote(database: Database, id: string, ifMatch: number | null): Promise<InstanceView> {
  return change(database, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, 'promote');
    if (row.candidate_validated !== 1) throw idsError(409, 'ids.invalid_state', 'Validate the candidate attributes before promoting them', { state: row.state });
    return { rollback: row.active, active: row.candidate, candidate: null, candidate_validated: 0, state: 'up' };
  });
}

export function rollback(database: Database, id: string, ifMatch: number | null): Promise<InstanceView> {
  return change(database, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, 'rollback');
    if (row.rollback === null) throw idsError(409, 'ids.invalid_state', 'There is no rollback set to return to', { state: row.state });
    return { active: row.rollback, rollback: row.active };
  });
}

export function clearSet(database: Database, id: string, set: 'candidate' | 'rollback', ifMatch: number | null): Promise<InstanceView> {
  return change(database, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, set === 'candidate' ? 'clear_candidate' : 'clear_rollback');
    if (set === 'candidate') return { candidate: null, candidate_validated: 0, state: 'up' };
    return { rollback: null };
  });
}

export function terminate(database: Database, id: string, ifMatch: number | null): Promise<InstanceView> {
  return change(database, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, 'terminate');
    if (row.state === 'terminated' || row.state === 'deallocating') return null;
    return { state: 'deallocating', candidate_validated: 0 };
  });
}

/**
 * Release what no set of the instance refers to any more (everything, when terminating): pool
 * allocations go back to their pools, external holdings become outbox deallocations.
 */
async function reconcileHoldings(tx: Tx, row: InstanceRow, spec: Spec, terminating: boolean): Promise<void> {
  const sets = terminating ? [] : [row.candidate, row.active, row.rollback].map(parseSet).filter((s): s is Attributes => s !== null);
  const referenced = (attr: string, value: unknown) => sets.some((s) => s[attr] !== undefined && same(s[attr], value));

  const allocations = await tx.db.selectFrom('ids_allocations').selectAll().where('owner', '=', ownerOf(row.id)).execute();
  const byPool = new Map<number, typeof allocations>();
  for (const a of allocations) byPool.set(a.pool_id, [...(byPool.get(a.pool_id) ?? []), a]);
  for (const poolId of [...byPool.keys()].sort((a, b) => a - b)) {
    const pool = await lockPoolById(tx, poolId);
    for (const a of byPool.get(poolId)!) {
      const attr = spec.attributes[a.purpose];
      const value = allocationView(pool, a).value;
      if (!(attr?.from === 'pool' && referenced(a.purpose, value))) await releaseInPool(tx, pool, a);
    }
    await flushPool(tx, pool);
  }

  const holdings = await tx.db.selectFrom('ids_external_holdings').selectAll().where('instance_id', '=', row.id).execute();
  const now = tx.clock.nowIso();
  for (const h of holdings) {
    const keep = h.value === null ? !terminating : referenced(h.attribute, JSON.parse(h.value));
    if (keep) continue;
    await tx.db.deleteFrom('ids_external_holdings').where('id', '=', h.id).execute();
    await tx.db
      .insertInto('ids_outbox')
      .values({
        inventory: h.inventory,
        operation: 'deallocate',
        owner_key: h.owner_key,
        attribute: h.attribute,
        instance_id: row.id,
        value: h.value,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        claimed_by: null,
        claimed_until: null,
        last_error: null,
        completed_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
}

/**
 * Validate the candidate set: look up and allocate what is missing (or whose lookup key changed)
 * and write the values into the candidate set. Values already present are kept (and held).
 */
export async function validate(database: Database, runtime: IdsRuntime, id: string, ifMatch: number | null): Promise<InstanceView> {
  const row = await readInstance(database, id);
  if (ifMatch !== null && ifMatch !== row.version) throw preconditionFailed(row.version);
  requireAllowed(row.state as InstanceState, 'validate');
  const spec = await specById(database, row.spec_id);
  const candidate = parseSet(row.candidate) ?? {};
  const active = parseSet(row.active);
  const found: Attributes = {};
  const ownerKeys = new Map<string, string>();

  try {
    for (const [attr, s] of Object.entries(spec.attributes)) {
      if (s.from === 'lookup') {
        const key = candidate[s.key_attribute];
        if (key === undefined || key === null) throw idsError(422, 'ids.missing_attribute', `Attribute ${s.key_attribute} (the lookup key of ${attr}) is not set`, { attribute: s.key_attribute });
        const keyChanged = active !== null && !same(active[s.key_attribute], key);
        if (candidate[attr] !== undefined && candidate[attr] !== null && !keyChanged) continue;
        const value = await runtime.call<JsonValue | null>(s.inventory, 'lookup', typeof key === 'string' ? key : JSON.stringify(key), { attribute: attr, instanceId: id });
        if (value === null || value === undefined) {
          throw idsError(422, 'ids.lookup_not_found', `Inventory ${s.inventory} has no ${attr} for ${JSON.stringify(key)}`, { attribute: attr });
        }
        found[attr] = value;
      } else if (s.from === 'inventory') {
        let ownerKey = id;
        if (s.owner_attribute) {
          const v = candidate[s.owner_attribute];
          if (v === undefined || v === null) throw idsError(422, 'ids.missing_attribute', `Attribute ${s.owner_attribute} (the owner of ${attr} in inventory ${s.inventory}) is not set`, { attribute: s.owner_attribute });
          ownerKey = typeof v === 'string' ? v : JSON.stringify(v);
        }
        ownerKeys.set(attr, ownerKey);
        const holding = await database.db
          .selectFrom('ids_external_holdings')
          .selectAll()
          .where('instance_id', '=', id)
          .where('attribute', '=', attr)
          .where('owner_key', '=', ownerKey)
          .executeTakeFirst();
        if (holding?.value != null) {
          found[attr] = JSON.parse(holding.value) as JsonValue;
          continue;
        }
        await recordPendingHolding(database, id, attr, s.inventory, ownerKey);
        found[attr] = await runtime.call<JsonValue>(s.inventory, 'allocateForOwner', ownerKey, { attribute: attr, instanceId: id });
      }
    }

    return await change(database, id, null, async (tx, locked, lockedSpec) => {
      if (locked.version !== row.version) throw idsError(409, 'ids.concurrent_update', 'The instance changed while it was being validated; validate again');
      requireAllowed(locked.state as InstanceState, 'validate');
      const next: Attributes = { ...candidate, ...found };
      const requests: Array<{ attr: string; req: AllocationRequest }> = [];
      for (const [attr, s] of Object.entries(lockedSpec.attributes)) {
        if (s.from !== 'pool') continue;
        const given = next[attr];
        requests.push({
          attr,
          req: {
            pool: s.pool,
            owner: ownerOf(id),
            purpose: attr,
            ...(given !== undefined && given !== null ? { value: given as number | string } : {}),
            ...(s.strategy ? { strategy: s.strategy } : {}),
            ...(s.count ? { count: s.count } : {}),
            ...(s.prefix_length !== undefined ? { prefix_length: s.prefix_length } : {}),
          },
        });
      }
      if (requests.length) {
        const results = await allocateInTx(tx, requests.map((r) => r.req), 'service-instance');
        results.forEach((r, i) => (next[requests[i]!.attr] = r.allocation.value));
      }
      for (const [attr, ownerKey] of ownerKeys) {
        await tx.db
          .updateTable('ids_external_holdings')
          .set({ value: JSON.stringify(next[attr]), updated_at: tx.clock.nowIso() })
          .where('instance_id', '=', id)
          .where('attribute', '=', attr)
          .where('owner_key', '=', ownerKey)
          .execute();
      }
      return { candidate: JSON.stringify(next), candidate_validated: 1, last_error: null };
    });
  } catch (err) {
    if (err instanceof ApiError) {
      const message = err.message;
      await transaction(database, async (tx) => {
        await tx.db.updateTable('ids_service_instances').set({ last_error: message }).where('id', '=', id).where('version', '=', row.version).execute();
      });
    }
    throw err;
  }
}

async function recordPendingHolding(database: Database, instanceId: string, attribute: string, inventory: string, ownerKey: string): Promise<void> {
  await transaction(database, async (tx) => {
    const row = await lockInstance(tx, instanceId);
    if (!isLive(row.state as InstanceState)) requireAllowed(row.state as InstanceState, 'validate');
    const now = database.clock.nowIso();
    const exists = await tx.db
      .selectFrom('ids_external_holdings')
      .select('id')
      .where('instance_id', '=', instanceId)
      .where('attribute', '=', attribute)
      .where('owner_key', '=', ownerKey)
      .executeTakeFirst();
    if (!exists) {
      await tx.db.insertInto('ids_external_holdings').values({ instance_id: instanceId, attribute, inventory, owner_key: ownerKey, value: null, created_at: now, updated_at: now }).execute();
    }
  });
}

/** Worker: once an instance in `deallocating` has no undelivered deallocation, it is terminated. */
export async function finishTermination(tx: Tx, instanceId: string): Promise<void> {
  if ((await pendingCount(tx, instanceId)) > 0) return;
  await tx.db
    .updateTable('ids_service_instances')
    .set((eb) => ({ state: 'terminated', terminated_at: tx.clock.nowIso(), updated_at: tx.clock.nowIso(), version: eb('version', '+', 1) }))
    .where('id', '=', instanceId)
    .where('state', '=', 'deallocating')
    .execute();
}

