// Service instances: attribute sets (candidate, active, rollback), a lifecycle, and the values
// allocated for them — pool values, external inventories' values, and, through the other two
// engines, bare-metal nodes and Placement capacity (services/engine-holdings.ts). A value is held
// while it appears in any set of a live instance; every change of the sets ends with
// `reconcileHoldings`, which releases what no set refers to any more (pool values, nodes,
// capacity) and writes the deallocation of external ones to the outbox, in the same transaction.
// Validation reserves every attribute of the candidate set in one transaction: all or nothing.
//
// An instance belongs to a Keystone project (that of its creator, unless one allowed every
// project names another): another project's instance is not found. Its nodes and capacity are
// its project's in the other APIs too.
//
// Validation calls external inventories outside the database transaction (they may be slow or
// down). Before an inventory allocates for an owner, a pending holding is committed, so a value
// the inventory hands out is never forgotten: if the instance goes away first, terminating it
// sends the deallocation for that owner anyway.
import type { Holding } from '../../client/ids-wire.js';
import { mergePatch } from '../../core/merge-patch.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { DomainError, RetryableConflict } from '../../core/errors.js';
import { newUuid, normalizeUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';
import { DatabaseFault, classifyFault } from '../../db/faults.js';
import { ClosingWrites } from '../../db/statement.js';
import { fastStep, transaction, withFastSteps } from '../../db/transaction.js';

import type { IdsContext } from '../context.js';
import { idsDomainError, isIdsError } from '../core/domain-errors.js';
import { type IfMatch, requireMatch } from '../core/if-match.js';
import { MAX_OWNER_KEY, forcedReleasesOf, isPoolRelease, ownerKeyOf, ownerOfInstance, sameJson } from '../core/instance-values.js';
import { DEALLOCATING, type InstanceAction, TERMINATED, type Transition, isLive } from '../core/lifecycle.js';
import { problemDetail } from '../errors.js';
import type { JsonValue } from '../inventories/types.js';
import { type AllocationRequest, releaseInPool, allocationValue } from '../store/allocate.js';
import { allocationsOfOwner, ownerAt } from '../store/allocations.js';
import { enqueueDeallocation } from '../store/outbox.js';
import { flushPool, lockPoolById } from '../store/pools.js';
import * as store from '../store/service-instances.js';
import { type Spec, findSpec, specById } from '../store/specs.js';
import { type PooledAllocation, allocateInTx, takeAutomaticInTx } from './allocations.js';
import { type PoolScope, inScope } from '../core/scope.js';
import { poolRefsById } from '../store/pools.js';
import {
  type EngineSources,
  type EnginePreparation,
  engineHoldings,
  engineSources,
  prepareEngineReservations,
  reconcileCapacity,
  releaseUnreferencedNodes,
  holdBackCapacityAttribute,
  reserveCapacityAttributes,
  reserveNodeAttributes,
  reservedSources,
} from './engine-holdings.js';

export type Attributes = Record<string, JsonValue>;

const ownerOf = ownerOfInstance;

/** An attribute set as stored (JSON text, or null for no set). */
export const attributeSet = (text: string | null): Attributes | null => (text === null ? null : (JSON.parse(text) as Attributes));
const same = sameJson;

/** An instance with what its view needs: its spec, its undelivered deallocations, what it holds. */
export interface InstanceDetails {
  row: store.InstanceRow;
  spec: Spec;
  pendingDeallocations: number;
  holdings: Holding[];
}

/**
 * The instance's view. `fresh`: it was made by the transaction just committed, by a spec without
 * external inventories — no deallocation can be owed for it and it has no external holding, so
 * neither is read.
 */
async function details(db: Db, row: store.InstanceRow, spec?: Spec, fresh = false): Promise<InstanceDetails> {
  const s = spec ?? (await specById(db, row.spec_id));
  return { row, spec: s, pendingDeallocations: fresh ? 0 : await store.pendingDeallocations(db, row.id), holdings: await holdingsOf(db, row, s, fresh) };
}

/**
 * The view of an instance as its transaction left it, read after the commit: a reservation's
 * transaction holds rows every other reservation waits for (a capacity provider's, a pool's) until
 * it commits, and these reads need none of them. A change another request made meanwhile (a newer
 * version) is read whole, so the answer is one state of the instance, never half of two. A database
 * fault in these reads (the request's deadline, a lost connection) comes after the change was
 * committed: it is answered `commit_unknown`, never as a fault that says nothing was done.
 */
async function detailsAfterCommit(db: Db, row: store.InstanceRow, spec: Spec, fresh: boolean): Promise<InstanceDetails> {
  try {
    let view = await details(db, row, spec, fresh);
    for (let reads = 1; reads < MAX_VIEW_READS; reads++) {
      const now = await store.findInstance(db, row.id);
      if (!now || now.version === view.row.version) break;
      view = await details(db, now, spec);
    }
    return view;
  } catch (err) {
    const fault = classifyFault(err);
    if (!fault) throw err;
    throw new DatabaseFault(
      'commit_unknown',
      'The change was committed, but reading its result from the database failed; read it back before retrying.',
      fault,
    );
  }
}

/** Reads of an instance's view after its commit, should other requests keep changing it. */
const MAX_VIEW_READS = 3;

async function holdingsOf(db: Db, row: store.InstanceRow, spec: Spec, fresh: boolean): Promise<Holding[]> {
  const allocations = await allocationsOfOwner(db, ownerOf(row.id));
  const pools = await poolRefsById(db, [...new Set(allocations.map((a) => a.pool_id))]);
  const pooled = allocations.map((a) => ({ pool: pools.get(a.pool_id)!, row: a }));
  return holdingsFrom(row, spec, pooled, fresh ? [] : await store.holdingsOf(db, row.id), await engineSources(db, row, spec));
}

/** The holdings an instance's view lists, from what it holds: pool allocations (in id order), external values, nodes and capacity. */
function holdingsFrom(row: store.InstanceRow, spec: Spec, pooled: PooledAllocation[], external: store.HoldingRow[], engines: EngineSources): Holding[] {
  const out: Holding[] = [];
  for (const { pool, row: a } of pooled) {
    out.push({ attribute: a.purpose, source: 'pool', value: allocationValue(pool, a), href: `/ids/v1/allocations/${a.id}` });
  }
  for (const h of external) {
    if (h.value !== null) out.push({ attribute: h.attribute, source: 'inventory', value: JSON.parse(h.value) as unknown, href: null });
  }
  out.push(...engineHoldings(row, spec, engines));
  return out;
}

/**
 * The view of an instance its own transaction just made and validated: what it holds is what that
 * transaction reserved (a new instance held nothing before, and no deallocation can be owed for
 * it), so nothing is read back — the answer is the state that commit left.
 */
function newInstanceDetails(row: store.InstanceRow, spec: Spec, validated: Validation): InstanceDetails {
  const pooled = [...validated.pooled].sort((a, b) => (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0));
  return { row, spec, pendingDeallocations: 0, holdings: holdingsFrom(row, spec, pooled, [], reservedSources(row.id, spec, validated.next)) };
}

/** Does this caller see the instance? Its project's callers, and those allowed every project. */
const visible = (scope: PoolScope, row: store.InstanceRow) => scope.all || row.project_id === scope.project;

/** Whose pools an instance's validation allocates from: its project's (and shared ones), else the caller's. */
const poolScopeOf = (row: store.InstanceRow, caller: PoolScope): PoolScope => (row.project_id === null ? caller : { all: false, project: row.project_id });

function checkWritable(spec: Spec, attributes: Attributes, allowPoolValues: boolean): void {
  for (const name of Object.keys(attributes)) {
    const s = spec.attributes[name];
    if (!s) continue;
    if (s.from === 'pool' && allowPoolValues) continue;
    throw idsDomainError('attribute_read_only', { attribute: name, from: s.from });
  }
}

/** Owner attributes must fit an owner key (checked when written, before validation stores them). */
function checkOwnerKeys(spec: Spec, attributes: Attributes): void {
  for (const [name, s] of Object.entries(spec.attributes)) {
    if (s.from !== 'inventory' || !s.owner_attribute) continue;
    const v = attributes[s.owner_attribute];
    if (v === undefined || v === null) continue;
    const length = ownerKeyOf(v).length;
    if (length > MAX_OWNER_KEY) throw idsDomainError('owner_key_too_long', { attribute: name, owner_attribute: s.owner_attribute, length, max: MAX_OWNER_KEY });
  }
}

export interface InstanceInput {
  id?: string;
  service_type?: string;
  allocation_spec: string;
  lifecycle?: string;
  attributes: Attributes;
  /** the project it belongs to (the route decided: the caller's unless it may name another) */
  project_id: string | null;
  /** validate at once, then promote */
  validate?: boolean;
  promote?: boolean;
}

/** Who asks: whose pools and instances it sees, and its user (Placement's consumer records it). */
export interface Caller {
  scope: PoolScope;
  user: string | null;
}

/**
 * Create an instance in state `start` with its attributes as the candidate set. Pool attributes
 * may be given (a value already in use: validation takes exactly it); others are read-only.
 * A client-chosen id makes creation idempotent. With `validate` (and `promote`), the one request
 * of the common case: the instance is validated (every attribute reserved, all or nothing) and
 * promoted — a repeat does what the first left undone (a validation that failed is tried again).
 */
export async function createInstance(ctx: IdsContext, input: InstanceInput, caller: Caller): Promise<InstanceDetails & { created: boolean }> {
  const spec = input.validate ? await findSpec(ctx.database, input.allocation_spec) : undefined;
  if (spec && !callsOut(spec)) return createAtOnce(ctx, input, caller, spec);
  const made = await insertOrFind(ctx, input, caller);
  let now: InstanceDetails = made;
  const id = made.row.id;
  try {
    if (input.validate && needsValidation(now.row)) now = await validate(ctx, id, null, caller);
    if (input.promote && needsPromotion(now.row)) now = await promote(ctx, id, null, caller);
  } catch (err) {
    // the client learns which instance it made, whatever failed after
    if (made.created && err instanceof DomainError) throw idsDomainError('in_instance', { id, error: err });
    throw err;
  }
  return { ...now, created: made.created };
}

const needsValidation = (row: store.InstanceRow) => row.candidate !== null && row.candidate_validated !== 1;
const needsPromotion = (row: store.InstanceRow) => row.candidate !== null && row.candidate_validated === 1;
/** Does validating call external inventories (outside the transaction, with pending holdings)? */
const callsOut = (spec: Spec) => Object.values(spec.attributes).some((a) => a.from === 'lookup' || a.from === 'inventory');

/**
 * Create, validate and promote in ONE transaction (a spec without external inventories): one
 * commit for the common case. When it fails, nothing of it is kept; the instance is then made
 * (or found) in a transaction of its own, holding nothing, with the failure as its last_error,
 * as the steps one by one would leave it.
 */
async function createAtOnce(ctx: IdsContext, input: InstanceInput, caller: Caller, spec: Spec): Promise<InstanceDetails & { created: boolean }> {
  const prepared = await prepareEngineReservations(ctx, spec);
  try {
    const written = await withFastSteps(ctx.database, (fast) =>
      transaction(ctx.database, async (tx) => {
        const { row, created } = await insertOrFindInTx(tx, ctx, input, caller, spec);
        // the steps' changes applied in turn to the row in memory, then saved once
        // PostgreSQL: the pools' and the capacity's writes, and the instance's, close it in one statement
        const closing = fast && tx.dialect === 'postgres' ? new ClosingWrites() : null;
        const gathered = { found: {}, ownerKeys: new Map<string, string>(), prepared: { ...prepared, fast }, closing };
        const validation = needsValidation(row) ? await validateInTx(tx, ctx, row, spec, gathered, caller) : null;
        let changes = validation?.changes ?? {};
        const validated = { ...row, ...changes };
        if (input.promote && needsPromotion(validated)) changes = { ...changes, ...promotion(ctx, validated) };
        if (!Object.keys(changes).length) {
          await closing?.send(tx);
          return { row, created, validation };
        }
        const saved = closing ? await fastStep(() => store.saveInstanceClosing(tx, row, changes, closing)) : await store.saveInstance(tx, row, changes);
        // a new instance lets go of nothing; a repeat may (its candidate set was replaced)
        if (!created) await reconcileHoldings(tx, ctx, saved, spec, false);
        return { row: saved, created, validation };
      }),
    );
    const view =
      written.created && written.validation
        ? newInstanceDetails(written.row, spec, written.validation)
        : await detailsAfterCommit(ctx.database, written.row, spec, written.created);
    return { ...view, created: written.created };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const made = await insertOrFind(ctx, input, caller);
    const message = problemDetail(err);
    await transaction(ctx.database, (tx) => store.recordLastError(tx, made.row.id, made.row.version, message));
    throw made.created ? idsDomainError('in_instance', { id: made.row.id, error: err }) : err;
  }
}

async function insertOrFind(ctx: IdsContext, input: InstanceInput, caller: Caller): Promise<InstanceDetails & { created: boolean }> {
  return transaction(ctx.database, async (tx) => {
    const { row, created } = await insertOrFindInTx(tx, ctx, input, caller);
    return { ...(await details(tx, row)), created };
  });
}

/**
 * The new instance, or the one a repeat of the same request made. `known`: the spec, when the
 * caller read it already (specs do not change; an instance's reference keeps one from going).
 */
async function insertOrFindInTx(
  tx: Tx,
  ctx: IdsContext,
  input: InstanceInput,
  caller: Caller,
  known?: Spec,
): Promise<{ row: store.InstanceRow; created: boolean }> {
  const spec = known ?? (await findSpec(tx, input.allocation_spec));
  // a spec of another project than the caller's or the instance's is one that does not exist
  const usable = spec && inScope(caller.scope, spec.project_id) && (spec.project_id === null || spec.project_id === input.project_id);
  if (!spec || !usable) throw idsDomainError('unknown_spec', { spec: input.allocation_spec });
  checkWritable(spec, input.attributes, true);
  checkOwnerKeys(spec, input.attributes);
  const id = input.id === undefined ? newUuid() : normalizeUuid(input.id);
  const lifecycle = input.lifecycle ?? 'simple';
  const definition = ctx.lifecycles.get(lifecycle);
  const serviceType = input.service_type ?? spec.name;
  const requested = canonicalJson(input.attributes);
  // new (the common case): one statement; else the one there, locked, if the request is the same
  const inserted = await store.insertInstanceIfAbsent(tx, {
    id,
    service_type: serviceType,
    spec_id: spec.id,
    lifecycle,
    state: definition.initial,
    version: 1,
    candidate: JSON.stringify(input.attributes),
    candidate_validated: 0,
    active: null,
    rollback: null,
    last_error: null,
    terminated_at: null,
    forced_releases: null,
    requested_attributes: requested,
    project_id: input.project_id,
  });
  if (inserted) return { row: inserted, created: true };
  const existing = await store.lockInstanceIfPresent(tx, id);
  // deleted since the insert met it: the transaction runs again
  if (!existing) throw new RetryableConflict('instance deleted concurrently', () => idsDomainError('changed_concurrently', { resource: 'instance' }));
  // the same request: the same spec, lifecycle, type and attributes, none left out or added
  // (instances from before migration 012 kept no request: one of their sets, exactly)
  const sameAttributes =
    existing.requested_attributes !== null
      ? existing.requested_attributes === requested
      : [existing.candidate, existing.active].some((set) => set !== null && canonicalJson(JSON.parse(set)) === requested);
  const matches =
    existing.spec_id === spec.id &&
    existing.lifecycle === lifecycle &&
    existing.service_type === serviceType &&
    existing.project_id === input.project_id &&
    sameAttributes;
  if (!visible(caller.scope, existing) || !matches) throw idsDomainError('instance_exists', { id });
  return { row: existing, created: false };
}

/** The instance, if the caller sees it (another project's is not found). */
async function readVisible(db: Db, id: string, scope: PoolScope): Promise<store.InstanceRow> {
  const row = await store.readInstance(db, id);
  if (!visible(scope, row)) throw idsDomainError('instance_not_found', { id });
  return row;
}

export async function getInstance(ctx: IdsContext, id: string, scope: PoolScope): Promise<InstanceDetails> {
  return details(ctx.database, await readVisible(ctx.database, id, scope));
}

/** Up to `limit` instances the caller sees after id `after`; `next` is set when more follow. */
export async function listInstances(ctx: IdsContext, filter: { state?: string; service_type?: string }, after: string | null, limit: number, scope: PoolScope) {
  const rows = await store.listInstances(ctx.database, { ...filter, ...(scope.all ? {} : { project: scope.project }) }, after, limit + 1);
  const items: InstanceDetails[] = [];
  for (const r of rows.slice(0, limit)) items.push(await details(ctx.database, r));
  return { items, next: rows.length > limit ? rows[limit - 1]!.id : null };
}

/** The columns to change, or null for nothing to do (no version bump). */
type Change = (tx: Tx, row: store.InstanceRow, spec: Spec) => Promise<Partial<store.InstanceRow> | null>;

/** The transition of the instance's lifecycle that `action` takes now (`action_not_allowed` if none). */
const transitionOf = (ctx: IdsContext, row: store.InstanceRow, action: InstanceAction): Transition =>
  ctx.lifecycles.transition(row.lifecycle, row.state, action);

/** The state after a transition: its `to`, or the state it started from. */
const stateAfter = (t: Transition, row: store.InstanceRow) => t.to ?? row.state;

/** Lock, check If-Match, apply a change, bump the version, reconcile holdings. */
async function change(ctx: IdsContext, id: string, ifMatch: IfMatch, scope: PoolScope, apply: Change): Promise<InstanceDetails> {
  const written = await transaction(ctx.database, async (tx) => {
    const row = await store.lockInstance(tx, id);
    if (!visible(scope, row)) throw idsDomainError('instance_not_found', { id });
    requireMatch(ifMatch, row.version);
    const spec = await specById(tx, row.spec_id);
    const changes = await apply(tx, row, spec);
    if (changes === null) return { row, spec };
    let saved = await store.saveInstance(tx, row, changes);
    const terminating = !isLive(saved.state);
    await reconcileHoldings(tx, ctx, saved, spec, terminating);
    // Terminate waits in `deallocating` only when the lifecycle says so and deallocations are owed.
    if (saved.state === DEALLOCATING && !(ctx.lifecycles.get(saved.lifecycle).wait_for_deallocation && (await store.pendingDeallocations(tx, id)) > 0)) {
      await store.markTerminated(tx, id);
      saved = await store.readInstance(tx, id);
    }
    return { row: saved, spec };
  });
  return detailsAfterCommit(ctx.database, written.row, written.spec, false);
}

/** JSON merge patch (RFC 7396) of the candidate set; null removes an attribute. */
export function updateAttributes(ctx: IdsContext, id: string, attributes: Attributes, ifMatch: IfMatch, caller: Caller): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, caller.scope, async (_tx, row, spec) => {
    const t = transitionOf(ctx, row, 'update_attributes');
    checkWritable(spec, attributes, false);
    const next = mergePatch(attributeSet(row.candidate) ?? attributeSet(row.active) ?? {}, attributes) as Attributes;
    checkOwnerKeys(spec, next);
    return { candidate: JSON.stringify(next), candidate_validated: 0, state: stateAfter(t, row) };
  });
}

