// Placement backend: bring allot's Placement in line with the nodes — every node a provider with
// its inventory and traits, every allocated node claimed by its allocation — so a database
// created under the `database` backend can switch to `placement`. One transaction per node.
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { findAllocationById } from '../store/allocations.js';
import { allNodeClasses, lockNode, traitsInUse } from '../store/nodes.js';

/** The resource classes and traits every node needs in Placement; then the ids of the nodes to reconcile. */
export async function prepareMirror(ctx: BaremetalContext): Promise<number[]> {
  const nodes = await allNodeClasses(ctx.database);
  for (const rc of new Set(nodes.map((n) => n.resource_class).filter((r): r is string => r !== null))) {
    await ctx.backend.prepare(ctx.database, { resourceClass: rc });
  }
  await ctx.backend.prepare(ctx.database, { traits: await traitsInUse(ctx.database) });
  return nodes.map((n) => n.id);
}

/**
 * One node's provider brought in line, and its allocation's claim written if Placement lacks it:
 * `repaired` when it was, `unclaimable` when the provider is held by another consumer.
 */
export async function reconcileNode(ctx: BaremetalContext, nodeId: number): Promise<'ok' | 'repaired' | 'unclaimable'> {
  return transaction(ctx.database, async (tx) => {
    const node = await lockNode(tx, nodeId);
    if (!node) return 'ok';
    await ctx.backend.nodeChanged(tx, node);
    if (node.allocation_id === null || node.allocation_uuid === null || (await ctx.backend.holdsClaim(tx, node.allocation_uuid))) return 'ok';
    const allocation = await findAllocationById(tx, node.allocation_id);
    if (allocation && (await ctx.backend.claim(tx, allocation, node))) return 'repaired';
    ctx.log.warn(
      { node: node.uuid, allocation: node.allocation_uuid },
      'allocated node could not be claimed in Placement (its provider is held by another consumer)',
    );
    return 'unclaimable';
  });
}
