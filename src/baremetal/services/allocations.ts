// Allocation operations. Creating one writes it in `allocating` with this conductor's affinity
// and, when a free node matches, reserves that node and makes the allocation `active` in the same
// transaction: no wait for the worker (the route still answers it as Ironic does, `allocating`,
// unless the client asked to wait: awaitAllocation). Otherwise (no node free at this moment, a
// configured --allocation-delay, or a claim the backend refused) the allocation is handed to the
// worker, whose step `attemptAllocation` does the same in a transaction of its own until it
// succeeds, or fails with Ironic's reason. Backfilling (1.58) binds an already deployed node at
// once. Deleting works in any state.
//
// The claim, in either place, is ONE transaction: reserve a free node with a single statement that
// picks it and sets its instance_uuid and allocation_id (store/candidates.ts), claim it in the
// backend, record the requested traits in instance_info, and make the allocation active; any
// failure rolls all of it back. On PostgreSQL the request first tries all of it — insert, pick,
// reserve, active — as one statement (allocateAtOnce), and steps aside to this path when that
// cannot do it.
//
// Why the reservation is not Ironic's separate node lock (`reservation`, taken and released in
// their own commits): the lock only guards the binding that follows it, and here both commit
// together, so the lock is the compare-and-set itself. That saves commits per allocation
// (SQLite synchronous=FULL is bound by fsyncs) and leaves no stale lock behind a crash.
import { type DomainError, RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import type { Tx } from '../../db/database.js';
import { transaction, tryFastPath } from '../../db/transaction.js';
import { allocationFailure } from '../core/allocation.js';
import { deallocationRefusal } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import {
  type AllocationRecord,
  allocationNotFound,
  countAllocationsByState,
  deleteAllocationRow,
  findAllocation,
  findAllocationById,
  finishAllocation,
  insertAllocation,
  insertNewAllocation,
  lockAllocation,
  updateAllocation,
} from '../store/allocations.js';
import { type NodeWanted, type ReservedNode, nodeWanted, reserveFreeNode, whyNoNode } from '../store/candidates.js';
import { type AllocationValues, allocateOnFreeNode } from '../store/one-statement-allocation.js';
import { instanceUuidTaken, lockNode, nodeNotFound, requireNode, resolveNodes, updateNode } from '../store/nodes.js';
import { ensureRegistered } from './conductors.js';
import { deallocate } from './node-allocation.js';
import { instanceAssociated, nodeAssociated } from './nodes.js';
import { baremetalDomainError } from '../core/domain-errors.js';

/** A new allocation, its values already checked by the route. */
export interface NewAllocation {
  /** normalized; null: a new one (or, backfilling, the node's instance_uuid) */
  uuid: string | null;
  name: string | null;
  resourceClass: string | null;
  traits: string[];
  /** nodes by uuid or name */
  candidateNodes: string[];
  /** set: the candidates must be this project's nodes (owned or leased); others are "not found" */
  candidatesOf?: string | null;
  extra: Record<string, unknown>;
  owner: string | null;
  /** backfill (1.58): the deployed node this allocation records */
  node: string | null;
}

const candidatesNotFound = (idents: string[]) => baremetalDomainError('candidate_nodes_not_found', { idents }, `no nodes ${idents.join(', ')}`);
const isProjects = (node: { owner: string | null; lessee: string | null }, project: string | null) => node.owner === project || node.lessee === project;
const uuidTaken = (uuid: string) => baremetalDomainError('allocation_uuid_taken', { uuid }, `an allocation has uuid ${uuid}`);
const nameTaken = (name: string | null) => baremetalDomainError('allocation_name_taken', { name }, `an allocation is named ${name}`);

export async function createAllocation(ctx: BaremetalContext, input: NewAllocation): Promise<AllocationRecord> {
  const traits = [...new Set(input.traits)];
  await ensureRegistered(ctx);
  // candidate_nodes may name nodes by uuid or name; they are kept as uuids, in the given order
  const idents = input.candidateNodes;
  const resolved = await resolveNodes(ctx.database, idents);
  // nodes the caller may not name are refused first, and as nodes that do not exist
  const hidden = input.candidatesOf === undefined ? [] : idents.filter((i) => resolved.has(i) && !isProjects(resolved.get(i)!, input.candidatesOf!));
  if (hidden.length) throw candidatesNotFound(hidden);
  if (input.node !== null) return backfill(ctx, input, input.node, traits);
  const resourceClass = input.resourceClass ?? '';

  const missing = idents.filter((i) => !resolved.has(i));
  if (missing.length) throw candidatesNotFound(missing);
  const candidates = [...new Set(idents.map((i) => resolved.get(i)!.uuid))];

  const uuid = input.uuid ?? newUuid();
  const now = ctx.clock.nowIso();
  // A configured delay keeps every allocation `allocating` for a while (races, deletes and
  // take-over can then be observed): the worker does all of it.
  const claimNow = ctx.config.allocationDelay <= 0;
  const row = {
    uuid,
    name: input.name,
    node_id: null,
    resource_class: resourceClass,
    state: 'allocating',
    last_error: null,
    conductor_affinity: ctx.conductorId,
    candidate_nodes: JSON.stringify(candidates),
    extra: JSON.stringify(input.extra),
    owner: input.owner,
    held_by: null,
    created_at: now,
    updated_at: null,
  };
  if (claimNow && ctx.database.dialect === 'postgres') {
    const allocated = await allocateAtOnce(ctx, row, candidates, [...traits].sort());
    if (allocated) return allocated;
  }
  // The answer is made inside the transaction: once the allocation is committed, a database fault
  // must not turn the reply into a 503 that says nothing was done (the worker allocates it anyway).
  let created: AllocationRecord | undefined;
  const create = (claim: boolean) =>
    insertChecked(ctx, uuid, input.name, async (tx) => {
      created = await insertNewAllocation(tx, row, traits);
      // the allocation's uuid becomes a node's instance_uuid: one already in use is a conflict
      if (!created) throw baremetalDomainError('allocation_uuid_is_instance', { uuid }, `a node has instance ${uuid}`);
      if (claim) {
        const node = await reserveFreeNode(tx, nodeWanted(created), created);
        if (node) created = await takeNode(tx, ctx, created, node);
      }
    });
  try {
    await create(claimNow);
  } catch (err) {
    // The backend refused the node (its claim, or a concurrent instance_uuid: another allocation's
    // uuid or name became the answer in insertChecked): the whole attempt rolled back, and the
    // worker takes it from here. Anything else is the request's answer.
    if (!(claimNow && (err instanceof Unsuitable || isUniqueViolation(err)))) throw err;
    await create(false);
  }
  if (created!.state === 'allocating') ctx.allocations.enqueue(created!.id);
  return created!;
}

/**
 * PostgreSQL, the common case — a node is free now: the allocation is inserted `active` on it, with
 * the backend's claim (placement backend: Placement's allocation of the node), by ONE statement
 * in its own implicit transaction (store/one-statement-allocation.ts): one round trip where the
 * general path makes five, or seven with Placement's claim. Undefined when it stepped aside — no
 * node free now, a uuid or name clash, the claim refused or not expressible so, a lost race: the
 * general path then decides and words the answer.
 */
async function allocateAtOnce(
  ctx: BaremetalContext,
  row: Omit<AllocationRecord, 'id' | 'traits' | 'node_uuid'> & Pick<AllocationValues, 'resource_class' | 'conductor_affinity'>,
  candidates: string[],
  traits: string[],
): Promise<AllocationRecord | undefined> {
  const inStatement = await ctx.backend.claimInStatement(ctx.database, row);
  if (!inStatement) return undefined;
  const values: AllocationValues = { ...row, now: row.created_at };
  const wanted: NodeWanted = { resourceClass: row.resource_class, candidates, owner: row.owner, traits, name: row.name };
  const done = await tryFastPath(
    ctx.database,
    async (tx) => {
      const { allocationId, node } = await allocateOnFreeNode(tx, values, wanted, inStatement.claim);
      const allocation: AllocationRecord = {
        ...row,
        id: allocationId,
        node_id: node.id,
        state: 'active',
        updated_at: row.created_at,
        traits,
        node_uuid: node.uuid,
      };
      noteActive(tx, ctx, allocation);
      return allocation;
    },
    { oneStatement: true },
  );
  return done?.value;
}

/**
 * Run `insert` in a transaction, answering the spec's conflicts: an allocation with the uuid or
 * the name already (found by their unique indexes) or a node with the uuid as its instance.
 */
async function insertChecked(ctx: BaremetalContext, uuid: string, name: string | null, insert: (tx: Tx) => Promise<void>): Promise<void> {
  try {
    await transaction(ctx.database, insert);
  } catch (err) {
    if (isUniqueViolation(err)) {
      const clash = await allocationClash(ctx, uuid, name);
      if (clash) throw clash;
    }
    throw err;
  }
}

/** The error for another allocation that has this uuid or name, if one does. */
async function allocationClash(ctx: BaremetalContext, uuid: string, name: string | null): Promise<DomainError | undefined> {
  if (await findAllocation(ctx.database, uuid)) return uuidTaken(uuid);
  if (name !== null && (await findAllocation(ctx.database, name))) return nameTaken(name);
  return undefined;
}

/**
 * 1.58: record the allocation of a node that is already deployed. Created `active` at once; a
 * request that does not fit the node is refused (409 for the node's state, 400 for a request that
 * contradicts the node) and leaves nothing behind.
 */
async function backfill(ctx: BaremetalContext, input: NewAllocation, ident: string, traits: string[]): Promise<AllocationRecord> {
  await requireNode(ctx.database, ident);
  if (input.resourceClass) await ctx.backend.prepare(ctx.database, { resourceClass: input.resourceClass });
  const now = ctx.clock.nowIso();
  // read inside the transaction, as in createAllocation
  let created: AllocationRecord | undefined;
  await transaction(ctx.database, async (tx) => {
    const node = await lockNode(tx, ident);
    if (!node) throw nodeNotFound(ident);
    const uuid = input.uuid ?? node.instance_uuid ?? newUuid();
    if (node.allocation_id !== null)
      throw baremetalDomainError('backfill_node_allocated', { node: node.uuid, allocation: node.allocation_uuid }, `node ${node.uuid} is allocated`);
    if (node.instance_uuid !== null && node.instance_uuid !== uuid) throw nodeAssociated(node.uuid, node.instance_uuid);
    if (node.instance_uuid === null && (await instanceUuidTaken(tx, uuid))) throw instanceAssociated(uuid, node.uuid);
    if (node.provision_state !== 'active')
      throw baremetalDomainError('backfill_node_not_active', { node: node.uuid, state: node.provision_state }, `node ${node.uuid} is not active`);
    const mismatch: { resourceClass?: [string | null, string]; traits?: [string[], string[]]; candidates?: string[] } = {};
    if (input.resourceClass && input.resourceClass !== node.resource_class) mismatch.resourceClass = [node.resource_class, input.resourceClass];
    if (traits.some((t) => !node.traits.includes(t))) mismatch.traits = [node.traits, traits];
    const candidates = input.candidateNodes;
    if (candidates.length) {
      const resolved = await resolveNodes(tx, candidates);
      if (![...resolved.values()].some((r) => r.id === node.id)) mismatch.candidates = candidates;
    }
    if (Object.keys(mismatch).length)
      throw baremetalDomainError('backfill_mismatch', { node: node.uuid, ...mismatch }, `the request does not match node ${node.uuid}`);
    if (await findAllocation(tx, uuid)) throw uuidTaken(uuid);
    if (input.name !== null && (await findAllocation(tx, input.name))) throw nameTaken(input.name);
    const { id: allocationId } = await insertAllocation(
      tx,
      {
        uuid,
        name: input.name,
        node_id: node.id,
        resource_class: input.resourceClass || node.resource_class,
        state: 'active',
        last_error: null,
        conductor_affinity: ctx.conductorId,
        candidate_nodes: JSON.stringify(candidates.length ? [node.uuid] : []),
        extra: JSON.stringify(input.extra),
        owner: input.owner,
        created_at: now,
        updated_at: now,
      },
      traits,
    );
    const allocation = (await findAllocationById(tx, allocationId))!;
    if (!(await ctx.backend.claim(tx, allocation, node)))
      throw baremetalDomainError('backfill_no_room', { node: node.uuid }, `node ${node.uuid}'s provider is full`);
    await updateNode(tx, node.id, { instance_uuid: uuid, allocation_id: allocationId, updated_at: now });
    created = await findAllocationById(tx, allocationId);
  }).catch((err) => {
    if (isUniqueViolation(err)) throw baremetalDomainError('backfill_changed_concurrently', { node: ident }, `node ${ident} changed concurrently`);
    throw err;
  });
  return created!;
}

/** PATCH (1.57): `edit` (the route's: apply the patch, check the result) runs on the allocation as locked. */
export async function patchAllocation(
  ctx: BaremetalContext,
  ident: string,
  edit: (doc: { name: string | null; extra: unknown }) => { name: string | null; extra: unknown },
): Promise<AllocationRecord> {
  return transaction(ctx.database, async (tx) => {
    const allocation = await lockAllocation(tx, ident);
    if (!allocation) throw allocationNotFound(ident);
    const after = edit({ name: allocation.name, extra: JSON.parse(allocation.extra) as unknown });
    if (after.name !== allocation.name && after.name !== null && (await findAllocation(tx, after.name))) throw nameTaken(after.name);
    await updateAllocation(tx, allocation.id, { name: after.name, extra: JSON.stringify(after.extra ?? {}) });
    return (await findAllocationById(tx, allocation.id))!;
  }).catch((err) => {
    if (isUniqueViolation(err)) throw nameTaken(null);
    throw err;
  });
}

/**
 * DELETE /v1/allocations/{id} (and /v1/nodes/{node}/allocation): release the node, in one
 * transaction. Locks the node before the allocation, the order every node write uses; an
 * allocation still `allocating` is simply deleted and its worker's final compare-and-set finds
 * nothing to finish.
 */
export async function deleteAllocation(ctx: BaremetalContext, ident: string): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const seen = await findAllocation(tx, ident);
    if (!seen) throw allocationNotFound(ident);
    const node = seen.node_id === null ? undefined : await lockNode(tx, seen.node_id);
    const allocation = await lockAllocation(tx, seen.id);
    if (!allocation) throw allocationNotFound(ident);
    if (allocation.node_id !== seen.node_id) {
      // the worker bound it to a node between our read and our lock: start over in lock order
      throw new RetryableConflict('allocation changed while deleting', () =>
        baremetalDomainError('allocation_changed_concurrently', {}, 'the allocation changed concurrently'),
      );
    }
    // a service instance's allocation is released by the instance (docs/ids.md)
    if (allocation.held_by !== null)
      throw baremetalDomainError('allocation_held', { allocation: allocation.uuid, held_by: allocation.held_by }, `allocation ${allocation.uuid} is held`);
    if (node && node.allocation_id === allocation.id) {
      const refusal = deallocationRefusal(node);
      if (refusal) {
        throw baremetalDomainError(
          'deallocation_refused',
          { allocation: allocation.uuid, node: node.uuid, state: node.provision_state, reason: refusal },
          `node ${node.uuid} is ${refusal}`,
        );
      }
      await deallocate(tx, ctx, node, 'allocation deleted');
    } else {
      await deleteAllocationRow(tx, allocation.id);
    }
    tx.afterCommit(() => ctx.allocationEnds.ended(allocation.id));
  });
}

