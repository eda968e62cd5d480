// The claim a scheduler sends for every new instance — allocations for consumers that do not exist
// yet (PUT /allocations/{c} with `consumer_generation: null`, or POST /allocations of new
// consumers) — as ONE statement on PostgreSQL, in its own implicit transaction: one round trip
// instead of six (BEGIN, consumer, providers, usage, allocations, COMMIT). On this 2-core machine a
// round trip costs the server about 0.25 ms of CPU (mostly waking the other side), more than the
// statements themselves.
//
// The statement does what writeAllocations does for such a write, in the same order: insert
// the consumers, lock and bump the providers (in id order), move the inventories' `used` where the
// amounts pass the unit rules and fit the capacity, and insert the allocations. The checks run on
// the locked, latest rows (an UPDATE re-reads a row that changed while it waited for its lock);
// when any of them fails — a consumer exists, a provider or inventory is missing, an amount breaks
// a rule or does not fit, a cached class id is stale — `allot_assert` raises and nothing is kept.
// The write then goes the general way, which decides again under its own locks and words the
// answer. So this path never refuses anything itself: it can only accept what the general path
// would also accept, or step aside.
import { memo } from '../../core/memo.js';
import type { Db, Tx } from '../../db/database.js';
import { writeStatement } from '../../db/statement.js';

import type { ConsumerAllocations } from './allocations.js';
import type { NameCache } from './names.js';
import { noteUsageChanged } from './provider-index.js';

/** Larger writes (rare: a scheduler claims for one instance) take the general path: few shapes, few prepared statements. */
const MAX_CONSUMERS = 4;
const MAX_ROWS = 16;

/**
 * The statement for a shape (how many consumers, providers and allocation rows), made once per
 * shape. The values are listed one placeholder each rather than passed as arrays: with its exact
 * row counts PostgreSQL's cached plan walks the indexes (with arrays its generic plan assumed ten
 * rows each and scanned every provider).
 * Capacity is `floor((total - reserved) * allocation_ratio)`, as core/capacity.ts computes it, in
 * the same double-precision arithmetic.
 */
const claimStatement = memo(
  (shape: string) => {
    const [consumers, providers, rows] = shape.split('/').map(Number) as [number, number, number];
    return makeClaimStatement(consumers, providers, rows);
  },
  MAX_CONSUMERS * MAX_ROWS * MAX_ROWS,
);

function makeClaimStatement(consumers: number, providers: number, rows: number) {
  let n = 1; // $1 is the time stamp
  const param = (type: 'text' | 'integer') => `$${++n}::${type}`;
  const consumerValues = Array.from(
    { length: consumers },
    () => `(${param('text')}, ${param('text')}, ${param('text')}, 1, ${param('integer')}, $1::text, $1::text)`,
  );
  const providerList = Array.from({ length: providers }, () => param('text')).join(', ');
  const wantedValues = Array.from({ length: rows }, () => `(${param('text')}, ${param('text')}, ${param('integer')}, ${param('text')}, ${param('integer')})`);
  return writeStatement<{ providers: Array<[number, number]>; usage: Array<[number, string, number]> }>(
    `with new_consumers as (
       insert into consumers (uuid, project_id, user_id, generation, consumer_type_id, created_at, updated_at)
       values ${consumerValues.join(', ')}
       on conflict (uuid) do nothing
       returning id, uuid
     ),
     providers as (
       update resource_providers set generation = generation + 1, updated_at = $1::text
       where id in (select id from resource_providers where uuid in (${providerList}) order by id for update)
       returning id, uuid, generation
     ),
     wanted as (
       select w.consumer_uuid, p.id as provider_id, w.class_id, w.class_name, w.amount
       from (values ${wantedValues.join(', ')}) as w(consumer_uuid, provider_uuid, class_id, class_name, amount)
       join providers p on p.uuid = w.provider_uuid
     ),
     usage as (
       update inventories i set used = i.used + w.amount
       from wanted w join resource_classes rc on rc.id = w.class_id and rc.name = w.class_name
       where i.resource_provider_id = w.provider_id and i.resource_class_id = w.class_id
         and w.amount between i.min_unit and i.max_unit and w.amount % i.step_size = 0
         and i.used::bigint + w.amount <= floor((i.total - i.reserved) * i.allocation_ratio)
       returning i.resource_provider_id, w.class_name, i.used
     ),
     inserted as (
       insert into allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at)
       select w.provider_id, c.id, w.class_id, w.amount, $1::text, $1::text
       from wanted w join new_consumers c on c.uuid = w.consumer_uuid
     )
     select allot_assert((select count(*) from new_consumers) = ${consumers} and (select count(*) from usage) = ${rows}, 'claim refused') as ok,
            (select json_agg(json_build_array(p.id, p.generation)) from providers p) as providers,
            (select json_agg(json_build_array(u.resource_provider_id, u.class_name, u.used)) from usage u) as usage`,
  );
}

