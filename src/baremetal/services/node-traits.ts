// A node's traits (PUT, POST and DELETE …/traits): each change one node transaction, the new
// traits made known to the backend first, at most MAX_TRAITS_PER_NODE.
import { MAX_TRAITS_PER_NODE } from '../core/rules.js';
import type { BaremetalContext } from '../context.js';
import { type NodeRecord, replaceNodeTraits, updateNode } from '../store/nodes.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import { nodeTransaction, requireLockedNode, requireUnlocked } from './node-locks.js';

async function changeTraits(ctx: BaremetalContext, ident: string, added: string[], change: (current: string[], node: NodeRecord) => string[]): Promise<void> {
  await ctx.backend.prepare(ctx.database, { traits: added });
  await nodeTransaction(ctx, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    requireUnlocked(node);
    const traits = [...new Set(change(node.traits, node))];
    if (traits.length > MAX_TRAITS_PER_NODE) {
      throw baremetalDomainError(
        'too_many_traits',
        { node: node.uuid, count: traits.length, max: MAX_TRAITS_PER_NODE },
        `node ${node.uuid} would have ${traits.length} traits`,
      );
    }
    await replaceNodeTraits(tx, node.id, traits);
    await updateNode(tx, node.id, { updated_at: tx.clock.nowIso() });
    await ctx.backend.nodeChanged(tx, { ...node, traits });
  });
}

export const setNodeTraits = (ctx: BaremetalContext, ident: string, traits: string[]) => changeTraits(ctx, ident, traits, () => traits);
export const addNodeTrait = (ctx: BaremetalContext, ident: string, trait: string) => changeTraits(ctx, ident, [trait], (current) => [...current, trait]);
export const removeAllNodeTraits = (ctx: BaremetalContext, ident: string) => changeTraits(ctx, ident, [], () => []);
export const removeNodeTrait = (ctx: BaremetalContext, ident: string, trait: string) =>
  changeTraits(ctx, ident, [], (current, node) => {
    if (!current.includes(trait)) throw baremetalDomainError('node_trait_not_found', { node: node.uuid, trait }, `node ${node.uuid} has no trait ${trait}`);
    return current.filter((t) => t !== trait);
  });
