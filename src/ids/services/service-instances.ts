// Service instances: attribute sets (candidate, active, rollback), a lifecycle, and the values
// allocated for them. A value is held while it appears in any set of a live instance; every
// change of the sets ends with `reconcileHoldings`, which releases pool values no set refers to
// any more and writes the deallocation of external ones to the outbox, in the same transaction.
//
// Validation calls external inventories outside the database transaction (they may be slow or
// down). Before an inventory allocates for an owner, a pending holding is committed, so a value
// the inventory hands out is never forgotten: if the instance goes away first, terminating it
// sends the deallocation for that owner anyway.
import { DomainError } from '../../core/errors.js';
import { newUuid, normalizeUuid } from '../../core/uuid.js';
import type { Db } from '../../db/database.js';
import { type Tx, transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import { type InstanceState, type Lifecycle, afterAttributeUpdate, afterTerminate, isLive, requireAllowed } from '../core/lifecycle.js';
import { problemDetail } from '../errors.js';
import type { JsonValue } from '../inventories/types.js';
import { type AllocationRequest, releaseInPool, valueOf } from '../store/allocate.js';
import { allocationsOfOwner } from '../store/allocations.js';
import { enqueueDeallocation } from '../store/outbox.js';
import { flushPool, lockPoolById } from '../store/pools.js';
import * as store from '../store/service-instances.js';
import { type Spec, findSpec, specById } from '../store/specs.js';
import { allocateInTx } from './allocations.js';

export type Attributes = Record<string, JsonValue>;

/** The owner of an instance's pool allocations. */
const ownerOf = (instanceId: string) => `service-instance/${instanceId}`;

/** An attribute set as stored (JSON text, or null for no set). */
export const attributeSet = (text: string | null): Attributes | null => (text === null ? null : (JSON.parse(text) as Attributes));
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** An instance with what its view needs: its spec and its undelivered deallocations. */
export interface InstanceDetails {
  row: store.InstanceRow;
  spec: Spec;
  pendingDeallocations: number;
}

async function details(db: Db, row: store.InstanceRow, spec?: Spec): Promise<InstanceDetails> {
  return { row, spec: spec ?? (await specById(db, row.spec_id)), pendingDeallocations: await store.pendingDeallocations(db, row.id) };
}

function checkWritable(spec: Spec, attributes: Attributes, allowPoolValues: boolean): void {
  for (const name of Object.keys(attributes)) {
    const s = spec.attributes[name];
    if (!s) continue;
    if (s.from === 'pool' && allowPoolValues) continue;
    throw idsDomainError('attribute_read_only', { attribute: name, from: s.from });
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
export async function createInstance(ctx: IdsContext, input: InstanceInput): Promise<InstanceDetails & { created: boolean }> {
  return transaction(ctx.database, async (tx) => {
    const spec = await findSpec(tx, input.allocation_spec);
    if (!spec) throw idsDomainError('unknown_spec', { spec: input.allocation_spec });
    checkWritable(spec, input.attributes, true);
    const id = input.id === undefined ? newUuid() : normalizeUuid(input.id);
    const lifecycle = input.lifecycle ?? 'simple';
    const serviceType = input.service_type ?? spec.name;
    const existing = await store.findInstance(tx, id);
    if (existing) {
      const sets = [attributeSet(existing.candidate), attributeSet(existing.active)].filter((s): s is Attributes => s !== null);
      const matches =
        existing.spec_id === spec.id &&
        existing.lifecycle === lifecycle &&
        existing.service_type === serviceType &&
        sets.some((set) => Object.entries(input.attributes).every(([k, v]) => same(set[k], v)));
      if (!matches) throw idsDomainError('instance_exists', { id });
      return { ...(await details(tx, existing, spec)), created: false };
    }
    await store.insertInstance(tx, {
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
    });
    return { ...(await details(tx, await store.readInstance(tx, id), spec)), created: true };
  });
}

export async function getInstance(ctx: IdsContext, id: string): Promise<InstanceDetails> {
  return details(ctx.database, await store.readInstance(ctx.database, id));
}

/** Up to `limit` instances after id `after`; `next` is set when more follow. */
export async function listInstances(ctx: IdsContext, filter: { state?: string; service_type?: string }, after: string | null, limit: number) {
  const rows = await store.listInstances(ctx.database, filter, after, limit + 1);
  const items: InstanceDetails[] = [];
  for (const r of rows.slice(0, limit)) items.push(await details(ctx.database, r));
  return { items, next: rows.length > limit ? rows[limit - 1]!.id : null };
}

/** The columns to change, or null for nothing to do (no version bump). */
type Change = (tx: Tx, row: store.InstanceRow, spec: Spec) => Promise<Partial<store.InstanceRow> | null>;

/** Lock, check If-Match, apply a change, bump the version, reconcile holdings. */
async function change(ctx: IdsContext, id: string, ifMatch: number | null, apply: Change): Promise<InstanceDetails> {
  return transaction(ctx.database, async (tx) => {
    const row = await store.lockInstance(tx, id);
    if (ifMatch !== null && ifMatch !== row.version) throw idsDomainError('version_mismatch', { current: row.version });
    const spec = await specById(tx, row.spec_id);
    const changes = await apply(tx, row, spec);
    if (changes === null) return details(tx, row, spec);
    let saved = await store.saveInstance(tx, row, changes);
    const terminating = saved.state === 'terminated' || saved.state === 'deallocating';
    await reconcileHoldings(tx, saved, spec, terminating);
    if (saved.state === 'deallocating' && afterTerminate(saved.lifecycle as Lifecycle, await store.pendingDeallocations(tx, id)) === 'terminated') {
      await store.markTerminated(tx, id);
      saved = await store.readInstance(tx, id);
    }
    return details(tx, saved, spec);
  });
}

/** JSON merge patch (RFC 7396) of the candidate set; null removes an attribute. */
export function updateAttributes(ctx: IdsContext, id: string, attributes: Attributes, ifMatch: number | null): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, async (_tx, row, spec) => {
    requireAllowed(row.state as InstanceState, 'update_attributes');
    checkWritable(spec, attributes, false);
    const base = attributeSet(row.candidate) ?? attributeSet(row.active) ?? {};
    const next: Attributes = { ...base };
    for (const [k, v] of Object.entries(attributes)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    return { candidate: JSON.stringify(next), candidate_validated: 0, state: afterAttributeUpdate(row.state as InstanceState) };
  });
}

export function promote(ctx: IdsContext, id: string, ifMatch: number | null): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, 'promote');
    if (row.candidate_validated !== 1) throw idsDomainError('candidate_not_validated', { state: row.state });
    return { rollback: row.active, active: row.candidate, candidate: null, candidate_validated: 0, state: 'up' };
  });
}

