// Backfilling (1.58): POST /v1/allocations naming a `node` records the allocation of a node that is
// already deployed, instead of picking one. No worker and no pick: the node is locked, the request
// checked against it, and the allocation written `active` on it with the backend's claim, in one
// transaction; a request that does not fit the node is refused and leaves nothing behind.
import { newUuid } from '../../core/uuid.js';
import { isUniqueViolation } from '../../db/sql-helpers.js';
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import type { NewAllocation } from '../core/allocation.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import { type AllocationRecord, allocationNameTaken, allocationUuidTaken, findAllocation, findAllocationById, insertAllocation } from '../store/allocations.js';
import { instanceUuidTaken, lockNode, nodeNotFound, requireNode, resolveNodes, updateNode } from '../store/nodes.js';
import { instanceAssociated, nodeAssociated } from './nodes.js';

/**
 * 1.58: record the allocation of a node that is already deployed. Created `active` at once; a
 * request that does not fit the node is refused (409 for the node's state, 400 for a request that
 * contradicts the node) and leaves nothing behind.
 */
export async function backfill(ctx: BaremetalContext, input: NewAllocation, ident: string, traits: string[]): Promise<AllocationRecord> {
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
    if (await findAllocation(tx, uuid)) throw allocationUuidTaken(uuid);
    if (input.name !== null && (await findAllocation(tx, input.name))) throw allocationNameTaken(input.name);
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