export function promote(ctx: IdsContext, id: string, ifMatch: IfMatch, caller: Caller): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, caller.scope, async (_tx, row) => promotion(ctx, row));
}

/** Promote's change: candidate → active, active → rollback. */
function promotion(ctx: IdsContext, row: store.InstanceRow): Partial<store.InstanceRow> {
  const t = transitionOf(ctx, row, 'promote');
  if (t.validate === 'candidate' && row.candidate_validated !== 1) throw idsDomainError('candidate_not_validated', { state: row.state });
  if (row.candidate === null) throw idsDomainError('candidate_not_validated', { state: row.state });
  return { rollback: row.active, active: row.candidate, candidate: null, candidate_validated: 0, state: stateAfter(t, row) };
}

export function rollback(ctx: IdsContext, id: string, ifMatch: IfMatch, caller: Caller): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, caller.scope, async (_tx, row) => {
    const t = transitionOf(ctx, row, 'rollback');
    if (row.rollback === null) throw idsDomainError('no_rollback_set', { state: row.state });
    return { active: row.rollback, rollback: row.active, state: stateAfter(t, row) };
  });
}

export function clearSet(ctx: IdsContext, id: string, set: 'candidate' | 'rollback', ifMatch: IfMatch, caller: Caller): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, caller.scope, async (_tx, row) => {
    const t = transitionOf(ctx, row, set === 'candidate' ? 'clear_candidate' : 'clear_rollback');
    if (set === 'candidate') return { candidate: null, candidate_validated: 0, state: stateAfter(t, row) };
    return { rollback: null, state: stateAfter(t, row) };
  });
}

