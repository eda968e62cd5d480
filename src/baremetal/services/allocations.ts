// The Ironic allocation API's operations: create (POST /v1/allocations), patch (1.57), delete (also
// DELETE /v1/nodes/{node}/allocation) and waiting for one (`Prefer: wait`); reads are in
// allocation-reads.ts. Creating one writes it in `allocating` with this conductor's affinity and,
// when a free node matches, takes that node in the same transaction (allocation-claims.ts): no
// wait for the worker (the route still answers it as Ironic does, `allocating`, unless the client
// asked to wait: awaitAllocation). Otherwise (no node free at this moment, a configured
// --allocation-delay, or a claim the backend refused) the allocation is handed to the worker, whose
// step (allocation-attempts.ts) does the same in a transaction of its own until it succeeds, or
// fails with Ironic's reason. Backfilling (1.58) binds an already deployed node at once
// (allocation-backfill.ts). Deleting works in any state.
import { type DomainError, RetryableConflict } from '../../core/errors.js';
import { newUuid } from '../../core/uuid.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import type { Tx } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import type { NewAllocation } from '../core/allocation.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import { deallocationRefusal } from '../core/states.js';
import type { BaremetalContext } from '../context.js';
import {
  type AllocationRecord,
  allocationNameTaken,
  allocationNotFound,
  allocationUuidTaken,
  countAllocationsByState,
  deleteAllocationRow,
  findAllocation,
  findAllocationById,
  insertNewAllocation,
  lockAllocation,
  updateAllocation,
} from '../store/allocations.js';
import { nodeWanted, reserveFreeNode } from '../store/candidates.js';
import { lockNode, requireNode, resolveNodes } from '../store/nodes.js';
import { backfill } from './allocation-backfill.js';
import { Unsuitable, allocateAtOnce, takeNode } from './allocation-claims.js';
import { ensureRegistered } from './conductors.js';
import { deallocate } from './node-allocation.js';

const candidatesNotFound = (idents: string[]) => baremetalDomainError('candidate_nodes_not_found', { idents }, `no nodes ${idents.join(', ')}`);
const isProjects = (node: { owner: string | null; lessee: string | null }, project: string | null) => node.owner === project || node.lessee === project;

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
  if (await findAllocation(ctx.database, uuid)) return allocationUuidTaken(uuid);
  if (name !== null && (await findAllocation(ctx.database, name))) return allocationNameTaken(name);
  return undefined;
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
    if (after.name !== allocation.name && after.name !== null && (await findAllocation(tx, after.name))) throw allocationNameTaken(after.name);
    await updateAllocation(tx, allocation.id, { name: after.name, extra: JSON.stringify(after.extra ?? {}) });
    return (await findAllocationById(tx, allocation.id))!;
  }).catch((err) => {
    if (isUniqueViolation(err)) throw allocationNameTaken(null);
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
