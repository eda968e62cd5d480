// The allocation writes a scheduler sends all day, each as ONE statement on PostgreSQL, in its own
// implicit transaction: one round trip instead of six to ten (BEGIN, consumers, allocations,
// providers, usage, allocations, COMMIT). On this 2-core machine a round trip costs the server
// about 0.25 ms of CPU (mostly waking the other side), more than the statements themselves.
//   - `oneStatementWrite`: PUT /allocations/{c} and POST /allocations where every consumer is
//     either new (`consumer_generation: null`, the claim for a new instance) or exists at the
//     generation the client gives (Nova's migration swap: the instance's allocations go to a new
//     migration consumer and the instance keeps none).
//   - `oneStatementDelete`: DELETE /allocations/{c}.
//   - `claimInStatement`: a new consumer's claim on a provider another statement chooses, as parts
//     of that statement (the bare-metal allocation's claim on the node it reserves).
//   - `writeInStatement`: a new consumer's claim, as parts of the statement that closes another
//     domain's transaction (a service instance's reservation: its capacity).
//
// Each statement does what store/allocations.ts does for such a write, in the same lock order:
// the existing consumers (their rows, then their allocations), then the providers that receive
// allocations (in id order, each bumped once), then the inventories (in provider, class order).
// Every check runs on rows the statement has locked, at their latest version — an UPDATE or
// DELETE re-reads a row that changed while it waited for its lock, but a CTE's plain read sees the
// statement's snapshot, which may be older. So every fact read from the snapshot is confirmed by a
// WHERE on a locked row: a consumer is changed only WHERE its generation is still the one the
// client (or, for a delete, the snapshot) saw, and every change of a consumer's allocations moves
// or removes its row, so an unchanged generation means the snapshot's allocations are the latest.
// A consumer a holder holds (a service instance's, `held_by`) is never changed here: the general
// path refuses it to the API's clients. A holder may make its new consumer here (held_by written).
// When any check fails — a consumer exists or moved on, a provider or inventory is missing, an
// amount breaks a rule or does not fit, a cached class id is stale — `allot_assert` raises and
// nothing is kept. The write then goes the general way, which decides again under its own locks
// and words the answer. So these statements never refuse anything themselves: they can only
// accept what the general path would also accept, or step aside.
import { memo } from '../../core/memo.js';
import type { Db, Tx } from '../../db/database.js';
import { type EmbeddedWrite, type StatementParts, writeStatement } from '../../db/statement.js';

import type { ConsumerAllocations } from './allocations.js';
import type { NameCache } from './names.js';
import { noteProvidersChanged, noteUsageChanged } from './provider-index.js';

/** Larger writes (rare: a scheduler writes for one instance) take the general path: few shapes, few prepared statements. */
const MAX_CONSUMERS = 4;
const MAX_ROWS = 16;
const MAX_INT = 2147483647;

export interface WriteResult {
  /** [id, new generation] of each provider that receives allocations */
  providers: Array<[number, number]> | null;
  /** [provider id, class name, new used] of each inventory whose usage moved */
  usage: Array<[number, string, number]> | null;
}

/** How many of each part a write has; one statement text per shape. */
interface Shape {
  created: number;
  kept: number;
  emptied: number;
  providers: number;
  rows: number;
}

const writeStatementFor = memo((key: string) => makeWriteStatement(parseShape(key)), MAX_CONSUMERS ** 3 * MAX_ROWS * MAX_ROWS);

function parseShape(key: string): Shape {
  const [created, kept, emptied, providers, rows] = key.split('/').map(Number) as [number, number, number, number, number];
  return { created, kept, emptied, providers, rows };
}

/**
 * The inventories a write changes, locked in (provider, class) order: a write that only gives usage
 * back on a provider does not lock the provider (nor does the general path), so two writes moving
 * usage across the same providers in opposite directions would otherwise deadlock. One index probe
 * per row (LATERAL): PostgreSQL cannot know how few rows `delta` has, and joined it would scan
 * every inventory. For the same reason the UPDATE that follows finds them by
 * `id = any(array(…))`, an index probe whatever the planner guesses: the cached generic plan
 * guessed `delta`'s size from the statistics (over 100 rows per consumer while the allocations
 * table filled), then seq-scanned and hashed every inventory — a third of PostgreSQL's CPU per
 * swap and delete in a profile (docs/performance.md).
 */
