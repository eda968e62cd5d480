// Allocation operations. Creating one writes it in `allocating` with this conductor's affinity and
// hands it to the worker; backfilling (1.58) binds an already deployed node at once. The worker's
// step `attemptAllocation` follows the spec: candidates, shuffle, then per node ONE transaction
// that reserves it with a compare-and-set, re-checks it, and sets the node's instance_uuid and
// allocation_id, the allocation's node and state, and the requested traits in instance_info (plus
// the backend's claim); on failure the next node. Deleting works in any state.
//
// Why the reservation is not Ironic's separate node lock (`reservation`, taken and released in
// their own commits): the lock only guards the binding that follows it, and here both commit
// together, so the lock is the compare-and-set itself. That halves the commits per allocation
// (measured: bench/baremetal.ts, SQLite synchronous=FULL is bound by fsyncs) and leaves no stale
// lock behind a crash.
import { DomainError, RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import type { Tx } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import { allocationFailure, candidateOrder, stillSuitable } from '../core/allocation.js';
import { deallocationRefusal } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import {
  type AllocationRecord,
  allocationNotFound,
  deleteAllocationRow,
  findAllocation,
  findAllocationById,
  finishAllocation,
  insertAllocation,
  lockAllocation,
  updateAllocation,
} from '../store/allocations.js';
import { candidateQuery, nodesSettlingPower } from '../store/candidates.js';
import {
  type NodeRecord,
  findNodeById,
  instanceUuidTaken,
  lockNode,
  nodeNotFound,
  requireNode,
  reserveForAllocation,
  resolveNodes,
  updateNode,
} from '../store/nodes.js';
import { ensureRegistered } from './conductors.js';
import { deallocate, instanceAssociated, nodeAssociated } from './nodes.js';

/** A new allocation, its values already checked by the route. */
export interface NewAllocation {
  /** normalized; null: a new one (or, backfilling, the node's instance_uuid) */
  uuid: string | null;
  name: string | null;
  resourceClass: string | null;
  traits: string[];
  /** nodes by uuid or name */
  candidateNodes: string[];
  extra: Record<string, unknown>;
  owner: string | null;
  /** backfill (1.58): the deployed node this allocation records */
  node: string | null;
}

const uuidTaken = (uuid: string) => new DomainError('allocation_uuid_taken', { uuid }, `an allocation has uuid ${uuid}`);
const nameTaken = (name: string | null) => new DomainError('allocation_name_taken', { name }, `an allocation is named ${name}`);

export async function createAllocation(ctx: BaremetalContext, input: NewAllocation): Promise<AllocationRecord> {
  const traits = [...new Set(input.traits)];
  await ensureRegistered(ctx);
  if (input.node !== null) return backfill(ctx, input, input.node, traits);
  const resourceClass = input.resourceClass ?? '';

  // candidate_nodes may name nodes by uuid or name; they are kept as uuids, in the given order
  const idents = input.candidateNodes;
  const resolved = await resolveNodes(ctx.database, idents);
  const missing = idents.filter((i) => !resolved.has(i));
  if (missing.length) throw new DomainError('candidate_nodes_not_found', { idents: missing }, `no nodes ${missing.join(', ')}`);
  const candidates = [...new Set(idents.map((i) => resolved.get(i)!.uuid))];

  const uuid = input.uuid ?? newUuid();
  const now = ctx.clock.nowIso();
  // The answer is read inside the transaction: once the allocation is committed, a database fault
  // must not turn the reply into a 503 that says nothing was done (the worker allocates it anyway).
  let created: AllocationRecord | undefined;
  const id = await insertChecked(ctx, uuid, input.name, async (tx) => {
    const inserted = await insertAllocation(
      tx,
      {
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
        created_at: now,
        updated_at: null,
      },
      traits,
    );
    created = await findAllocationById(tx, inserted);
    return inserted;
  });
  ctx.allocations.enqueue(id);
  return created!;
}

/** Insert after the checks of the spec (uuid unique and not any node's instance_uuid; name unique). */
async function insertChecked(ctx: BaremetalContext, uuid: string, name: string | null, insert: (tx: Tx) => Promise<number>): Promise<number> {
  try {
    return await transaction(ctx.database, async (tx) => {
      if (await findAllocation(tx, uuid)) throw uuidTaken(uuid);
      if (name !== null && (await findAllocation(tx, name))) throw nameTaken(name);
      // the allocation's uuid becomes a node's instance_uuid: one already in use is a conflict
      if (await instanceUuidTaken(tx, uuid)) throw new DomainError('allocation_uuid_is_instance', { uuid }, `a node has instance ${uuid}`);
      return insert(tx);
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      if (await findAllocation(ctx.database, uuid)) throw uuidTaken(uuid);
      if (name !== null && (await findAllocation(ctx.database, name))) throw nameTaken(name);
    }
    throw err;
  }
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
      throw new DomainError('backfill_node_allocated', { node: node.uuid, allocation: node.allocation_uuid }, `node ${node.uuid} is allocated`);
    if (node.instance_uuid !== null && node.instance_uuid !== uuid) throw nodeAssociated(node.uuid, node.instance_uuid);
    if (node.instance_uuid === null && (await instanceUuidTaken(tx, uuid))) throw instanceAssociated(uuid, node.uuid);
    if (node.provision_state !== 'active')
      throw new DomainError('backfill_node_not_active', { node: node.uuid, state: node.provision_state }, `node ${node.uuid} is not active`);
    const mismatch: { resourceClass?: [string | null, string]; traits?: [string[], string[]]; candidates?: string[] } = {};
    if (input.resourceClass && input.resourceClass !== node.resource_class) mismatch.resourceClass = [node.resource_class, input.resourceClass];
    if (traits.some((t) => !node.traits.includes(t))) mismatch.traits = [node.traits, traits];
    const candidates = input.candidateNodes;
    if (candidates.length) {
      const resolved = await resolveNodes(tx, candidates);
      if (![...resolved.values()].some((r) => r.id === node.id)) mismatch.candidates = candidates;
    }
    if (Object.keys(mismatch).length)
      throw new DomainError('backfill_mismatch', { node: node.uuid, ...mismatch }, `the request does not match node ${node.uuid}`);
    if (await findAllocation(tx, uuid)) throw uuidTaken(uuid);
    if (input.name !== null && (await findAllocation(tx, input.name))) throw nameTaken(input.name);
    const allocationId = await insertAllocation(
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
      throw new DomainError('backfill_no_room', { node: node.uuid }, `node ${node.uuid}'s provider is full`);
    await updateNode(tx, node.id, { instance_uuid: uuid, allocation_id: allocationId, updated_at: now });
    created = await findAllocationById(tx, allocationId);
  }).catch((err) => {
    if (isUniqueViolation(err)) throw new DomainError('backfill_changed_concurrently', { node: ident }, `node ${ident} changed concurrently`);
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
      throw new RetryableConflict(
        'allocation changed while deleting',
        () => new DomainError('allocation_changed_concurrently', {}, 'the allocation changed concurrently'),
      );
    }
    if (node && node.allocation_id === allocation.id) {
      const refusal = deallocationRefusal(node);
      if (refusal) {
        throw new DomainError(
          'deallocation_refused',
          { allocation: allocation.uuid, node: node.uuid, state: node.provision_state, reason: refusal },
          `node ${node.uuid} is ${refusal}`,
        );
      }
      await deallocate(tx, ctx, node);
    } else {
      await deleteAllocationRow(tx, allocation.id);
    }
  });
}