/** DELETE /v1/nodes/{node}/allocation */
export async function deleteNodeAllocation(ctx: BaremetalContext, nodeIdent: string): Promise<void> {
  const node = await requireNode(ctx.database, nodeIdent);
  if (node.allocation_uuid === null) throw baremetalDomainError('node_allocation_not_found', { ident: nodeIdent }, `node ${nodeIdent} has no allocation`);
  await deleteAllocation(ctx, node.allocation_uuid);
}

// ---- the worker's step -----------------------------------------------------------------------

export type Attempt =
  | { kind: 'done' }
  | { kind: 'gone' }
  | { kind: 'failed'; reason: string }
  /** no node could be reserved now, but some may free up (held by others, power settling): try again soon */
  | { kind: 'retry' };

/** The backend refused the node the claim reserved (its Placement provider is full). */
export class Unsuitable extends Error {}
class Gone extends Error {}

/** One try at an allocation this conductor owns. */
export async function attemptAllocation(ctx: BaremetalContext, allocationId: number): Promise<Attempt> {
  const allocation = await findAllocationById(ctx.database, allocationId);
  if (allocation?.state !== 'allocating' || allocation.conductor_affinity !== ctx.conductorId) return { kind: 'gone' };
  const wanted = nodeWanted(allocation);
  const outcome = await transaction(ctx.database, async (tx) => {
    const node = await reserveFreeNode(tx, wanted, allocation);
    if (!node) return 'none' as const;
    await takeNode(tx, ctx, allocation, node);
    return 'done' as const;
  }).catch((err) => {
    if (err instanceof Unsuitable) return 'unsuitable' as const;
    if (err instanceof Gone) return 'gone' as const;
    // another node got this allocation's uuid as its instance_uuid meanwhile
    if (isUniqueViolation(err)) return 'unsuitable' as const;
    throw err;
  });
  if (outcome === 'done' || outcome === 'gone') return { kind: outcome };
  if (outcome === 'unsuitable') return { kind: 'retry' };
  // Read after the reservation found nothing: a node that became free meanwhile is seen here.
  const reason = await whyNoNode(ctx.database, wanted);
  return reason === null ? { kind: 'retry' } : { kind: 'failed', reason };
}

