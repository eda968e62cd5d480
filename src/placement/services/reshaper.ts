// POST /reshaper: inventories and the allocations on them move in one transaction.
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import { refuseOwnedProviders } from './allocations.js';
import type { ConsumerAllocations } from '../store/allocations.js';
import { type ProviderReshape, reshape as reshapeInTx } from '../store/reshaper.js';

export async function reshape(ctx: PlacementContext, providers: ProviderReshape[], allocations: ConsumerAllocations[]): Promise<void> {
  await refuseOwnedProviders(
    ctx,
    allocations.map((a) => a.consumerUuid),
    allocations.flatMap((a) => [...a.allocations.keys()]),
  );
  await transaction(ctx.database, async (tx) => {
    const held = await reshapeInTx(tx, ctx.names, providers, allocations);
    // their holders record where the allocations went, in the same transaction
    for (const change of held) await ctx.consumerHolder?.consumerChanged(tx, change);
  });
}
