// Aggregates a provider is a member of. Before 1.19 replacing them did not bump the provider's
// generation (and took none from the client); from 1.19 it does both.
import type { Database, Db } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import { noteProvidersChanged } from './provider-index.js';
import { bumpProvider, lockProvider, requireProvider } from './providers.js';
import { traitsGenerationConflict } from './traits.js';

export async function providerAggregates(db: Db, providerId: number): Promise<string[]> {
  const rows = await db.db
    .selectFrom('resource_provider_aggregates as pa')
    .innerJoin('aggregates as a', 'a.id', 'pa.aggregate_id')
    .select('a.uuid')
    .where('pa.resource_provider_id', '=', providerId)
    .orderBy('a.id')
    .execute();
  return rows.map((r) => r.uuid);
}

export async function readProviderAggregates(db: Db, uuid: string) {
  const provider = await requireProvider(db, uuid);
  return { provider, aggregates: await providerAggregates(db, provider.id) };
}

/**
 * Replace a provider's aggregates. `generation`: 'bump' with an optional client generation to
 * check (1.19+), or 'keep' to leave the generation alone (older microversions).
 */
export async function setProviderAggregates(
  database: Database,
  uuid: string,
  aggregateUuids: string[],
  generation: { mode: 'bump'; client?: number } | { mode: 'keep' },
): Promise<number> {
  return transaction(database, async (tx) => {
    const provider = await lockProvider(tx, uuid);
    if (generation.mode === 'bump' && generation.client !== undefined && generation.client !== provider.generation) throw traitsGenerationConflict();
    if (aggregateUuids.length) {
      await tx.db
        .insertInto('aggregates')
        .values(aggregateUuids.map((u) => ({ uuid: u })))
        .onConflict((oc) => oc.column('uuid').doNothing())
        .execute();
    }
    const ids = aggregateUuids.length
      ? (await tx.db.selectFrom('aggregates').select(['id', 'uuid']).where('uuid', 'in', aggregateUuids).execute()).map((r) => r.id)
      : [];
    await tx.db.deleteFrom('resource_provider_aggregates').where('resource_provider_id', '=', provider.id).execute();
    if (ids.length) await tx.db.insertInto('resource_provider_aggregates').values(ids.map((aggregate_id) => ({ resource_provider_id: provider.id, aggregate_id }))).execute();
    if (generation.mode === 'keep') {
      noteProvidersChanged(tx, [provider.id]);
      return provider.generation;
    }
    return bumpProvider(tx, provider);
  });
}