const LOCK_INVENTORIES = `locked_inventories as (
       select i.id from (select provider_id, class_id from delta order by provider_id, class_id) d
       cross join lateral (select id from inventories where resource_provider_id = d.provider_id and resource_class_id = d.class_id for update) i
     )`;

/**
 * The statement for a shape. The values are listed one placeholder each rather than passed as
 * arrays: with its exact row counts PostgreSQL's cached plan walks the indexes (with arrays its
 * generic plan assumed ten rows each and scanned every provider).
 */
function makeWriteStatement(shape: Shape) {
  let n = 1; // $1 is the time stamp
  const parts = writeParts(shape, (type) => `$${++n}::${type}`, '$1::text');
  return writeStatement<WriteResult>(
    `with ${parts.ctes.join(',\n     ')}
     select allot_assert(${parts.check}, 'write refused') as ok, ${parts.columns.join(', ')}`,
  );
}

/**
 * A shape's write as parts of a statement (its CTEs, the condition of everything written, the
 * `providers` and `usage` result columns). `param` names the next placeholder, in the order
 * `writeValues` lists the values; `now` the time stamp. With `providerUuid` (SQL naming one
 * provider's uuid, a row the enclosing statement chose) the shape has one provider and its rows
 * name that one: neither the provider nor the rows' provider take a placeholder.
 * Capacity is `floor((total - reserved) * allocation_ratio)`, as core/capacity.ts computes it, in
 * the same double-precision arithmetic.
 */