/**
 * The rest of the claim, in the transaction that reserved `node` for the allocation (and wrote the
 * requested traits into its instance_info): claim it in the backend and make the allocation active
 * — guarded by this conductor's affinity (the spec's guarded update). The allocation as it now is.
 */
export async function takeNode(tx: Tx, ctx: BaremetalContext, allocation: AllocationRecord, node: ReservedNode): Promise<AllocationRecord> {
  if (!(await ctx.backend.claim(tx, allocation, node))) throw new Unsuitable();
  const now = tx.clock.nowIso();
  if (!(await finishAllocation(tx, allocation.id, ctx.conductorId, { state: 'active', nodeId: node.id }, now))) throw new Gone();
  noteActive(tx, ctx, allocation);
  return { ...allocation, state: 'active', node_id: node.id, node_uuid: node.uuid, last_error: null, updated_at: now };
}

/** Once the transaction that made `allocation` active commits: the metrics, and a request waiting for it is woken. */
export function noteActive(tx: Tx, ctx: BaremetalContext, allocation: { id: number; created_at: string }): void {
  tx.afterCommit(() => {
    ctx.allocationEnds.ended(allocation.id);
    ctx.metrics.baremetalAllocationsFinished.inc({ state: 'active' });
    ctx.metrics.baremetalAllocationSeconds.observe(Math.max(0, tx.clock.nowMs() - Date.parse(allocation.created_at)) / 1000);
  });
}