export function rollback(ctx: IdsContext, id: string, ifMatch: number | null): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, 'rollback');
    if (row.rollback === null) throw idsDomainError('no_rollback_set', { state: row.state });
    return { active: row.rollback, rollback: row.active };
  });
}

export function clearSet(ctx: IdsContext, id: string, set: 'candidate' | 'rollback', ifMatch: number | null): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, set === 'candidate' ? 'clear_candidate' : 'clear_rollback');
    if (set === 'candidate') return { candidate: null, candidate_validated: 0, state: 'up' };
    return { rollback: null };
  });
}

export function terminate(ctx: IdsContext, id: string, ifMatch: number | null): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, async (_tx, row) => {
    requireAllowed(row.state as InstanceState, 'terminate');
    if (row.state === 'terminated' || row.state === 'deallocating') return null;
    return { state: 'deallocating', candidate_validated: 0 };
  });
}

/**
 * Release what no set of the instance refers to any more (everything, when terminating): pool
 * allocations go back to their pools, external holdings become outbox deallocations.
 */
async function reconcileHoldings(tx: Tx, row: store.InstanceRow, spec: Spec, terminating: boolean): Promise<void> {
  const sets = terminating ? [] : [row.candidate, row.active, row.rollback].map(attributeSet).filter((s): s is Attributes => s !== null);
  const referenced = (attr: string, value: unknown) => sets.some((s) => s[attr] !== undefined && same(s[attr], value));

  const allocations = await allocationsOfOwner(tx, ownerOf(row.id));
  const byPool = new Map<number, typeof allocations>();
  for (const a of allocations) byPool.set(a.pool_id, [...(byPool.get(a.pool_id) ?? []), a]);
  for (const poolId of [...byPool.keys()].sort((a, b) => a - b)) {
    const pool = await lockPoolById(tx, poolId);
    for (const a of byPool.get(poolId)!) {
      const attr = spec.attributes[a.purpose];
      if (!(attr?.from === 'pool' && referenced(a.purpose, valueOf(pool, a)))) await releaseInPool(tx, pool, a);
    }
    await flushPool(tx, pool);
  }

  for (const h of await store.holdingsOf(tx, row.id)) {
    const keep = h.value === null ? !terminating : referenced(h.attribute, JSON.parse(h.value));
    if (keep) continue;
    await store.deleteHolding(tx, h.id);
    await enqueueDeallocation(tx, h);
  }
}

