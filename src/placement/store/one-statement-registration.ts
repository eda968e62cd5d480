// Registration — what every nova-compute and Ironic node sends at start: POST /resource_providers,
// then PUT of its inventories, traits and aggregates — each as ONE statement on PostgreSQL, in its
// own implicit transaction, that also returns what the answer shows: one round trip instead of 7
// to 12 (BEGIN, the checks, the writes, the generation's bump, COMMIT, the answer read back). On
// this 2-core machine a round trip costs about as much CPU as the statement it carries
// (one-statement-writes.ts), and registration was 10.75 statements per request (docs/performance.md).
//
// Each statement does what providers.ts, inventories.ts, traits.ts and aggregates.ts do for such
// a write, in their lock order: the provider first (a parent, for a new child), then its rows.
// - The provider is changed with the client's compare-and-set: `UPDATE … WHERE uuid = ? AND
//   generation = ?`, which locks the row and re-reads it at its latest version, as every other
//   writer of the provider's rows does (all of them bump its generation, under its lock).
// - A CTE's plain read sees the statement's snapshot, which may be older than that version. So the
//   rows the statement diffs against (the provider's inventories, traits, aggregates as the
//   snapshot has them) are trusted only when the row version it bumped is the one the snapshot
//   saw (`PROVIDER_AT_GENERATION`). The one column that changes without that, `used` (a release
//   gives usage back), is checked where it matters on the rows themselves: an inventory is
//   removed only `WHERE used = 0` (a DELETE re-checks that on the latest version).
// - Names come from the process's NameCache and are checked in the statement (id and name), so a
//   cached id another process made stale steps aside.
// When anything does not hold — the generation is not the client's, the provider, its parent, a
// class or trait is missing, a name or uuid is taken, an inventory to remove is in use — the
// statement calls `allot_assert`, which raises, or a unique index does; nothing is kept, and the
// general path decides again under its own locks and words the answer (tryFastPath). So these
// statements never refuse anything themselves: they accept only what the general path would.
// SQLite has no round trips to save (its group commit is its fast path) and always takes the
// general path.
import { memo } from '../../core/memo.js';
import type { Db, Tx } from '../../db/database.js';
import { writeStatement } from '../../db/statement.js';

import type { InventoryRecord, ProviderInventories } from './inventories.js';
import type { NameCache } from './names.js';
import { noteProvidersChanged } from './provider-index.js';
import type { NewProvider, ProviderView } from './providers.js';

/** Larger writes (rare: a compute node reports a handful of classes) take the general path: few shapes, few prepared statements. */
const MAX_ROWS = 16;

/** A one-statement write, ready for `tryFastPath(…, { oneStatement: true })`; null when the general path is to write it. */
export type OneStatement<T> = ((tx: Tx) => Promise<T>) | null;

/** What a PUT of a provider's traits or aggregates answers: the new generation, the set, the provider's time stamp. */
export interface ProviderSet {
  generation: number;
  members: string[];
  updatedAt: string;
}

// ------------------------------------------------------------------ POST /resource_providers

/**
 * The provider's id comes from its sequence first, so that a root's `root_provider_id` (itself)
 * is in the insert: the update that set it afterwards was a statement of its own (a CTE cannot
 * update the row a sibling CTE inserts). `ON CONFLICT DO NOTHING` inserts nothing when the uuid or
 * the name is taken; a child's parent is locked first (`FOR UPDATE` reads its latest version, so
 * its root is the current one), and a missing parent inserts nothing either.
 */