function writeParts(shape: Shape, param: (type: 'text' | 'integer') => string, now: string, providerUuid?: string): StatementParts {
  const times = (count: number, row: () => string) => Array.from({ length: count }, row).join(', ');
  const ctes: string[] = [];
  const checks: string[] = [];
  const owners: string[] = []; // CTEs of the consumers that receive allocations
  if (shape.created) {
    // New consumers: the insert itself finds out when one exists (then it inserts nothing).
    ctes.push(`created as (
       insert into consumers (uuid, project_id, user_id, generation, consumer_type_id, held_by, created_at, updated_at)
       values ${times(shape.created, () => `(${param('text')}, ${param('text')}, ${param('text')}, 1, ${param('integer')}, ${param('text')}, ${now}, ${now})`)}
       on conflict (uuid) do nothing
       returning id, uuid
     )`);
    checks.push(`(select count(*) from created) = ${shape.created}`);
    owners.push('select id, uuid from created');
  }
  if (shape.kept) {
    // Existing consumers that get new allocations: locked, checked and bumped in one UPDATE, which
    // re-reads the generation at its latest version. Project and user are set as the client sent
    // them (the general path writes only those that differ: the same result).
    ctes.push(`kept as (
       update consumers c
       set generation = c.generation + 1, project_id = v.project_id, user_id = v.user_id,
           consumer_type_id = coalesce(v.type_id, c.consumer_type_id), updated_at = ${now}
       from (values ${times(shape.kept, () => `(${param('text')}, ${param('integer')}, ${param('text')}, ${param('text')}, ${param('integer')})`)})
         as v(uuid, generation, project_id, user_id, type_id)
       where c.uuid = v.uuid and c.generation = v.generation and c.held_by is null
       returning c.id, c.uuid
     )`);
    checks.push(`(select count(*) from kept) = ${shape.kept}`);
    owners.push('select id, uuid from kept');
  }
  if (shape.emptied) {
    // Existing consumers left with no allocations are deleted (their allocations below; the
    // foreign key is checked at the end of the statement).
    ctes.push(`emptied as (
       delete from consumers c
       using (values ${times(shape.emptied, () => `(${param('text')}, ${param('integer')})`)}) as v(uuid, generation)
       where c.uuid = v.uuid and c.generation = v.generation and c.held_by is null
       returning c.id
     )`);
    checks.push(`(select count(*) from emptied) = ${shape.emptied}`);
  }
  const existing = [shape.kept ? 'select id from kept' : '', shape.emptied ? 'select id from emptied' : ''].filter(Boolean);
  if (existing.length) {
    ctes.push(`released as (
       delete from allocations where consumer_id in (${existing.join(' union all ')})
       returning resource_provider_id, resource_class_id, used
     )`);
  }
  if (shape.providers) {
    // Providers after the consumers, as the general path locks them: the one-time filter on
    // `released` makes the consumers' statements run first.
    const after = existing.length ? ' and (select count(*) from released) >= 0' : '';
    ctes.push(`providers as (
       update resource_providers set generation = generation + 1, updated_at = ${now}
       where id in (select id from resource_providers where uuid in (${providerUuid ?? times(shape.providers, () => param('text'))})${after} order by id for update)
       returning id, uuid, generation
     )`);
    ctes.push(`wanted as (
       select w.consumer_uuid, p.id as provider_id, w.class_id, w.class_name, w.amount
       from (values ${times(shape.rows, () => `(${param('text')}, ${providerUuid ?? param('text')}, ${param('integer')}, ${param('text')}, ${param('integer')})`)})
         as w(consumer_uuid, provider_uuid, class_id, class_name, amount)
       join providers p on p.uuid = w.provider_uuid
     )`);
    checks.push(`(select count(*) from usage where wanted) = ${shape.rows}`);
  }
  // The usage moves by the net change per (provider, class): what was released given back, what
  // is wanted taken, the amount's unit rules and the capacity checked on the result. A wanted
  // inventory that fails a check is left alone, and the count above falls short.
  const changes = [
    existing.length ? 'select resource_provider_id, resource_class_id, -used, null::text, null::integer from released' : '',
    shape.providers ? 'select provider_id, class_id, amount, class_name, amount from wanted' : '',
  ].filter(Boolean);
  ctes.push(`delta as (
       select provider_id, class_id, sum(change) as change, max(class_name) as class_name, max(amount) as amount
       from (${changes.join(' union all ')}) as d(provider_id, class_id, change, class_name, amount)
       group by provider_id, class_id
     )`);
  ctes.push(LOCK_INVENTORIES);
  ctes.push(`usage as (
       update inventories i set used = i.used + d.change
       from delta d
       where i.id = any(array(select id from locked_inventories))
         and i.resource_provider_id = d.provider_id and i.resource_class_id = d.class_id
         and i.used::bigint + d.change <= ${MAX_INT}
         and (d.amount is null or (
           d.amount between i.min_unit and i.max_unit and d.amount % i.step_size = 0
           and i.used::bigint + d.change <= floor((i.total - i.reserved) * i.allocation_ratio)
           and exists (select 1 from resource_classes rc where rc.id = d.class_id and rc.name = d.class_name)))
       returning i.resource_provider_id, (select name from resource_classes rc where rc.id = i.resource_class_id) as class_name, i.used,
                 d.amount is not null as wanted
     )`);
  if (shape.providers && owners.length) {
    ctes.push(`inserted as (
       insert into allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at)
       select w.provider_id, c.id, w.class_id, w.amount, ${now}, ${now}
       from wanted w join (${owners.join(' union all ')}) c on c.uuid = w.consumer_uuid
     )`);
  }
  return {
    ctes,
    check: checks.join(' and '),
    columns: [
      shape.providers ? '(select json_agg(json_build_array(p.id, p.generation)) from providers p) as providers' : 'null::json as providers',
      '(select json_agg(json_build_array(u.resource_provider_id, u.class_name, u.used)) from usage u) as usage',
    ],
  };
}

/**
 * The one statement for `writes`, ready to run in a transaction of its own (`oneStatement`): it
 * writes everything or raises, and then nothing was kept and the general write decides and words
 * the answer. Null when `writes` is not a write of this kind (on SQLite, never).
 */