/** DELETE /v1/nodes/{node}/allocation */
export async function deleteNodeAllocation(ctx: BaremetalContext, nodeIdent: string): Promise<void> {
  const node = await requireNode(ctx.database, nodeIdent);
  if (node.allocation_uuid === null) throw new DomainError('node_allocation_not_found', { ident: nodeIdent }, `node ${nodeIdent} has no allocation`);
  await deleteAllocation(ctx, node.allocation_uuid);
}

// ---- the worker's step -----------------------------------------------------------------------

export type Attempt =
  | { kind: 'done' }
  | { kind: 'gone' }
  | { kind: 'failed'; reason: string }
  /** every candidate was taken or changed under us before we could reserve it; search again */
  | { kind: 'retry'; suitable: number }
  /** none now, but nodes whose power state is settling may be: search again soon, else fail with `reason` */
  | { kind: 'wait'; reason: string };

class Unsuitable extends Error {}
class Gone extends Error {}

/** One pass over the candidates of an allocation this conductor owns. */
export async function attemptAllocation(ctx: BaremetalContext, allocationId: number): Promise<Attempt> {
  const allocation = await findAllocationById(ctx.database, allocationId);
  if (allocation?.state !== 'allocating' || allocation.conductor_affinity !== ctx.conductorId) return { kind: 'gone' };
  let found = await ctx.backend.candidates(ctx.database, allocation);
  if ('reason' in found) {
    if (await nodesSettlingPower(ctx.database, candidateQuery(allocation))) return { kind: 'wait', reason: found.reason };
    // a node may have settled between the search and the count (two reads, two snapshots on
    // PostgreSQL): a search after the count sees it
    found = await ctx.backend.candidates(ctx.database, allocation);
    if ('reason' in found) return { kind: 'failed', reason: found.reason };
  }
  for (const candidate of candidateOrder(found.nodes, allocation.name)) {
    const outcome = await transaction(ctx.database, (tx) => claimNode(tx, ctx, allocation, candidate.id)).catch((err) => {
      if (err instanceof Unsuitable) return 'unsuitable' as const;
      if (err instanceof Gone) return 'gone' as const;
      // another node got this allocation's uuid as its instance_uuid meanwhile
      if (isUniqueViolation(err)) return 'unsuitable' as const;
      throw err;
    });
    if (outcome !== 'unsuitable') return { kind: outcome };
  }
  return { kind: 'retry', suitable: found.nodes.length };
}

