// Usage: how much of each resource class is allocated, per provider or per project/user.
import { sql } from 'kysely';
import type { TotalUsages } from '../../client/placement-wire.js';
import type { Db } from '../../db/database.js';
import { requireProvider } from './providers.js';

/** Every class the provider has inventory of, with what is allocated of it (0 when unused). */
export async function providerUsages(db: Db, uuid: string) {
  const provider = await requireProvider(db, uuid);
  const rows = await db.db
    .selectFrom('inventories as i')
    .innerJoin('resource_classes as rc', 'rc.id', 'i.resource_class_id')
    .select(['rc.name', 'i.used'])
    .where('i.resource_provider_id', '=', provider.id)
    .execute();
  return { provider, usages: Object.fromEntries(rows.map((r) => [r.name, r.used])) };
}

export interface UsageFilter {
  projectId: string;
  userId?: string;
  /** a type name, 'all' (no grouping), or 'unknown' (consumers without a type) */
  consumerType?: string;
}

/** Totals per class for a project (and user); with `byType`, grouped by consumer type (1.38). */
export async function projectUsages(db: Db, f: UsageFilter, byType: boolean): Promise<TotalUsages['usages']> {
  let q = db.db
    .selectFrom('allocations as a')
    .innerJoin('consumers as c', 'c.id', 'a.consumer_id')
    .innerJoin('resource_classes as rc', 'rc.id', 'a.resource_class_id')
    .leftJoin('consumer_types as t', 't.id', 'c.consumer_type_id')
    .where('c.project_id', '=', f.projectId);
  if (f.userId !== undefined) q = q.where('c.user_id', '=', f.userId);
  if (!byType) {
    const rows = await q
      .select(['rc.name', (eb) => eb.fn.sum<number>('a.used').as('used')])
      .groupBy('rc.name')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.used)]));
  }
  const wanted = f.consumerType;
  if (wanted === 'unknown') q = q.where('c.consumer_type_id', 'is', null);
  else if (wanted !== undefined && wanted !== 'all') q = q.where('t.name', '=', wanted);
  // 'all' is one group. (PostgreSQL refuses GROUP BY a constant, so that case has no type to group by.)
  const type = wanted === 'all' ? sql<string>`'all'` : sql<string>`coalesce(${sql.ref('t.name')}, 'unknown')`;
  const typeGroup = wanted === 'all' ? [] : [type];
  const rows = await q
    .select([type.as('type'), 'rc.name', (eb) => eb.fn.sum<number>('a.used').as('used')])
    .groupBy([...typeGroup, 'rc.name'])
    .execute();
  const counts = await q
    .select([type.as('type'), (eb) => eb.fn.count<number>('c.id').distinct().as('consumers')])
    .$if(typeGroup.length > 0, (qb) => qb.groupBy(typeGroup))
    .execute();
  const out: Record<string, { consumer_count: number; [resourceClass: string]: number }> = {};
  // Without GROUP BY an empty selection still counts one row (of 0 consumers): no group then.
  for (const c of counts) if (Number(c.consumers) > 0) out[c.type] = { consumer_count: Number(c.consumers) };
  for (const r of rows) out[r.type]![r.name] = Number(r.used);
  return out;
}
