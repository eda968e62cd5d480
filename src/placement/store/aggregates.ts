// Aggregates a provider is a member of. Before 1.19 replacing them did not bump the provider's
// generation (and took none from the client); from 1.19 it does both.
import type { Db, Tx } from '../../db/database.js';
import { writeStatement } from '../../db/statement.js';

import { noteProvidersChanged } from './provider-index.js';
import { type ProviderView, bumpProvider, requireProvider } from './providers.js';

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
 * Replace the aggregates of a provider locked by the caller. `bump`: move its generation (1.19+);
 * before 1.19 the generation stayed as it was. Returns the provider's generation afterwards.
 */
export async function replaceProviderAggregates(tx: Tx, provider: ProviderView, aggregateUuids: string[], bump: boolean): Promise<number> {
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
  if (ids.length)
    await tx.db
      .insertInto('resource_provider_aggregates')
      .values(ids.map((aggregate_id) => ({ resource_provider_id: provider.id, aggregate_id })))
      .execute();
  if (!bump) {
    // No new generation, but a new version of the provider's row (the same values): a one-statement
    // write waiting for this one's lock then knows its snapshot of the provider's rows is old
    // (one-statement-registration.ts).
    if (tx.dialect === 'postgres') await TOUCH.run(tx, [provider.id]);
    noteProvidersChanged(tx, [provider.id]);
    return provider.generation;
  }
  return bumpProvider(tx, provider);
}

const TOUCH = writeStatement('update resource_providers set generation = generation where id = ?');
