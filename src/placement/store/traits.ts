// Traits: standard (os-traits) and CUSTOM_*; a provider's set of traits changes as a whole and
// bumps its generation.
import { placementDomainError } from '../core/domain-errors.js';
import type { Db, Tx } from '../../db/database.js';

import { idsByName } from './names.js';
import { noteProvidersChanged } from './provider-index.js';
import { type ProviderView, bumpProvider, requireProvider } from './providers.js';

export interface TraitQuery {
  names?: string[];
  prefix?: string;
  /** true: only traits some provider has; false: only traits no provider has */
  associated?: boolean;
}

export async function listTraits(db: Db, q: TraitQuery): Promise<string[]> {
  let query = db.db.selectFrom('traits').select('name');
  if (q.names) query = query.where('name', 'in', q.names.length ? q.names : ['']);
  if (q.prefix !== undefined) query = query.where('name', '>=', q.prefix);
  if (q.associated !== undefined) {
    const used = db.db.selectFrom('resource_provider_traits').select('trait_id');
    query = query.where('id', q.associated ? 'in' : 'not in', used);
  }
  const rows = await query.orderBy('name').execute();
  // The range condition narrows the scan; the exact prefix test is here (LIKE escaping differs
  // between the dialects).
  return rows.map((r) => r.name).filter((n) => q.prefix === undefined || n.startsWith(q.prefix));
}

export async function traitExists(db: Db, name: string): Promise<boolean> {
  return (await db.db.selectFrom('traits').select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
}

/** Create a custom trait; false when it already existed. */
export async function insertTrait(tx: Tx, name: string): Promise<boolean> {
  const now = tx.clock.nowIso();
  const result = await tx.db
    .insertInto('traits')
    .values({ name, is_standard: 0, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export const traitNotFound = (name: string) => placementDomainError('trait_not_found', { name }, `no trait ${name}`);

/** Delete a custom trait no provider has. */
export async function deleteTrait(tx: Tx, name: string): Promise<void> {
  const trait = await tx.db.selectFrom('traits').select(['id', 'is_standard']).where('name', '=', name).executeTakeFirst();
  if (!trait) throw traitNotFound(name);
  if (trait.is_standard) throw placementDomainError('trait_is_standard', { name }, `${name} is a standard trait`);
  const used = await tx.db.selectFrom('resource_provider_traits').select('resource_provider_id').where('trait_id', '=', trait.id).limit(1).executeTakeFirst();
  if (used) throw placementDomainError('trait_in_use', { name }, `trait ${name} is in use`);
  await tx.db.deleteFrom('traits').where('id', '=', trait.id).execute();
  noteProvidersChanged(tx, 'all'); // every process forgets the names it knew
}

export async function providerTraits(db: Db, providerId: number): Promise<string[]> {
  const rows = await db.db
    .selectFrom('resource_provider_traits as pt')
    .innerJoin('traits as t', 't.id', 'pt.trait_id')
    .select('t.name')
    .where('pt.resource_provider_id', '=', providerId)
    .orderBy('t.name')
    .execute();
  return rows.map((r) => r.name);
}

export async function readProviderTraits(db: Db, uuid: string): Promise<{ provider: ProviderView; traits: string[] }> {
  const provider = await requireProvider(db, uuid);
  return { provider, traits: await providerTraits(db, provider.id) };
}

/** Replace the traits of a provider locked by the caller's transaction; bumps its generation. */
export async function replaceProviderTraits(tx: Tx, provider: ProviderView, names: string[]): Promise<number> {
  const ids = await idsByName(tx, 'traits', names);
  const missing = [...new Set(names)].filter((n) => !ids.has(n));
  if (missing.length) throw placementDomainError('unknown_traits', { names: missing }, `no traits ${missing.join(', ')}`);
  await tx.db.deleteFrom('resource_provider_traits').where('resource_provider_id', '=', provider.id).execute();
  const rows = [...new Set(ids.values())].map((trait_id) => ({ resource_provider_id: provider.id, trait_id }));
  if (rows.length) await tx.db.insertInto('resource_provider_traits').values(rows).execute();
  return bumpProvider(tx, provider);
}
