// Reads for GET /allocation_candidates: the ProviderModel one request searches, built from the
// database with only what can matter to it, and the provider summaries of the trees it answers with.
//
// What "can matter": providers with inventory of a requested class (with their usage), every
// provider of their trees (a tree's other providers carry traits for resourceless groups and
// same_subtree, and appear in 1.29+ summaries), sharing providers and the roots of the trees they
// share with, and of traits and aggregates only those the request names. Nothing else is read, so a
// request for VCPU does not load the PCI devices of every tree that has no VCPU.
//
// No transaction: like Placement, candidates are a hint read from committed data; the claim that
// follows re-checks capacity under lock. Each statement takes id lists as one parameter (a JSON
// array on SQLite, an array on PostgreSQL), so 10 000 ids cost one bind, not 10 000.
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { InventoryState, ModelProvider, ProviderModel } from '../candidates/model.js';

export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';

/** `column IN (ids)` with the ids as a single parameter. */
function inIds(db: Db, column: string, ids: readonly number[]): RawBuilder<boolean> {
  if (db.dialect === 'postgres') return sql<boolean>`${sql.ref(column)} = any(cast(${[...ids]} as integer[]))`;
  return sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(ids)}))`;
}

const num = (v: unknown) => Number(v);

export interface ModelNeeds {
  /** requested class name → id */
  classes: ReadonlyMap<string, number>;
  /** trait name → id, for every trait the request names (required, forbidden, any-of, root_required) */
  traits: ReadonlyMap<string, number>;
  /** aggregate uuids the request names (member_of, forbidden member_of) */
  aggregates: readonly string[];
  /** id of MISC_SHARES_VIA_AGGREGATE (absent only on a database without standard traits) */
  sharingTraitId: number | undefined;
  /** the request has resourceless groups: any sharing provider may satisfy one, with or without the requested classes */
  everySharingProvider: boolean;
}

interface MutableProvider extends ModelProvider {
  inventories: Map<string, InventoryState>;
  traits: Set<string>;
  aggregates: Set<string>;
}

export async function loadProviderModel(db: Db, needs: ModelNeeds): Promise<ProviderModel> {
  const classIds = [...needs.classes.values()];
  const className = new Map([...needs.classes].map(([name, id]) => [id, name]));
  const providers = new Map<number, MutableProvider>();
  const addProvider = (r: { id: number; uuid: string; parent: number | null; root: number }) => {
    const id = num(r.id);
    let p = providers.get(id);
    if (!p) {
      p = { id, uuid: r.uuid, parentId: r.parent === null ? null : num(r.parent), rootId: num(r.root), inventories: new Map(), traits: new Set(), aggregates: new Set() };
      providers.set(id, p);
    }
    return p;
  };

  // 1. Providers with inventory of a requested class: that inventory and what is allocated from it.
  if (classIds.length > 0) {
    const rows = await sql<{
      id: number;
      uuid: string;
      parent: number | null;
      root: number;
      cid: number;
      total: number;
      reserved: number;
      min_unit: number;
      max_unit: number;
      step_size: number;
      allocation_ratio: number;
      used: number;
    }>`
      select rp.id, rp.uuid, rp.parent_provider_id as parent, rp.root_provider_id as root, i.resource_class_id as cid,
             i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, i.used
      from inventories i
      join resource_providers rp on rp.id = i.resource_provider_id
      where i.resource_class_id in (${sql.join(classIds)})`.execute(db.db);
    for (const row of rows.rows) {
      addProvider(row).inventories.set(className.get(num(row.cid))!, {
        total: num(row.total),
        reserved: num(row.reserved),
        min_unit: num(row.min_unit),
        max_unit: num(row.max_unit),
        step_size: num(row.step_size),
        allocation_ratio: num(row.allocation_ratio),
        used: num(row.used),
      });
    }
  }
  const roots = new Set([...providers.values()].map((p) => p.rootId));

  // 2. Sharing providers in play, and 3. the roots of the trees each one shares with.
  const sharingAnchors = new Map<number, number[]>();
  if (needs.sharingTraitId !== undefined && (classIds.length > 0 || needs.everySharingProvider)) {
    const sharing = needs.everySharingProvider
      ? await sql<{ pid: number }>`select resource_provider_id as pid from resource_provider_traits where trait_id = ${needs.sharingTraitId}`.execute(db.db)
      : await sql<{ pid: number }>`
          select distinct t.resource_provider_id as pid from resource_provider_traits t
          join inventories i on i.resource_provider_id = t.resource_provider_id
          where t.trait_id = ${needs.sharingTraitId} and i.resource_class_id in (${sql.join(classIds)})`.execute(db.db);
    const ids = sharing.rows.map((r) => num(r.pid));
    for (const id of ids) sharingAnchors.set(id, []);
    if (ids.length > 0) {
      const anchors = await sql<{ sid: number; anchor: number }>`
        select distinct sa.resource_provider_id as sid, rp.root_provider_id as anchor
        from resource_provider_aggregates sa
        join resource_provider_aggregates oa on oa.aggregate_id = sa.aggregate_id
        join resource_providers rp on rp.id = oa.resource_provider_id
        where ${inIds(db, 'sa.resource_provider_id', ids)}`.execute(db.db);
      for (const row of anchors.rows) {
        sharingAnchors.get(num(row.sid))!.push(num(row.anchor));
        roots.add(num(row.anchor));
      }
    }
  }

  // 4. The rest of those trees: every provider under those roots, and the sharing providers. Where
  // no provider has a parent, every tree is one provider and only roots not seen yet are read.
  const nested = (await db.db.selectFrom('resource_providers').select('id').where('parent_provider_id', 'is not', null).limit(1).execute()).length > 0;
  const wanted = nested ? [...roots] : [...roots].filter((id) => !providers.has(id));
  const sharingUnseen = [...sharingAnchors.keys()].filter((id) => !providers.has(id));
  if (wanted.length > 0 || sharingUnseen.length > 0) {
    const column = nested ? 'root_provider_id' : 'id';
    const rows = await sql<{ id: number; uuid: string; parent: number | null; root: number }>`
      select id, uuid, parent_provider_id as parent, root_provider_id as root from resource_providers
      where ${inIds(db, column, wanted)} or ${inIds(db, 'id', sharingUnseen)}`.execute(db.db);
    for (const r of rows.rows) addProvider(r);
  }

  // 5. The traits the request names, and 6. the aggregates it names; read by name (an index), kept
  // for the providers in the model.
  const traitIds = [...needs.traits.values()];
  if (traitIds.length > 0 && providers.size > 0) {
    const rows = await sql<{ pid: number; name: string }>`
      select t.resource_provider_id as pid, tr.name from resource_provider_traits t
      join traits tr on tr.id = t.trait_id
      where t.trait_id in (${sql.join(traitIds)})`.execute(db.db);
    for (const r of rows.rows) providers.get(num(r.pid))?.traits.add(r.name);
  }
  if (needs.aggregates.length > 0 && providers.size > 0) {
    const rows = await sql<{ pid: number; uuid: string }>`
      select ra.resource_provider_id as pid, a.uuid from resource_provider_aggregates ra
      join aggregates a on a.id = ra.aggregate_id
      where a.uuid in (${sql.join([...needs.aggregates])})`.execute(db.db);
    for (const r of rows.rows) providers.get(num(r.pid))?.aggregates.add(r.uuid);
  }
  return { providers, sharingAnchors };
}

/** The root provider id of the tree holding the provider with this uuid, if there is one. */
export async function rootOf(db: Db, uuid: string): Promise<number | undefined> {
  const row = await db.db.selectFrom('resource_providers').select('root_provider_id').where('uuid', '=', uuid).executeTakeFirst();
  return row?.root_provider_id ?? undefined;
}

export interface SummaryData {
  /** class name → capacity and used, in class id order */
  resources: Array<{ name: string; capacity: number; used: number }>;
  /** every trait of the provider, in trait id order */
  traits: string[];
}

/**
 * What a provider summary shows beyond the model: inventories of the classes the request did not
 * ask for (`otherClasses`, 1.27+; the model already holds the requested ones, as the search saw
 * them) and every trait (`traits`, 1.17+).
 */
export async function loadSummaries(
  db: Db,
  providerIds: readonly number[],
  want: { otherClasses: boolean; traits: boolean; requestedClassIds: readonly number[] },
): Promise<Map<number, SummaryData>> {
  const out = new Map<number, SummaryData>(providerIds.map((id) => [id, { resources: [], traits: [] }]));
  if (providerIds.length === 0) return out;
  if (want.otherClasses) {
    const skip = want.requestedClassIds.length > 0 ? sql`and i.resource_class_id not in (${sql.join([...want.requestedClassIds])})` : sql``;
    const inventories = await sql<{ pid: number; name: string; total: number; reserved: number; allocation_ratio: number; used: number }>`
      select i.resource_provider_id as pid, rc.name, i.total, i.reserved, i.allocation_ratio, i.used
      from inventories i
      join resource_classes rc on rc.id = i.resource_class_id
      where ${inIds(db, 'i.resource_provider_id', providerIds)} ${skip}
      order by i.resource_provider_id, i.resource_class_id`.execute(db.db);
    for (const r of inventories.rows) {
      out.get(num(r.pid))?.resources.push({
        name: r.name,
        // Placement's capacity: (total - reserved) * allocation_ratio, truncated
        capacity: Math.floor((num(r.total) - num(r.reserved)) * num(r.allocation_ratio)),
        used: num(r.used),
      });
    }
  }
  if (want.traits) {
    const traits = await sql<{ pid: number; name: string }>`
      select t.resource_provider_id as pid, tr.name from resource_provider_traits t
      join traits tr on tr.id = t.trait_id
      where ${inIds(db, 't.resource_provider_id', providerIds)}
      order by t.resource_provider_id, t.trait_id`.execute(db.db);
    for (const r of traits.rows) out.get(num(r.pid))?.traits.push(r.name);
  }
  return out;
}
