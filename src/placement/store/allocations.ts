// Writing and reading allocations. `replaceAllocations` is the one write path for PUT
// /allocations/{c}, POST /allocations and the reshaper: in one transaction it
//   1. locks the consumers (by uuid) and then every provider involved (by id), always in that
//      order, so concurrent writers queue instead of deadlocking;
//   2. checks each consumer generation the client supplied (its mismatch is the client's 409);
//   3. drops the consumers' old allocations and checks every new (provider, class) amount against
//      min_unit/max_unit/step_size and capacity, with usage read under the locks;
//   4. writes the new allocations, creates/updates/deletes the consumer rows and bumps every
//      touched consumer and provider generation with a compare-and-set.
// Either every consumer's allocations change or none do.
import { capacity, unitViolation } from '../../core/capacity.js';
import { nowIso } from '../../core/clock.js';
import { RetryableConflict } from '../../core/errors.js';
import type { Database, Db } from '../../db/database.js';
import { bumpGeneration } from '../../db/generation.js';
import { placeholders, statement } from '../../db/statement.js';
import { type Tx, transaction } from '../../db/transaction.js';
import { CODES, placementError } from '../errors.js';
import { cachedIdsByName, forgetCachedNames } from './names.js';
import { noteProvidersChanged, noteUsageChanged } from './provider-index.js';
import { type ProviderView, bumpProvider } from './providers.js';

/** Placement's stand-in project/user for allocations written before 1.8 without them. */
export const INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000';

export interface ConsumerAllocations {
  consumerUuid: string;
  /** provider uuid → resource class → amount; empty means "remove this consumer's allocations" */
  allocations: Map<string, Map<string, number>>;
  projectId: string;
  userId: string;
  /** undefined: not checked (before 1.28); null: the consumer must be new; a number: must match */
  generation?: number | null;
  /** 1.38+; undefined leaves an existing consumer's type alone */
  consumerType?: string;
}

/** How a failure to resolve names is worded differs between PUT/POST and the reshaper. */
export interface WriteOptions {
  /** error code for a provider uuid that does not exist */
  missingProviderCode?: string;
}

interface ConsumerRow {
  id: number;
  uuid: string;
  project_id: string;
  user_id: string;
  generation: number;
  consumer_type_id: number | null;
}

const consumerConflict = (expected: number | null, got: number | null | undefined) =>
  placementError(
    409,
    `consumer generation conflict - expected ${expected === null ? 'null' : expected} but got ${got === null || got === undefined ? (expected === null ? 'null' : 'None') : got}`,
    CODES.concurrentUpdate,
  );

export async function replaceAllocations(database: Database, writes: ConsumerAllocations[], options: WriteOptions = {}): Promise<void> {
  await transaction(database, (tx) => replaceAllocationsInTx(tx, writes, options));
}