export async function oneStatementWrite(db: Db, names: NameCache, writes: ConsumerAllocations[]): Promise<((tx: Tx) => Promise<void>) | null> {
  if (db.dialect !== 'postgres') return null;
  const write = await writeValues(db, names, writes, false);
  if (!write) return null;
  const statement = writeStatementFor(write.shape);
  const params = [db.clock.nowIso(), ...write.params];
  return async (tx) => noteWritten(tx, (await statement.one(tx, params))!);
}

/**
 * The claim of `resources` for a new consumer on a provider another statement chooses (the
 * bare-metal allocation claims the node it reserves: store/one-statement-allocation.ts), as parts
 * of that statement, which then writes the claim as oneStatementWrite would or raises. Null when
 * it cannot be one (on SQLite; a class not known yet): the caller's general path claims.
 */
export async function claimInStatement(
  db: Db,
  names: NameCache,
  consumer: { uuid: string; projectId: string; userId: string; holder: string },
  resources: Map<string, number>,
): Promise<EmbeddedWrite | null> {
  if (db.dialect !== 'postgres') return null;
  // one provider, named by the enclosing statement: its uuid here is never used
  const allocations = new Map([['', resources]]);
  const writes = [
    { consumerUuid: consumer.uuid, projectId: consumer.projectId, userId: consumer.userId, holder: consumer.holder, generation: null, allocations },
  ];
  const values = await writeValues(db, names, writes, true);
  if (!values) return null;
  const shape = parseShape(values.shape);
  return {
    ...values,
    parts: (param, now, rowUuid) => writeParts(shape, param, now, rowUuid),
    written: (tx, row) =>
      noteWritten(tx, { providers: (row.providers as WriteResult['providers']) ?? null, usage: (row.usage as WriteResult['usage']) ?? null }),
  };
}

/**
 * `writes` (new consumers' claims on the providers they name) as parts of a statement another
 * domain closes its transaction with (db/statement.ts ClosingWrites: a service instance's
 * reservation), which then writes them as oneStatementWrite would or raises. Null when they
 * cannot be (on SQLite; a class not known yet; not a write of this kind).
 */
export async function writeInStatement(db: Db, names: NameCache, writes: ConsumerAllocations[]): Promise<EmbeddedWrite | null> {
  if (db.dialect !== 'postgres') return null;
  const values = await writeValues(db, names, writes, false);
  if (!values) return null;
  const shape = parseShape(values.shape);
  return {
    ...values,
    parts: (param, now) => writeParts(shape, param, now),
    written: (tx, row) =>
      noteWritten(tx, { providers: (row.providers as WriteResult['providers']) ?? null, usage: (row.usage as WriteResult['usage']) ?? null }),
  };
}

/**
 * The shape of `writes` and their values in the order writeParts names them (after the time
 * stamp); the providers' uuids left out when the statement names its provider itself. Null when
 * `writes` is not a write of this kind.
 */
