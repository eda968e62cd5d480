// POST /reshaper: inventories and the allocations on them move in one transaction.
import { transaction } from '../../db/transaction.js';
import type { PlacementContext } from '../context.js';
import type { ConsumerAllocations } from '../store/allocations.js';
import { type ProviderReshape, reshape as reshapeInTx } from '../store/reshaper.js';

export function reshape(ctx: PlacementContext, providers: ProviderReshape[], allocations: ConsumerAllocations[]): Promise<void> {
  return transaction(ctx.database, (tx) => reshapeInTx(tx, ctx.names, providers, allocations));
}