export async function replaceAllocationsInTx(tx: Tx, writes: ConsumerAllocations[], options: WriteOptions = {}): Promise<void> {
  // Resolve names first: a bad class or provider is the request's fault, before any lock.
  const classNames = new Set<string>();
  const providerUuids = new Set<string>();
  for (const w of writes) {
    for (const [rp, resources] of w.allocations) {
      providerUuids.add(rp);
      for (const rc of resources.keys()) classNames.add(rc);
    }
  }
  const { ids: classIds, cached: cachedClasses } = await cachedIdsByName(tx, 'resource_classes', [...classNames]);
  for (const w of writes) {
    for (const resources of w.allocations.values()) {
      for (const rc of resources.keys()) {
        if (!classIds.has(rc)) throw placementError(400, `Unable to allocate inventory for consumer ${w.consumerUuid}: No such resource class ${rc}.`);
      }
    }
  }

  // 1. Lock the consumers, then check the generations the client gave.
  const consumers = await lockConsumers(tx, [...new Set(writes.map((w) => w.consumerUuid))]);
  for (const w of writes) {
    if (w.generation === undefined) continue;
    const existing = consumers.get(w.consumerUuid);
    if (w.generation === null ? existing !== undefined : existing?.generation !== w.generation) {
      throw consumerConflict(existing?.generation ?? null, w.generation);
    }
  }

  // 2. Lock the providers that receive allocations. Providers that only lose allocations are
  //    not locked or bumped (as in Placement): freeing capacity cannot over-allocate anything.
  const providers = await lockProvidersByUuid(tx, [...providerUuids]);
  for (const uuid of providerUuids) {
    if (!providers.has(uuid)) {
      throw placementError(400, `Allocation for resource provider '${uuid}' that does not exist.`, options.missingProviderCode ?? CODES.undefined);
    }
  }

  // 3. Release what the consumers held, then check each new (provider, class) total against its
  //    inventory. `used` read under the provider lock can only be too high (releases elsewhere
  //    are not locked out), never too low, so the check is safe. The `used` counters are moved
  //    by the net difference in one statement at the end.
  const consumerIds = [...consumers.values()].map((c) => c.id);
  const delta = new Map<string, [providerId: number, classId: number, change: number]>();
  const addDelta = (providerId: number, classId: number, change: number) => {
    const key = `${providerId}/${classId}`;
    const d = delta.get(key) ?? [providerId, classId, 0];
    d[2] += change;
    delta.set(key, d);
  };
  for (const h of await deleteAllocations(tx, consumerIds)) addDelta(h.providerId, h.classId, -h.used);
  const wanted = new Map<string, { providerId: number; classId: number; amount: number; rc: string; rp: string }>();
  for (const w of writes) {
    for (const [rp, resources] of w.allocations) {
      for (const [rc, amount] of resources) {
        const key = `${rp}/${rc}`;
        const entry = wanted.get(key) ?? { providerId: providers.get(rp)!.id, classId: classIds.get(rc)!, amount: 0, rc, rp };
        entry.amount += amount;
        wanted.set(key, entry);
      }
    }
  }
  const inventories = await inventoriesFor(tx, [...providers.values()].map((p) => p.id), [...new Set([...wanted.values()].map((e) => e.classId))]);
  for (const { providerId, classId, rc } of wanted.values()) {
    // A class id remembered from earlier may be stale: renamed, or deleted and made anew, by
    // another process. Then forget the names and run again with ids read from the database.
    const inv = inventories.get(`${providerId}/${classId}`);
    if (inv ? inv.class_name !== rc : cachedClasses.has(rc)) {
      forgetCachedNames(tx.database);
      throw new RetryableConflict(`resource class ${rc} was renamed or recreated`, () => placementError(409, 'Resource classes changed concurrently; retry.'));
    }
  }
  for (const w of writes) {
    for (const [rp, resources] of w.allocations) {
      for (const [rc, amount] of resources) {
        const inv = inventories.get(`${providers.get(rp)!.id}/${classIds.get(rc)!}`);
        if (inv && unitViolation(inv, amount)) {
          throw placementError(
            409,
            `Unable to allocate inventory: Unable to create allocation for '${rc}' on resource provider '${rp}'. The requested amount would violate inventory constraints.`,
          );
        }
      }
    }
  }
  for (const { providerId, classId, amount, rc, rp } of wanted.values()) {
    const key = `${providerId}/${classId}`;
    const inv = inventories.get(key);
    if (!inv) throw placementError(409, `Unable to allocate inventory: Inventory for '${rc}' on resource provider '${rp}' invalid.`);
    const releasedHere = -(delta.get(key)?.[2] ?? 0); // what these consumers held here, still counted in `used`
    if (inv.used - releasedHere + amount > capacity(inv)) {
      throw placementError(
        409,
        `Unable to allocate inventory: Unable to create allocation for '${rc}' on resource provider '${rp}'. The requested amount would exceed the capacity.`,
      );
    }
  }

  // 4. Consumers: create, update or (when left without allocations) delete; then write.
  const now = nowIso();
  const typeIds = await consumerTypeIds(tx, writes.map((w) => w.consumerType).filter((t): t is string => t !== undefined));
  const rows: Array<[number, number, number, number]> = [];
  for (const w of writes) {
    const existing = consumers.get(w.consumerUuid);
    const empty = [...w.allocations.values()].every((r) => r.size === 0);
    const typeId = w.consumerType === undefined ? undefined : typeIds.get(w.consumerType)!;
    let consumerId: number;
    if (!existing) {
      if (empty) continue;
      consumerId = await insertConsumer(tx, w, typeId ?? null, now);
    } else if (empty) {
      await statement('delete from consumers where id = ?').run(tx, [existing.id]);
      continue;
    } else {
      consumerId = existing.id;
      await bumpGeneration(tx, 'consumers', existing.id, existing.generation, () => consumerConflict(existing.generation, w.generation));
      const changes: { project_id?: string; user_id?: string; consumer_type_id?: number | null } = {};
      if (existing.project_id !== w.projectId) changes.project_id = w.projectId;
      if (existing.user_id !== w.userId) changes.user_id = w.userId;
      if (typeId !== undefined && typeId !== existing.consumer_type_id) changes.consumer_type_id = typeId;
      if (Object.keys(changes).length) await tx.db.updateTable('consumers').set(changes).where('id', '=', existing.id).execute();
    }
    for (const [rp, resources] of w.allocations) {
      for (const [rc, used] of resources) {
        rows.push([providers.get(rp)!.id, consumerId, classIds.get(rc)!, used]);
      }
    }
  }
  await insertAllocations(tx, rows, now);
  for (const { providerId, classId, amount } of wanted.values()) addDelta(providerId, classId, amount);
  const usage = await changeUsage(tx, [...delta.values()]);

  // 5. The providers that received allocations get a new generation, and this process's
  //    candidates index takes their new usage as it is; other changed providers are re-read.
  const className = new Map([...classIds].map(([name, id]) => [id, name]));
  const usedBy = new Map<number, Map<string, number>>();
  const reread = new Set<number>();
  for (const row of usage) {
    const providerId = Number(row.resource_provider_id);
    const name = className.get(Number(row.resource_class_id));
    if (name === undefined) reread.add(providerId); // a class this write only released
    else usedBy.set(providerId, (usedBy.get(providerId) ?? new Map()).set(name, Number(row.used)));
  }
  for (const provider of providers.values()) {
    const generation = await bumpProvider(tx, provider, { usageOnly: true });
    if (reread.has(provider.id)) continue;
    noteUsageChanged(tx, provider.id, generation, usedBy.get(provider.id) ?? new Map());
  }
  const bumped = new Set([...providers.values()].map((p) => p.id));
  noteProvidersChanged(tx, [...reread, ...[...usedBy.keys()].filter((id) => !bumped.has(id))]);
}