/**
 * The one statement for `writes`, ready to run in a transaction of its own (`oneStatement`): it
 * writes everything or raises, and then nothing was kept and the general write decides and words
 * the answer. Null when `writes` is not a claim of this kind (on SQLite, never).
 */
export async function oneStatementClaim(db: Db, names: NameCache, writes: ConsumerAllocations[]): Promise<((tx: Tx) => Promise<void>) | null> {
  if (db.dialect !== 'postgres' || writes.length > MAX_CONSUMERS) return null;
  const consumers = new Set<string>();
  const pairs = new Set<string>();
  const classNames = new Set<string>();
  const typeNames = new Set<string>();
  for (const w of writes) {
    // Only consumers the client says are new, each once; each (provider, class) once in all, so
    // every usage row the statement changes is one allocation row it writes.
    if (w.generation !== null || w.allocations.size === 0 || consumers.has(w.consumerUuid)) return null;
    consumers.add(w.consumerUuid);
    if (w.consumerType !== undefined) typeNames.add(w.consumerType);
    for (const [rp, resources] of w.allocations) {
      if (resources.size === 0) return null;
      for (const rc of resources.keys()) {
        const pair = `${rp} ${rc}`;
        if (pairs.has(pair)) return null;
        pairs.add(pair);
        classNames.add(rc);
      }
    }
  }
  if (pairs.size > MAX_ROWS) return null;
  const classIds = await names.known(db, 'resource_classes', [...classNames]);
  const typeIds = typeNames.size ? await names.known(db, 'consumer_types', [...typeNames]) : new Map<string, number>();
  if (classIds.size < classNames.size || typeIds.size < typeNames.size) return null;

  const rows = writes.flatMap((w) => [...w.allocations].flatMap(([rp, resources]) => [...resources].map(([rc, amount]) => ({ w, rp, rc, amount }))));
  const providers = [...new Set(rows.map((r) => r.rp))];
  const claim = claimStatement(`${writes.length}/${providers.length}/${rows.length}`);
  const params = [
    db.clock.nowIso(),
    ...writes.flatMap((w) => [w.consumerUuid, w.projectId, w.userId, w.consumerType === undefined ? null : typeIds.get(w.consumerType)!]),
    ...providers,
    ...rows.flatMap((r) => [r.w.consumerUuid, r.rp, classIds.get(r.rc)!, r.rc, r.amount]),
  ];
  return async (tx) => {
    const result = (await claim.one(tx, params))!;
    // This process's candidates index takes the new usage as it is (see allocations.ts).
    const used = new Map<number, Map<string, number>>();
    for (const [providerId, className, n] of result.usage) used.set(providerId, (used.get(providerId) ?? new Map()).set(className, n));
    for (const [providerId, generation] of result.providers) noteUsageChanged(tx, providerId, generation, used.get(providerId) ?? new Map());
  };
}