export function terminate(ctx: IdsContext, id: string, ifMatch: IfMatch, caller: Caller): Promise<InstanceDetails> {
  return change(ctx, id, ifMatch, caller.scope, async (_tx, row) => {
    transitionOf(ctx, row, 'terminate');
    if (row.state === TERMINATED || row.state === DEALLOCATING) return null;
    return { state: DEALLOCATING, candidate_validated: 0 };
  });
}

/**
 * Release what no set of the instance refers to any more (everything, when terminating): nodes
 * and capacity go back to their engines, pool allocations to their pools, external holdings
 * become outbox deallocations. Nodes, pools, then capacity: the order validation locks them in.
 */
async function reconcileHoldings(tx: Tx, ctx: IdsContext, row: store.InstanceRow, spec: Spec, terminating: boolean): Promise<void> {
  const sets = terminating ? [] : [row.candidate, row.active, row.rollback].map(attributeSet).filter((s): s is Attributes => s !== null);
  await releaseUnreferencedNodes(tx, ctx, row, spec, sets);
  const referenced = (attr: string, value: unknown) => sets.some((s) => s[attr] !== undefined && same(s[attr], value));

  const allocations = await allocationsOfOwner(tx, ownerOf(row.id));
  const byPool = new Map<number, typeof allocations>();
  for (const a of allocations) byPool.set(a.pool_id, [...(byPool.get(a.pool_id) ?? []), a]);
  for (const poolId of [...byPool.keys()].sort((a, b) => a - b)) {
    const pool = await lockPoolById(tx, poolId);
    for (const a of byPool.get(poolId)!) {
      const attr = spec.attributes[a.purpose];
      if (!(attr?.from === 'pool' && referenced(a.purpose, allocationValue(pool, a)))) await releaseInPool(tx, pool, a);
    }
    await flushPool(tx, pool);
  }
  await reconcileCapacity(tx, ctx, row, spec, sets);

  for (const h of await store.holdingsOf(tx, row.id)) {
    const keep = h.value === null ? !terminating : referenced(h.attribute, JSON.parse(h.value));
    if (keep) continue;
    await store.deleteHolding(tx, h.id);
    await enqueueDeallocation(tx, h);
  }
}