// The statements below run on every claim, so they are plain SQL (db/statement.ts), not built.
const forUpdate = (tx: Tx) => (tx.dialect === 'postgres' ? ' for update' : '');

/** Delete the consumers' allocations; returns what they held per provider and class. */
async function deleteAllocations(tx: Tx, consumerIds: number[]): Promise<Array<{ providerId: number; classId: number; used: number }>> {
  if (!consumerIds.length) return [];
  const list = placeholders(consumerIds.length);
  const held = await statement<{ resource_provider_id: number; resource_class_id: number; used: number }>(
    `select resource_provider_id, resource_class_id, sum(used) as used from allocations where consumer_id in (${list}) group by resource_provider_id, resource_class_id`,
  ).all(tx, consumerIds);
  if (held.length) await statement(`delete from allocations where consumer_id in (${list})`).run(tx, consumerIds);
  return held.map((h) => ({ providerId: Number(h.resource_provider_id), classId: Number(h.resource_class_id), used: Number(h.used) }));
}

/** Move inventories' `used` by these amounts, in one statement. */
/** Move inventories' `used` by these amounts, in one statement; returns the new `used` of each. */
async function changeUsage(tx: Tx, changes: Array<[providerId: number, classId: number, change: number]>): Promise<UsageRow[]> {
  const effective = changes.filter(([, , change]) => change !== 0);
  const out: UsageRow[] = [];
  for (let i = 0; i < effective.length; i += 300) {
    const chunk = effective.slice(i, i + 300);
    const rows = chunk.map(() => '(cast(? as integer), cast(? as integer), cast(? as integer))').join(', ');
    const changed = await statement<UsageRow>(
      `update inventories set used = used + d.change
       from (select column1 as p, column2 as c, column3 as change from (values ${rows}) as v) as d
       where inventories.resource_provider_id = d.p and inventories.resource_class_id = d.c
       returning inventories.resource_provider_id, inventories.resource_class_id, inventories.used`,
    ).all(tx, chunk.flat());
    out.push(...changed);
  }
  return out;
}
interface UsageRow {
  resource_provider_id: number;
  resource_class_id: number;
  used: number;
}