async function writeValues(
  db: Db,
  names: NameCache,
  writes: ConsumerAllocations[],
  providerInStatement: boolean,
): Promise<{ shape: string; params: unknown[] } | null> {
  if (writes.length === 0 || writes.length > MAX_CONSUMERS) return null;
  const consumers = new Set<string>();
  const pairs = new Set<string>();
  const classNames = new Set<string>();
  const typeNames = new Set<string>();
  const created: ConsumerAllocations[] = [];
  const kept: ConsumerAllocations[] = [];
  const emptied: ConsumerAllocations[] = [];
  for (const w of writes) {
    // Each consumer once: new (generation null) with allocations, or existing at a generation the
    // client gives. (Without a generation, before 1.28, or "new" and empty, the general path.)
    if (w.generation === undefined || consumers.has(w.consumerUuid)) return null;
    // A holder (a service instance, a bare-metal allocation) writes here only the new consumer it will hold.
    if (w.holder !== undefined && w.generation !== null) return null;
    consumers.add(w.consumerUuid);
    const empty = w.allocations.size === 0;
    if (w.generation === null) {
      if (empty) return null;
      created.push(w);
    } else (empty ? emptied : kept).push(w);
    if (w.consumerType !== undefined && !empty) typeNames.add(w.consumerType);
    // Each (provider, class) once in all, so every wanted usage row is one allocation row.
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
  const typeId = (w: ConsumerAllocations) => (w.consumerType === undefined ? null : typeIds.get(w.consumerType)!);

  const rows = writes.flatMap((w) => [...w.allocations].flatMap(([rp, resources]) => [...resources].map(([rc, amount]) => ({ w, rp, rc, amount }))));
  const providers = [...new Set(rows.map((r) => r.rp))];
  const params = [
    ...created.flatMap((w) => [w.consumerUuid, w.projectId, w.userId, typeId(w), w.holder ?? null]),
    ...kept.flatMap((w) => [w.consumerUuid, w.generation, w.projectId, w.userId, typeId(w)]),
    ...emptied.flatMap((w) => [w.consumerUuid, w.generation]),
    ...(providerInStatement ? [] : providers),
    ...rows.flatMap((r) => [r.w.consumerUuid, ...(providerInStatement ? [] : [r.rp]), classIds.get(r.rc)!, r.rc, r.amount]),
  ];
  return { shape: `${created.length}/${kept.length}/${emptied.length}/${providers.length}/${rows.length}`, params };
}

/**
 * This process's candidates index takes the new usage of the providers the write bumped as it is
 * (see allocations.ts); a provider that only gave usage back kept its generation and is re-read.
 */
function noteWritten(tx: Tx, result: WriteResult): void {
  const used = new Map<number, Map<string, number>>();
  for (const [providerId, className, n] of result.usage ?? []) used.set(providerId, (used.get(providerId) ?? new Map()).set(className, n));
  for (const [providerId, generation] of result.providers ?? []) {
    noteUsageChanged(tx, providerId, generation, used.get(providerId) ?? new Map());
    used.delete(providerId);
  }
  noteProvidersChanged(tx, used.keys());
}

/**
 * DELETE /allocations/{c}: the consumer (WHERE its generation is still the one the snapshot saw,
 * so the snapshot's allocations are its latest), its allocations, and their usage given back.
 * Like the general path it bumps no provider: removing allocations only frees room.
 */
const deleteStatement = writeStatement<WriteResult>(
  `with seen as (select id, generation from consumers where uuid = $1::text),
   gone as (
     delete from consumers c using seen s where c.id = s.id and c.generation = s.generation and c.held_by is null
     returning c.id
   ),
   released as (
     delete from allocations where consumer_id in (select id from gone)
     returning resource_provider_id, resource_class_id, used
   ),
   delta as (
     select resource_provider_id as provider_id, resource_class_id as class_id, -sum(used) as change
     from released group by resource_provider_id, resource_class_id
   ),
   ${LOCK_INVENTORIES},
   usage as (
     update inventories i set used = i.used + d.change
     from delta d
     where i.id = any(array(select id from locked_inventories))
       and i.resource_provider_id = d.provider_id and i.resource_class_id = d.class_id
     returning i.resource_provider_id, (select name from resource_classes rc where rc.id = i.resource_class_id) as class_name, i.used
   )
   select allot_assert((select count(*) from gone) = 1, 'delete refused') as ok,
          null::json as providers,
          (select json_agg(json_build_array(u.resource_provider_id, u.class_name, u.used)) from usage u) as usage`,
);

/**
 * The one statement that removes a consumer and its allocations, ready to run in a transaction of
 * its own; when it raises (no such consumer, or it changed under the statement) the general
 * delete decides. Null on SQLite.
 */
export function oneStatementDelete(db: Db, consumerUuid: string): ((tx: Tx) => Promise<void>) | null {
  if (db.dialect !== 'postgres') return null;
  return async (tx) => noteWritten(tx, (await deleteStatement.one(tx, [consumerUuid]))!);
}