/**
 * Validate the candidate set: look up and allocate what is missing (or whose lookup key changed)
 * and write the values into the candidate set. Values already present are kept (and held). The
 * spec's pools must be within the caller's scope (another project's pool is not found).
 */
export async function validate(ctx: IdsContext, id: string, ifMatch: IfMatch, caller: Caller): Promise<InstanceDetails> {
  const row = await readVisible(ctx.database, id, caller.scope);
  requireMatch(ifMatch, row.version);
  transitionOf(ctx, row, 'validate');
  const spec = await specById(ctx.database, row.spec_id);
  const prepared = await prepareEngineReservations(ctx, spec);
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
        const value = await ctx.inventories.call<JsonValue | null>(s.inventory, 'lookup', typeof key === 'string' ? key : JSON.stringify(key), {
          attribute: attr,
          instanceId: id,
        });
        if (value === null || value === undefined) throw idsDomainError('lookup_not_found', { inventory: s.inventory, attribute: attr, key });
        found[attr] = value;
      } else if (s.from === 'inventory') {
        let ownerKey = id;
        if (s.owner_attribute) {
          const v = candidate[s.owner_attribute];
          if (v === undefined || v === null)
            throw idsDomainError('missing_owner_attribute', { attribute: attr, owner_attribute: s.owner_attribute, inventory: s.inventory });
          ownerKey = ownerKeyOf(v);
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

    return await withFastSteps(ctx.database, (fast) =>
      change(ctx, id, null, caller.scope, async (tx, locked, lockedSpec) => {
        if (locked.version !== row.version) throw idsDomainError('changed_during_validation', {});
        return (await validateInTx(tx, ctx, locked, lockedSpec, { found, ownerKeys, prepared: { ...prepared, fast }, closing: null }, caller)).changes;
      }),
    );
  } catch (err) {
    // The instance keeps what its client was told (the problem's detail) as last_error.
    if (err instanceof DomainError) {
      const message = problemDetail(err);
      await transaction(ctx.database, (tx) => store.recordLastError(tx, id, row.version, message));
    }
    throw err;
  }
}