/**
 * Validate the candidate set: look up and allocate what is missing (or whose lookup key changed)
 * and write the values into the candidate set. Values already present are kept (and held).
 */
export async function validate(ctx: IdsContext, id: string, ifMatch: number | null): Promise<InstanceDetails> {
  const row = await store.readInstance(ctx.database, id);
  if (ifMatch !== null && ifMatch !== row.version) throw idsDomainError('version_mismatch', { current: row.version });
  requireAllowed(row.state as InstanceState, 'validate');
  const spec = await specById(ctx.database, row.spec_id);
  const candidate = attributeSet(row.candidate) ?? {};
  const active = attributeSet(row.active);
  const found: Attributes = {};
  const ownerKeys = new Map<string, string>();

  try {
    for (const [attr, s] of Object.entries(spec.attributes)) {
      if (s.from === 'lookup') {
        const key = candidate[s.key_attribute];
        if (key === undefined || key === null) throw idsDomainError('missing_lookup_key', { attribute: attr, key_attribute: s.key_attribute });
        const keyChanged = active !== null && !same(active[s.key_attribute], key);
        if (candidate[attr] !== undefined && candidate[attr] !== null && !keyChanged) continue;
        const value = await ctx.inventories.call<JsonValue | null>(s.inventory, 'lookup', typeof key === 'string' ? key : JSON.stringify(key), { attribute: attr, instanceId: id });
        if (value === null || value === undefined) throw idsDomainError('lookup_not_found', { inventory: s.inventory, attribute: attr, key });
        found[attr] = value;
      } else if (s.from === 'inventory') {
        let ownerKey = id;
        if (s.owner_attribute) {
          const v = candidate[s.owner_attribute];
          if (v === undefined || v === null) throw idsDomainError('missing_owner_attribute', { attribute: attr, owner_attribute: s.owner_attribute, inventory: s.inventory });
          ownerKey = typeof v === 'string' ? v : JSON.stringify(v);
        }
        ownerKeys.set(attr, ownerKey);
        const holding = await store.findHolding(ctx.database, id, attr, ownerKey);
        if (holding?.value != null) {
          found[attr] = JSON.parse(holding.value) as JsonValue;
          continue;
        }
        await recordPendingHolding(ctx, id, attr, s.inventory, ownerKey);
        found[attr] = await ctx.inventories.call<JsonValue>(s.inventory, 'allocateForOwner', ownerKey, { attribute: attr, instanceId: id });
      }
    }

    return await change(ctx, id, null, async (tx, locked, lockedSpec) => {
      if (locked.version !== row.version) throw idsDomainError('changed_during_validation', {});
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
        results.forEach((r, i) => (next[requests[i]!.attr] = valueOf(r.pool, r.row)));
      }
      for (const [attr, ownerKey] of ownerKeys) await store.setHoldingValue(tx, id, attr, ownerKey, JSON.stringify(next[attr]));
      return { candidate: JSON.stringify(next), candidate_validated: 1, last_error: null };
    });
  } catch (err) {
    // The instance keeps what its client was told (the problem's detail) as last_error.
    if (err instanceof DomainError) {
      const message = problemDetail(err);
      await transaction(ctx.database, (tx) => store.recordLastError(tx, id, row.version, message));
    }
    throw err;
  }
}

async function recordPendingHolding(ctx: IdsContext, instanceId: string, attribute: string, inventory: string, ownerKey: string): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const row = await store.lockInstance(tx, instanceId);
    if (!isLive(row.state as InstanceState)) requireAllowed(row.state as InstanceState, 'validate');
    if (!(await store.findHolding(tx, instanceId, attribute, ownerKey))) await store.insertPendingHolding(tx, instanceId, attribute, inventory, ownerKey);
  });
}
