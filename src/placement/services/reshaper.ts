// POST /reshaper: inventories and the allocations on them move in one transaction.
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { refuseOwnedProviders } from './allocations.js';
import type { ConsumerAllocations } from '../store/allocations.js';
import { type ProviderReshape, reshape as reshapeInTx } from '../store/reshaper.js';

export async function reshape(ctx: PlacementContext, providers: ProviderReshape[], allocations: ConsumerAllocations[]): Promise<void> {
  await refuseOwnedProviders(
    ctx,
    allocations.flatMap((a) => [...a.allocations.keys()]),
  );
  // a held consumer moves only when its holder follows reshapes; any other is refused
  const follows = (heldBy: string) => ctx.consumerHolder?.holds(heldBy) ?? false;
  await transaction(ctx.database, async (tx) => {
    const held = await reshapeInTx(tx, ctx.names, providers, allocations, follows);
    // their holders record where the allocations went, in the same transaction
    for (const change of held) await ctx.consumerHolder?.consumerChanged(tx, change);
  });
}
