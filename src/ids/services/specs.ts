// Allocation specs: created (checked against the configured inventories), read, listed, deleted
// while no service instance uses them.
import { transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import { type IfMatch, requireMatch } from '../core/if-match.js';
import * as store from '../store/specs.js';

/** Every inventory the spec names exists and offers what the attribute needs; keys are set by clients. */
function checkSpec(ctx: IdsContext, input: store.SpecInput): void {
  for (const [attr, s] of Object.entries(input.attributes)) {
    if (s.from === 'pool') continue;
    const needs = s.from === 'lookup' ? 'lookup' : 'allocateForOwner';
    if (!ctx.inventories.offers(s.inventory, needs))
      throw idsDomainError('inventory_lacks_operation', { inventory: s.inventory, operation: needs, attribute: attr });
    const keyAttr = s.from === 'lookup' ? s.key_attribute : s.owner_attribute;
    if (keyAttr !== undefined && keyAttr in input.attributes) throw idsDomainError('key_attribute_allocated', { attribute: attr, key_attribute: keyAttr });
  }
}

/** Create a spec; the same name with the same attributes again answers the existing one. */
export async function createSpec(ctx: IdsContext, input: store.SpecInput): Promise<{ spec: store.Spec; created: boolean }> {
  checkSpec(ctx, input);
  const attributes = JSON.stringify(input.attributes);
  return transaction(ctx.database, async (tx) => {
    const existing = await store.findSpec(tx, input.name);
    if (existing) {
      if (JSON.stringify(existing.attributes) === attributes) return { spec: existing, created: false };
      throw idsDomainError('spec_exists', { spec: input.name });
    }
    return { spec: await store.insertSpec(tx, input, attributes), created: true };
  });
}

export const getSpec = (ctx: IdsContext, name: string) => store.getSpec(ctx.database, name);

/** Up to `limit` specs after `after` (by name); `next` is set when more follow. */
export async function listSpecs(ctx: IdsContext, after: string | null, limit: number): Promise<{ items: store.Spec[]; next: string | null }> {
  const specs = await store.listSpecs(ctx.database, after, limit + 1);
  return { items: specs.slice(0, limit), next: specs.length > limit ? specs[limit - 1]!.name : null };
}

export async function deleteSpec(ctx: IdsContext, name: string, ifMatch: IfMatch): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const spec = await store.getSpec(tx, name);
    requireMatch(ifMatch, spec.version);
    if (await store.specInUse(tx, spec.id)) throw idsDomainError('spec_in_use', { spec: name });
    await store.deleteSpecRow(tx, spec.id);
  });
}