/** The providers with these uuids, locked (in id order) until commit. */
async function lockProvidersByUuid(tx: Tx, uuids: string[]): Promise<Map<string, ProviderView>> {
  if (!uuids.length) return new Map();
  const rows = await statement<{ id: number; uuid: string; name: string; generation: number; root_provider_id: number | null; created_at: string; updated_at: string }>(
    `select id, uuid, name, generation, root_provider_id, created_at, updated_at from resource_providers where uuid in (${placeholders(uuids.length)}) order by id${forUpdate(tx)}`,
  ).all(tx, uuids);
  return new Map(
    rows.map((r) => [
      r.uuid,
      { ...r, id: Number(r.id), generation: Number(r.generation), root_provider_id: Number(r.root_provider_id ?? r.id), parent_provider_uuid: null, root_provider_uuid: '' },
    ]),
  );
}

type InventoryCheck = { total: number; reserved: number; min_unit: number; max_unit: number; step_size: number; allocation_ratio: number; used: number };

/** Inventories (with `used`) for any of these providers and classes, keyed `providerId/classId`. */
async function inventoriesFor(db: Db, providerIds: number[], classIds: number[]): Promise<Map<string, InventoryCheck & { class_name: string }>> {
  const out = new Map<string, InventoryCheck & { class_name: string }>();
  if (!providerIds.length || !classIds.length) return out;
  const rows = await statement<InventoryCheck & { resource_provider_id: number; resource_class_id: number; class_name: string }>(
    `select i.resource_provider_id, i.resource_class_id, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, i.used,
            rc.name as class_name
     from inventories i join resource_classes rc on rc.id = i.resource_class_id
     where i.resource_provider_id in (${placeholders(providerIds.length)}) and i.resource_class_id in (${placeholders(classIds.length)})`,
  ).all(db, [...providerIds, ...classIds]);
  for (const r of rows) out.set(`${r.resource_provider_id}/${r.resource_class_id}`, r);
  return out;
}

async function lockConsumers(tx: Tx, uuids: string[]): Promise<Map<string, ConsumerRow>> {
  if (!uuids.length) return new Map();
  const rows = await statement<ConsumerRow>(
    `select id, uuid, project_id, user_id, generation, consumer_type_id from consumers where uuid in (${placeholders(uuids.length)}) order by uuid${forUpdate(tx)}`,
  ).all(tx, uuids);
  return new Map(rows.map((r) => [r.uuid, { ...r, id: Number(r.id), generation: Number(r.generation) }]));
}

async function insertConsumer(tx: Tx, w: ConsumerAllocations, typeId: number | null, now: string): Promise<number> {
  // A concurrent writer may create the same consumer between our read and this insert; then
  // nothing is inserted and the whole write is retried, seeing that consumer this time.
  const row = await statement<{ id: number }>(
    `insert into consumers (uuid, project_id, user_id, generation, consumer_type_id, created_at, updated_at) values (?, ?, ?, 1, ?, ?, ?)
     on conflict (uuid) do nothing returning id`,
  ).one(tx, [w.consumerUuid, w.projectId, w.userId, typeId, now, now]);
  if (!row) {
    throw new RetryableConflict(`consumer ${w.consumerUuid} created concurrently`, () => consumerConflict(null, w.generation));
  }
  return Number(row.id);
}

async function consumerTypeIds(tx: Tx, names: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(names)];
  if (!unique.length) return new Map();
  const { ids } = await cachedIdsByName(tx, 'consumer_types', unique);
  const missing = unique.filter((n) => !ids.has(n));
  if (missing.length) {
    const now = nowIso();
    for (const name of missing) {
      await statement('insert into consumer_types (name, created_at, updated_at) values (?, ?, ?) on conflict (name) do nothing').run(tx, [name, now, now]);
    }
    for (const [name, id] of (await cachedIdsByName(tx, 'consumer_types', missing)).ids) ids.set(name, id);
  }
  return ids;
}

