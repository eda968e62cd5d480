// Placement backend: bring allot's Placement in line with the nodes at start-up — every node a
// provider with its inventory and traits, every allocated node claimed by its allocation — so a
// database created under the `database` backend can switch to `placement` (and a process that
// died between a node write and nothing else leaves nothing to repair: those writes are atomic).
import { transaction } from '../db/transaction.js';
import type { BaremetalRuntime } from './runtime.js';
import { findAllocationById } from './store/allocations.js';
import { lockNode } from './store/nodes.js';

export async function reconcileMirror(rt: BaremetalRuntime): Promise<void> {
  const nodes = await rt.database.db.selectFrom('baremetal_nodes').select(['id', 'resource_class']).orderBy('id').execute();
  const traits = await rt.database.db.selectFrom('baremetal_node_traits').select('trait').distinct().execute();
  for (const rc of new Set(nodes.map((n) => n.resource_class).filter((r): r is string => r !== null))) {
    await rt.backend.prepare(rt.database, { resourceClass: rc });
  }
  await rt.backend.prepare(rt.database, { traits: traits.map((t) => t.trait) });
  let repaired = 0;
  for (const { id } of nodes) {
    await transaction(rt.database, async (tx) => {
      const node = await lockNode(tx, id);
      if (!node) return;
      await rt.backend.nodeChanged(tx, node);
      if (node.allocation_id !== null && node.allocation_uuid !== null && !(await rt.backend.holdsClaim(tx, node.allocation_uuid))) {
        const allocation = await findAllocationById(tx, node.allocation_id);
        if (allocation && (await rt.backend.claim(tx, allocation, node))) repaired++;
        else rt.log.warn({ node: node.uuid, allocation: node.allocation_uuid }, 'allocated node could not be claimed in Placement (its provider is held by another consumer)');
      }
    });
  }
  rt.log.info({ nodes: nodes.length, claimsRepaired: repaired }, 'placement mirror reconciled');
}