const createStatement = memo((withParent: boolean) => {
  const parent = withParent
    ? `parent as (select id, uuid, root_provider_id from resource_providers where uuid = ? for update),`
    : `parent as (select null::integer as id, null::varchar as uuid, null::integer as root_provider_id),`;
  return writeStatement<ProviderView & { ok: boolean; root_of_parent: string | null }>(
    `with ${parent}
     inserted as (
       insert into resource_providers (id, uuid, name, generation, parent_provider_id, root_provider_id, created_at, updated_at)
       select n.id, ?, ?, 0, p.id, coalesce(p.root_provider_id, n.id), ?, ?
       from parent p, (select nextval(pg_get_serial_sequence('resource_providers', 'id'))::integer as id) n
       on conflict do nothing
       returning id, uuid, name, generation, root_provider_id, created_at, updated_at
     )
     select allot_assert((select count(*) from inserted) = 1, 'create refused') as ok, i.id, i.uuid, i.name, i.generation,
            (select uuid from parent) as parent_provider_uuid,
            (select uuid from resource_providers r where r.id = (select root_provider_id from parent)) as root_of_parent,
            i.root_provider_id, i.created_at, i.updated_at
     from (select 1) as one left join inserted i on true`,
  );
}, 2);

/** POST /resource_providers as one statement (null on SQLite, and for a provider its own parent). */
export function oneStatementCreate(db: Db, input: NewProvider): OneStatement<ProviderView> {
  if (db.dialect !== 'postgres' || input.parentUuid === input.uuid) return null;
  const now = db.clock.nowIso();
  const params = [...(input.parentUuid ? [input.parentUuid] : []), input.uuid, input.name, now, now];
  return async (tx) => {
    const row = (await createStatement(input.parentUuid !== null).one(tx, params))!;
    noteProvidersChanged(tx, [Number(row.id)]);
    return {
      id: Number(row.id),
      uuid: row.uuid,
      name: row.name,
      generation: Number(row.generation),
      parent_provider_uuid: row.parent_provider_uuid ?? null,
      root_provider_uuid: row.root_of_parent ?? row.uuid,
      root_provider_id: Number(row.root_provider_id),
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  };
}

// ------------------------------------------------------------------ the provider, at the client's generation

/**
 * The CTEs every PUT below starts with: `seen`, the provider at the client's generation in the
 * statement's snapshot, and `p`, that very row version bumped — locked, and only if no writer
 * made a newer version of the row meanwhile (`xmin`, the transaction that wrote the version, is
 * the one the snapshot saw). A writer that changed the provider's rows since the snapshot moved
 * its generation or, the one that does not (aggregates before 1.19), touched the row
 * (aggregates.ts); when `p` holds, the snapshot's rows of the provider are therefore its latest.
 * (An UPDATE alone would not do: it re-checks its WHERE on a row that changed while it waited for
 * the lock, but a row that a writer only locked, as the general path does, it takes as it is.)
 * Placeholders: uuid, generation, now.
 */
const PROVIDER_AT_GENERATION = `seen as (select id, xmin from resource_providers where uuid = ? and generation = ?),
     p as (
       update resource_providers set generation = generation + 1, updated_at = ?
       where id = (select id from seen) and xmin = (select xmin from seen)
       returning id, generation, updated_at
     )`;
const PROVIDER_HELD = `(select count(*) from p) = 1`;

const providerParams = (db: Db, uuid: string, generation: number) => [uuid, generation, db.clock.nowIso()];

// ------------------------------------------------------------------ PUT /resource_providers/{uuid}/inventories

const INVENTORY_FIELDS = ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const;

/**
 * Replace a provider's inventories: remove the classes not wanted (`WHERE used = 0`, on the locked
 * rows: the count falls short when one is in use), update those that differ, insert the new ones
 * (a class the snapshot does not have: `p` proves the provider has none). Answers each class's
 * time stamp as the provider's inventories then have it (for Last-Modified), in the order the
 * general path reads them (by name).
 */
const inventoriesStatement = memo((rows: number) => {
  const wanted = rows
    ? `select * from (values ${Array.from({ length: rows }, () => '(cast(? as integer), cast(? as text), cast(? as integer), cast(? as integer), cast(? as integer), cast(? as integer), cast(? as integer), cast(? as double precision))').join(', ')})
         as w(class_id, class_name, ${INVENTORY_FIELDS.join(', ')})`
    : `select null::integer as class_id, null::text as class_name, ${INVENTORY_FIELDS.map((f) => `null::integer as ${f}`).join(', ')} where false`;
  const fields = (alias: string) => INVENTORY_FIELDS.map((f) => `${alias}.${f}`).join(', ');
  return writeStatement<{ ok: boolean; provider_id: number; generation: number; classes: string[] | null; last_modified: string | null }>(
    `with ${PROVIDER_AT_GENERATION},
     wanted as (${wanted}),
     current as (select resource_class_id, updated_at from inventories where resource_provider_id = (select id from seen)),
     gone as (
       delete from inventories i
       where i.resource_provider_id = (select id from p) and i.used = 0
         and i.resource_class_id not in (select class_id from wanted)
       returning i.resource_class_id
     ),
     changed as (
       update inventories i set ${INVENTORY_FIELDS.map((f) => `${f} = w.${f}`).join(', ')}, updated_at = (select updated_at from p)
       from wanted w
       where i.resource_provider_id = (select id from p) and i.resource_class_id = w.class_id
         and (${fields('i')}) is distinct from (${fields('w')})
       returning i.resource_class_id, i.updated_at
     ),
     added as (
       insert into inventories (resource_provider_id, resource_class_id, ${INVENTORY_FIELDS.join(', ')}, used, created_at, updated_at)
       select (select id from p), w.class_id, ${fields('w')}, 0, (select updated_at from p), (select updated_at from p)
       from wanted w
       where (select count(*) from p) = 1 and not exists (select 1 from current c where c.resource_class_id = w.class_id)
       returning resource_class_id
     )
     select allot_assert(
              ${PROVIDER_HELD}
              and (select count(*) from gone) = (select count(*) from current where resource_class_id not in (select class_id from wanted))
              and (select count(*) from wanted w join resource_classes rc on rc.id = w.class_id and rc.name = w.class_name) = ${rows},
              'inventories refused') as ok,
            (select id from p) as provider_id, (select generation from p) as generation,
            (select json_agg(w.class_name order by w.class_name) from wanted w) as classes,
            (select max(coalesce(ch.updated_at, c.updated_at, (select updated_at from p)))
               from wanted w left join changed ch on ch.resource_class_id = w.class_id
               left join current c on c.resource_class_id = w.class_id) as last_modified`,
  );
}, MAX_ROWS + 1);

/**
 * PUT /resource_providers/{uuid}/inventories as one statement, answering the provider's
 * inventories afterwards (exactly what it wrote). Null on SQLite, for more than MAX_ROWS classes,
 * or when a class is not known (the general path words that).
 */
export async function oneStatementInventories(
  db: Db,
  names: NameCache,
  uuid: string,
  inventories: Map<string, InventoryRecord>,
  clientGeneration: number,
): Promise<OneStatement<ProviderInventories>> {
  if (db.dialect !== 'postgres' || inventories.size > MAX_ROWS) return null;
  const classIds = await names.known(db, 'resource_classes', [...inventories.keys()]);
  if (classIds.size < inventories.size) return null;
  const params = [
    ...providerParams(db, uuid, clientGeneration),
    ...[...inventories].flatMap(([name, inv]) => [classIds.get(name)!, name, ...INVENTORY_FIELDS.map((f) => inv[f])]),
  ];
  const statement = inventoriesStatement(inventories.size);
  return async (tx) => {
    const row = (await statement.one(tx, params))!;
    noteProvidersChanged(tx, [Number(row.provider_id)]);
    return {
      generation: Number(row.generation),
      inventories: new Map((row.classes ?? []).map((name) => [name, inventories.get(name)!])),
      lastModified: row.last_modified,
    };
  };
}

// ------------------------------------------------------------------ PUT …/traits and …/aggregates

/**
 * Replace a provider's traits with the given ones (ids from the NameCache, checked here with their
 * names): remove the others, add those the snapshot does not have.
 */
const TRAITS = writeStatement<{ ok: boolean; provider_id: number; generation: number; updated_at: string; members: string[] | null }>(
  `with ${PROVIDER_AT_GENERATION},
   wanted as (
     select t.id, t.name from unnest(cast(? as integer[]), cast(? as text[])) as w(id, name) join traits t on t.id = w.id and t.name = w.name
   ),
   gone as (
     delete from resource_provider_traits
     where resource_provider_id = (select id from p) and trait_id not in (select id from wanted)
   ),
   added as (
     insert into resource_provider_traits (resource_provider_id, trait_id)
     select (select id from p), w.id from wanted w
     where (select count(*) from p) = 1
       and not exists (select 1 from resource_provider_traits x where x.resource_provider_id = (select id from seen) and x.trait_id = w.id)
   )
   select allot_assert(${PROVIDER_HELD} and (select count(*) from wanted) = cardinality(cast(? as integer[])), 'traits refused') as ok,
          (select id from p) as provider_id, (select generation from p) as generation, (select updated_at from p) as updated_at,
          (select json_agg(name order by name) from wanted) as members`,
);

/** PUT /resource_providers/{uuid}/traits as one statement (null on SQLite, or when a trait is not known). */
export async function oneStatementTraits(
  db: Db,
  names: NameCache,
  uuid: string,
  traits: string[],
  clientGeneration: number,
): Promise<OneStatement<ProviderSet>> {
  if (db.dialect !== 'postgres') return null;
  const unique = [...new Set(traits)];
  const ids = await names.known(db, 'traits', unique);
  if (ids.size < unique.length) return null;
  const traitIds = unique.map((n) => ids.get(n)!);
  const params = [...providerParams(db, uuid, clientGeneration), traitIds, unique, traitIds];
  return async (tx) => providerSet(tx, (await TRAITS.one(tx, params))!);
}

/**
 * Replace a provider's aggregates (1.19+: the client's generation) with the given uuids: the
 * aggregates not known yet are made (after the provider's lock, as the general path makes them,
 * and in the client's order: the answer lists them by id), then the provider's memberships as
 * with traits. An aggregate another writer makes meanwhile is
 * in neither the snapshot nor this insert's rows, and the count falls short.
 */
const AGGREGATES = writeStatement<{ ok: boolean; provider_id: number; generation: number; updated_at: string; members: string[] | null }>(
  `with ${PROVIDER_AT_GENERATION},
   given as (select uuid, min(at) as at from unnest(cast(? as text[])) with ordinality as g(uuid, at) group by uuid),
   made as (
     insert into aggregates (uuid) select uuid from given where (select count(*) from p) = 1 order by at
     on conflict (uuid) do nothing
     returning id, uuid
   ),
   wanted as (select a.id, a.uuid from aggregates a where a.uuid in (select uuid from given) union all select id, uuid from made),
   gone as (
     delete from resource_provider_aggregates
     where resource_provider_id = (select id from p) and aggregate_id not in (select id from wanted)
   ),
   added as (
     insert into resource_provider_aggregates (resource_provider_id, aggregate_id)
     select (select id from p), w.id from wanted w
     where (select count(*) from p) = 1
       and not exists (select 1 from resource_provider_aggregates x where x.resource_provider_id = (select id from seen) and x.aggregate_id = w.id)
   )
   select allot_assert(${PROVIDER_HELD} and (select count(*) from wanted) = (select count(*) from given), 'aggregates refused') as ok,
          (select id from p) as provider_id, (select generation from p) as generation, (select updated_at from p) as updated_at,
          (select json_agg(uuid order by id) from wanted) as members`,
);

/** PUT /resource_providers/{uuid}/aggregates at 1.19+ as one statement (null on SQLite). */
export function oneStatementAggregates(db: Db, uuid: string, aggregateUuids: string[], clientGeneration: number): OneStatement<ProviderSet> {
  if (db.dialect !== 'postgres') return null;
  const params = [...providerParams(db, uuid, clientGeneration), [...new Set(aggregateUuids)]];
  return async (tx) => providerSet(tx, (await AGGREGATES.one(tx, params))!);
}

function providerSet(tx: Tx, row: { provider_id: number; generation: number; updated_at: string; members: string[] | null }): ProviderSet {
  noteProvidersChanged(tx, [Number(row.provider_id)]);
  return { generation: Number(row.generation), members: row.members ?? [], updatedAt: row.updated_at };
}
