// Placement backend, at start-up: reconcile every node with allot's Placement (services/mirror.ts)
// before this conductor starts beating. A process that died between a node write and nothing
// else leaves nothing to repair (those writes are atomic); this is for a database that grew under
// the `database` backend, or a Placement client that got in the way.
import type { BaremetalContext } from '../context.js';
import { prepareMirror, reconcileNode } from '../services/mirror.js';

export async function reconcileMirror(ctx: BaremetalContext): Promise<void> {
  const nodes = await prepareMirror(ctx);
  let repaired = 0;
  for (const id of nodes) if ((await reconcileNode(ctx, id)) === 'repaired') repaired++;
  ctx.log.info({ nodes: nodes.length, claimsRepaired: repaired }, 'placement mirror reconciled');
}