/** Mark an allocation this conductor owns as failed (guarded like every worker write). */
export async function failAllocation(ctx: BaremetalContext, allocation: { id: number; uuid: string }, reason: string): Promise<void> {
  const finished = await transaction(ctx.database, (tx) =>
    finishAllocation(tx, allocation.id, ctx.conductorId, { state: 'error', lastError: allocationFailure(allocation.uuid, reason) }),
  );
  if (!finished) return;
  ctx.allocationEnds.ended(allocation.id);
  ctx.metrics.baremetalAllocationsFinished.inc({ state: 'error' });
}

/** Longest a waiting request goes without reading its allocation (one finished by another process is seen this late at most). */
const WAIT_POLL_MS = 1_000;

/**
 * `Prefer: wait` (routes/allocations.ts): the allocation once it has left `allocating`, or as it is
 * after `ms` or when `signal` aborts (the client went away); undefined when it was deleted
 * meanwhile. Holds no database connection while it waits: this process's own ends wake it at
 * once (ctx.allocationEnds), and it re-reads the row every WAIT_POLL_MS for those of another
 * process (a conductor that took the allocation over).
 */
export async function awaitAllocation(ctx: BaremetalContext, id: number, ms: number, signal: AbortSignal): Promise<AllocationRecord | undefined> {
  const deadline = performance.now() + ms;
  for (;;) {
    const watch = ctx.allocationEnds.watch(id);
    try {
      const current = await findAllocationById(ctx.database, id);
      const left = deadline - performance.now();
      if (current?.state !== 'allocating' || left <= 0 || signal.aborted) return current;
      await watch.until(Math.min(left, WAIT_POLL_MS), signal);
    } finally {
      watch.cancel();
    }
  }
}

/** How many allocations are in each state, for the metrics. */
export const allocationCountsByState = (ctx: BaremetalContext) => countAllocationsByState(ctx.database);