/**
 * The claim, ONE transaction: reserve the node with a compare-and-set that re-checks every
 * column condition of the search (PostgreSQL: a concurrent claimant waits on the row and then
 * finds it taken), re-check what columns cannot say (candidates, owner, traits), claim it in
 * the backend, record the requested traits in instance_info, and make the allocation active —
 * guarded by this conductor's affinity. Any failure rolls all of it back.
 */
async function claimNode(tx: Tx, ctx: BaremetalContext, allocation: AllocationRecord, nodeId: number): Promise<'done'> {
  if (!(await reserveForAllocation(tx, nodeId, allocation))) throw new Unsuitable();
  const node: NodeRecord = (await findNodeById(tx, nodeId))!;
  const wanted = { candidates: JSON.parse(allocation.candidate_nodes) as string[], owner: allocation.owner, traits: allocation.traits };
  if (!stillSuitable(node, wanted)) throw new Unsuitable();
  if (!(await ctx.backend.claim(tx, allocation, node))) throw new Unsuitable();
  const instanceInfo = { ...(JSON.parse(node.instance_info) as Record<string, unknown>), traits: allocation.traits };
  await updateNode(tx, node.id, { instance_info: JSON.stringify(instanceInfo) });
  // the spec's guarded update: only while this conductor still owns the allocation
  if (!(await finishAllocation(tx, allocation.id, ctx.conductorId, { state: 'active', nodeId: node.id }))) throw new Gone();
  tx.afterCommit(() => {
    ctx.metrics.baremetalAllocationsFinished.inc({ state: 'active' });
    ctx.metrics.baremetalAllocationSeconds.observe(Math.max(0, tx.clock.nowMs() - Date.parse(allocation.created_at)) / 1000);
  });
  return 'done';
}

/** Mark an allocation this conductor owns as failed (guarded like every worker write). */
export async function failAllocation(ctx: BaremetalContext, allocation: { id: number; uuid: string }, reason: string): Promise<void> {
  const finished = await transaction(ctx.database, (tx) =>
    finishAllocation(tx, allocation.id, ctx.conductorId, { state: 'error', lastError: allocationFailure(allocation.uuid, reason) }),
  );
  if (finished) ctx.metrics.baremetalAllocationsFinished.inc({ state: 'error' });
}
