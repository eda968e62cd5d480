// A node's allocation released inside a node transaction (the node already locked): by a
// tear-down, a node's deletion, an `instance_uuid` removal, an allocation's deletion or its holder.
// Creating and deleting allocations themselves is allocations.ts.
import type { Tx } from '../../db/database.js';
import type { BaremetalContext } from '../context.js';
import { allocationHolder, deleteAllocationRow } from '../store/allocations.js';
import { type NodeRecord, updateNode } from '../store/nodes.js';

/**
 * Release a node's allocation inside the caller's transaction (node already locked): the backend
 * gives the claim back, the node forgets it, the allocation row goes. The spec's deallocation.
 */
export async function deallocate(tx: Tx, ctx: BaremetalContext, node: NodeRecord, reason: string, releasedBy?: string): Promise<void> {
  if (node.allocation_id === null) return;
  // A held allocation released by anyone but its holder (a tear-down, …): the holder learns of it.
  const heldBy = await allocationHolder(tx, node.allocation_id);
  if (heldBy !== null && heldBy !== releasedBy && node.allocation_uuid !== null) {
    await ctx.allocationHolder?.allocationReleased(tx, { heldBy, allocationUuid: node.allocation_uuid, nodeUuid: node.uuid, reason });
  }
  if (node.allocation_uuid !== null) await ctx.backend.release(tx, node.allocation_uuid);
  await updateNode(tx, node.id, {
    allocation_id: null,
    instance_uuid: node.instance_uuid === node.allocation_uuid ? null : node.instance_uuid,
    updated_at: tx.clock.nowIso(),
  });
  await deleteAllocationRow(tx, node.allocation_id);
}
