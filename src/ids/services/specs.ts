// Allocation specs: created (checked against the configured inventories and against each other),
// read, listed, deleted while no service instance uses them. A spec of a project is seen and used
// by that project's callers (and those allowed every project's); one of no project by everyone.
import type { SpecCreate } from '../../client/ids-wire.js';
import { transaction } from '../../db/transaction.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import { type IfMatch, requireMatch } from '../core/if-match.js';
import { type PoolScope, inScope } from '../core/scope.js';
import * as store from '../store/specs.js';

export type { Spec } from '../store/specs.js';

/**
 * Every inventory the spec names exists and offers what the attribute needs; keys are set by
 * clients; a capacity attribute's `in_tree_of` names a node attribute.
 */
function checkSpec(ctx: IdsContext, input: SpecCreate): void {
  for (const [attr, s] of Object.entries(input.attributes)) {
    if (s.from === 'pool' || s.from === 'node') continue;
    if (s.from === 'capacity') {
      if (s.in_tree_of === undefined) continue;
      const target = input.attributes[s.in_tree_of];
      if (target?.from !== 'node')
        throw idsDomainError('invalid_attribute_reference', {
          attribute: attr,
          refers_to: s.in_tree_of,
          reason: target === undefined ? 'is not an attribute of the spec' : 'is not a node attribute (in_tree_of names one)',
        });
      continue;
    }
    const needs = s.from === 'lookup' ? 'lookup' : 'allocateForOwner';
    if (!ctx.inventories.offers(s.inventory, needs))
      throw idsDomainError('inventory_lacks_operation', { inventory: s.inventory, operation: needs, attribute: attr });
    const keyAttr = s.from === 'lookup' ? s.key_attribute : s.owner_attribute;
    if (keyAttr !== undefined && keyAttr in input.attributes) throw idsDomainError('key_attribute_allocated', { attribute: attr, key_attribute: keyAttr });
  }
}

/** Create a spec; the same name with the same attributes (and project) again answers the existing one. */
export async function createSpec(ctx: IdsContext, input: SpecCreate): Promise<{ spec: store.Spec; created: boolean }> {
  checkSpec(ctx, input);
  const attributes = JSON.stringify(input.attributes);
  return transaction(ctx.database, async (tx) => {
    const existing = await store.findSpec(tx, input.name);
    if (existing) {
      if (JSON.stringify(existing.attributes) === attributes && existing.project_id === (input.project_id ?? null)) return { spec: existing, created: false };
      throw idsDomainError('spec_exists', { spec: input.name });
    }
    return { spec: await store.insertSpec(tx, input, attributes), created: true };
  });
}

/** The spec of this name within the caller's scope (another project's is not found). */
export async function getSpec(ctx: IdsContext, name: string, scope: PoolScope): Promise<store.Spec> {
  const spec = await store.getSpec(ctx.database, name);
  if (!inScope(scope, spec.project_id)) throw idsDomainError('spec_not_found', { spec: name });
  return spec;
}

/** Up to `limit` specs after `after` (by name) within the scope; `next` is set when more follow. */
export async function listSpecs(ctx: IdsContext, after: string | null, limit: number, scope: PoolScope): Promise<{ items: store.Spec[]; next: string | null }> {
  const specs = await store.listSpecs(ctx.database, after, limit + 1, scope.all ? undefined : scope.project);
  return { items: specs.slice(0, limit), next: specs.length > limit ? specs[limit - 1]!.name : null };
}

export async function deleteSpec(ctx: IdsContext, name: string, ifMatch: IfMatch, scope: PoolScope): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const spec = await store.getSpec(tx, name);
    if (!inScope(scope, spec.project_id)) throw idsDomainError('spec_not_found', { spec: name });
    requireMatch(ifMatch, spec.version);
    if (await store.specInUse(tx, spec.id)) throw idsDomainError('spec_in_use', { spec: name });
    await store.deleteSpecRow(tx, spec.id);
  });
}