/** Insert allocation rows, several per statement. */
async function insertAllocations(tx: Tx, rows: Array<[providerId: number, consumerId: number, classId: number, used: number]>, now: string): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const chunk = rows.slice(i, i + 100);
    await statement(
      `insert into allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at, updated_at) values ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
    ).run(
      tx,
      chunk.flatMap((r) => [...r, now, now]),
    );
  }
}

/** Remove every allocation of a consumer (DELETE /allocations/{c}); 404 when it has none. */
export async function deleteConsumerAllocations(database: Database, consumerUuid: string): Promise<void> {
  await transaction(database, async (tx) => {
    const consumer = (await lockConsumers(tx, [consumerUuid])).get(consumerUuid);
    if (!consumer) throw placementError(404, `No allocations for consumer '${consumerUuid}'`);
    // Like Placement, removing allocations does not bump provider generations: it only frees room.
    const usage = await changeUsage(tx, (await deleteAllocations(tx, [consumer.id])).map((h) => [h.providerId, h.classId, -h.used]));
    noteProvidersChanged(tx, usage.map((row) => Number(row.resource_provider_id)));
    await statement('delete from consumers where id = ?').run(tx, [consumer.id]);
  });
}

export interface ConsumerView {
  uuid: string;
  project_id: string;
  user_id: string;
  generation: number;
  consumer_type: string | null;
  /** provider uuid → { generation, resources } */
  allocations: Map<string, { generation: number; resources: Record<string, number> }>;
  lastModified: string | null;
}

export async function readConsumer(db: Db, consumerUuid: string): Promise<ConsumerView | null> {
  const consumer = await db.db
    .selectFrom('consumers as c')
    .leftJoin('consumer_types as t', 't.id', 'c.consumer_type_id')
    .select(['c.id', 'c.uuid', 'c.project_id', 'c.user_id', 'c.generation', 't.name as consumer_type', 'c.updated_at'])
    .where('c.uuid', '=', consumerUuid)
    .executeTakeFirst();
  if (!consumer) return null;
  const rows = await db.db
    .selectFrom('allocations as a')
    .innerJoin('resource_providers as rp', 'rp.id', 'a.resource_provider_id')
    .innerJoin('resource_classes as rc', 'rc.id', 'a.resource_class_id')
    .select(['rp.uuid as rp_uuid', 'rp.generation', 'rc.name as rc', 'a.used', 'a.updated_at'])
    .where('a.consumer_id', '=', consumer.id)
    .execute();
  const allocations = new Map<string, { generation: number; resources: Record<string, number> }>();
  let lastModified: string | null = consumer.updated_at;
  for (const r of rows) {
    const entry = allocations.get(r.rp_uuid) ?? { generation: r.generation, resources: {} };
    entry.resources[r.rc] = r.used;
    allocations.set(r.rp_uuid, entry);
    if (!lastModified || r.updated_at > lastModified) lastModified = r.updated_at;
  }
  return { ...consumer, allocations, lastModified };
}

/** consumer uuid → { consumer_generation, resources } for one provider */
export async function providerAllocations(db: Db, providerId: number) {
  const rows = await db.db
    .selectFrom('allocations as a')
    .innerJoin('consumers as c', 'c.id', 'a.consumer_id')
    .innerJoin('resource_classes as rc', 'rc.id', 'a.resource_class_id')
    .select(['c.uuid', 'c.generation', 'rc.name as rc', 'a.used', 'a.updated_at'])
    .where('a.resource_provider_id', '=', providerId)
    .orderBy('c.uuid')
    .execute();
  const out = new Map<string, { generation: number; resources: Record<string, number> }>();
  let lastModified: string | null = null;
  for (const r of rows) {
    const entry = out.get(r.uuid) ?? { generation: r.generation, resources: {} };
    entry.resources[r.rc] = r.used;
    out.set(r.uuid, entry);
    if (!lastModified || r.updated_at > lastModified) lastModified = r.updated_at;
  }
  return { allocations: out, lastModified };
}