/** What validation gathered before its transaction: external values, owner keys, the engines' preparation. */
interface Gathered {
  found: Attributes;
  ownerKeys: Map<string, string>;
  prepared: EnginePreparation;
  /** the statement that will close the transaction (PostgreSQL), which the last writes join */
  closing: ClosingWrites | null;
}

/** What validation did in its transaction: the row's changes, the candidate set it wrote, the pool allocations it made or found. */
interface Validation {
  changes: Partial<store.InstanceRow>;
  next: Attributes;
  pooled: PooledAllocation[];
}

/**
 * Validation inside the instance's transaction (its row locked): reserve every node, pool and
 * capacity attribute the candidate set lacks — all in this transaction, so all or nothing — and
 * write them into it. In that order, the order every change of an instance locks them in: nodes
 * (a capacity attribute may be in the tree of one), then pools, then capacity — the rows other
 * reservations want most (a shared provider's, a pool's) as late as possible; given `closing`,
 * their writes are held back for the statement that closes the transaction, and the capacity is
 * chosen before the pools are locked (its claim waits for that statement all the same). Given
 * `closing`, automatic pool values (lowest, highest, next_after_last) are locked, chosen and written
 * by one statement instead (takeAutomaticInTx): the pools are then held through that statement,
 * the closing one and the commit, not also a lock and a probe before.
 */
async function validateInTx(tx: Tx, ctx: IdsContext, locked: store.InstanceRow, spec: Spec, gathered: Gathered, caller: Caller): Promise<Validation> {
  const id = locked.id;
  const t = transitionOf(ctx, locked, 'validate');
  const next: Attributes = { ...(attributeSet(locked.candidate) ?? {}), ...gathered.found };
  const who = { id, project: locked.project_id, user: caller.user };
  const released = forcedReleasesOf(locked.forced_releases);
  await reserveNodeAttributes(tx, ctx, who, spec, next, released, gathered.prepared);
  if (gathered.closing) await holdBackCapacityAttribute(tx, ctx, who, spec, next, gathered.prepared, gathered.closing);
  // Values released by force since the last validation: taken again below when still free,
  // replaced by a fresh allocation when another owner took them meanwhile.
  for (const f of released) {
    if (!isPoolRelease(f) || !same(next[f.attribute], f.value)) continue;
    const holder = await ownerAt(tx, f.pool, f.key);
    if (holder !== undefined && holder !== ownerOf(id)) delete next[f.attribute];
  }
  const requests: Array<{ attr: string; req: AllocationRequest }> = [];
  for (const [attr, s] of Object.entries(spec.attributes)) {
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
  let pooled: PooledAllocation[] = [];
  if (requests.length) {
    const reqs = requests.map((r) => r.req);
    const scope = poolScopeOf(locked, caller.scope);
    // the fast path's pools: locked, chosen in and written by one statement when it can
    const allocated = async () =>
      (gathered.closing && (await takeAutomaticInTx(ctx, tx, reqs, 'service-instance', scope))) ||
      (await allocateInTx(tx, reqs, 'service-instance', scope, gathered.closing ?? undefined));
    const results = await allocated().catch((err: unknown) => {
      throw inAttribute(err, requests);
    });
    for (const [i, r] of results.entries()) next[requests[i]!.attr] = allocationValue(r.pool, r.row);
    pooled = results;
  }
  const others = [locked.active, locked.rollback].map(attributeSet).filter((set): set is Attributes => set !== null);
  await reserveCapacityAttributes(tx, ctx, who, spec, next, others, gathered.prepared);
  for (const [attr, ownerKey] of gathered.ownerKeys) await store.setHoldingValue(tx, id, attr, ownerKey, JSON.stringify(next[attr]));
  return {
    changes: { candidate: JSON.stringify(next), candidate_validated: 1, last_error: null, forced_releases: null, state: stateAfter(t, locked) },
    next,
    pooled,
  };
}

/** A failure of the allocations of an instance's attributes, as the failure of the attribute's value. */
function inAttribute(err: unknown, requests: ReadonlyArray<{ attr: string; req: AllocationRequest }>): unknown {
  if (!(err instanceof DomainError)) return err;
  const { error, attr } = isIdsError(err, 'in_batch')
    ? { error: err.params.error, attr: requests[err.params.index]?.attr }
    : isIdsError(err, 'pool_not_found')
      ? { error: err, attr: requests.find((r) => r.req.pool === err.params.pool)?.attr }
      : { error: err, attr: requests.length === 1 ? requests[0]!.attr : undefined };
  return attr === undefined ? err : idsDomainError('in_attribute', { attribute: attr, error });
}

async function recordPendingHolding(ctx: IdsContext, instanceId: string, attribute: string, inventory: string, ownerKey: string): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const row = await store.lockInstance(tx, instanceId);
    if (!isLive(row.state)) transitionOf(ctx, row, 'validate');
    if (!(await store.findHolding(tx, instanceId, attribute, ownerKey))) await store.insertPendingHolding(tx, instanceId, attribute, inventory, ownerKey);
  });
}
