// The providers that GET /allocation_candidates searches, kept in memory per database: every
// provider with its tree position, inventories (with `used`), traits and aggregates, and which
// trees each sharing provider shares with. Loading all of this from the database for every request
// cost ~400 ms at 10 000 providers; served from memory the search alone remains (a few ms).
//
// Coherence: every transaction that changes what a provider offers or holds calls
// `noteProvidersChanged(tx, ids)`. After the commit, this process's index marks those providers
// stale before the writer gets its answer; on PostgreSQL the ids then go to every other process
// with NOTIFY (coalesced, a few milliseconds after the commit). Before a search, stale providers
// are re-read. Another process's change can reach a search a few milliseconds late; that is
// harmless, since candidates are a hint and every claim re-checks capacity under lock. When the
// listening connection drops, or (SQLite) another process wrote to the file, or a minute has
// passed, the whole index is re-read.
type Logger = { info(details: object, message: string): void };
import { randomUUID } from 'node:crypto';
import type { CommitTopic, Database, Tx } from '../../db/database.js';
import { onCommit } from '../../db/transaction.js';
import { readStatement } from '../../db/statement.js';
import type { Metrics } from '../../metrics/metrics.js';

import type { InventoryState, ModelProvider, ProviderModel } from '../candidates/model.js';
import { prepareSearch } from '../candidates/search.js';
import type { NameCache } from './names.js';

export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';
const CHANNEL = 'allot_placement_providers';
/** NOTIFY payloads are limited to 8000 bytes; beyond this many ids say "everything". */
const MAX_NOTIFY_IDS = 1000;

interface IndexedProvider extends ModelProvider {
  generation: number;
  revision: number;
  inventories: Map<string, InventoryState>;
  /** NONE until the provider has one (most have no trait or aggregate: a set each cost ~100 bytes) */
  traits: Set<string>;
  aggregates: Set<string>;
}

/** The one empty set every provider without traits (or aggregates) shares; never added to. */
const NONE: Set<string> = new Set();

/** Providers read per statement when everything is loaded: bounds the memory of a load. */
const LOAD_CHUNK = 20_000;

/** What one transaction changed, recorded on it by the stores and handed to the index after commit. */
interface ProviderChanges {
  /** providers to re-read */
  ids: Set<number>;
  all: boolean;
  /** providers whose only change is usage, with their new generation and `used` per class */
  usage: Map<number, { generation: number; used: Map<string, number> }>;
}

export const PROVIDER_CHANGES: CommitTopic<ProviderChanges> = {
  name: 'placement.providers',
  create: () => ({ ids: new Set(), all: false, usage: new Map() }),
};

/** Record, inside a write, that these providers changed (or 'all': e.g. trees were re-rooted). */
export function noteProvidersChanged(tx: Tx, ids: Iterable<number> | 'all'): void {
  const changes = tx.record(PROVIDER_CHANGES);
  if (ids === 'all') changes.all = true;
  else for (const id of ids) changes.ids.add(id);
}

/**
 * Record, inside a claim, a provider whose only change is its usage: its generation went up by
 * one and these classes now have these `used` amounts. After the commit this process's index
 * takes the values as they are instead of reading the provider again.
 */
export function noteUsageChanged(tx: Tx, providerId: number, generation: number, used: Map<string, number>): void {
  const usage = tx.record(PROVIDER_CHANGES).usage;
  const known = usage.get(providerId);
  if (known) for (const [cls, n] of used) known.used.set(cls, n);
  else usage.set(providerId, { generation, used: new Map(used) });
}

const NOTIFY_DELAY_MS = 5;

export class ProviderIndex implements ProviderModel {
  readonly providers = new Map<number, IndexedProvider>();
  readonly sharingAnchors = new Map<number, number[]>();
  private readonly byUuid = new Map<string, number>();
  private readonly members = new Map<string, Set<number>>(); // aggregate uuid → provider ids
  private stale = new Set<number>();
  private everything = true;
  /** invalidations so far, and how many of them finished refreshes have applied */
  private marked = 1;
  private applied = 0;
  private dataVersion: number | null = null;
  private loadedAt = 0;
  /** the next background reload is due this long after the last one ended */
  private fullRefreshMs: number;
  private refreshing: Promise<void> | null = null;
  /** while the periodic full reload runs in the background: ids invalidated since it began */
  private touchedDuringReload: Set<number> | null = null;
  /** bumped when providers come or go, move in their trees, or the sharing anchors change */
  structureVersion = 0;
  /** what the candidate search derived from the structure, kept while structureVersion stays */
  searchCache?: { version: number; index: unknown };
  /** who sends a NOTIFY: one name per index, so a process can skip its own messages */
  private readonly origin = randomUUID();
  /** changes committed here that the other processes have yet to hear of */
  private outbox: { ids: Set<number>; all: boolean; timer: NodeJS.Timeout | null } = { ids: new Set(), all: false, timer: null };
  private readonly stopFollowing: () => void;

  constructor(
    private readonly database: Database,
    private readonly names: NameCache,
    private readonly options: {
      /** reload everything at least this often (`--candidate-index-reload`): a safety net, as changes arrive when they commit */
      reloadMs: number;
      log?: Logger;
      metrics?: Metrics;
    },
  ) {
    this.fullRefreshMs = options.reloadMs;
    this.stopFollowing = onCommit(database, PROVIDER_CHANGES, (changes) => this.committed(changes));
    database.listen?.(
      CHANNEL,
      (payload) => {
        // "<origin> all" or "<origin> 1,2,3". This process applied its own changes already.
        const [origin, ids = ''] = payload.split(' ');
        if (origin === this.origin) return;
        this.invalidate(ids === 'all' ? 'all' : ids.split(',').map(Number));
      },
      () => this.invalidate('all'),
    );
  }

  /** Stop following the database; a NOTIFY still due goes out now. */
  async close(): Promise<void> {
    this.stopFollowing();
    if (this.outbox.timer) {
      clearTimeout(this.outbox.timer);
      await this.sendNotify();
    }
  }

  invalidate(ids: Iterable<number> | 'all'): void {
    const before = this.stale.size;
    if (ids === 'all') {
      this.everything = true;
      // 'all' is also how a process says it deleted or renamed a resource class or trait
      this.names.forget();
    } else
      for (const id of ids) {
        this.stale.add(id);
        this.touchedDuringReload?.add(id);
      }
    if (ids === 'all' || this.stale.size > before) this.marked++;
  }

  /** A transaction that changed providers committed in this process. */
  private committed(changes: ProviderChanges): void {
    // Stale before the writer gets its answer, so a client reads its own writes.
    this.invalidate(changes.all ? 'all' : changes.ids);
    for (const [id, change] of changes.usage) if (!changes.all && !changes.ids.has(id)) this.applyUsage(id, change.generation, change.used);
    // Other processes re-read every provider this transaction touched.
    const touched = changes.all ? 'all' : new Set([...changes.ids, ...changes.usage.keys()]);
    if (this.database.notify && (touched === 'all' || touched.size > 0)) this.announce(touched);
  }

  /**
   * Tell the other processes, after the commit, in one NOTIFY per few milliseconds. (A NOTIFY inside
   * each writing transaction would serialise every commit behind PostgreSQL's notify-queue lock:
   * measured 236 -> 173 claims/s at 8 clients.) If this process dies between a commit and its
   * NOTIFY, the others learn at their next periodic full refresh.
   */
  private announce(ids: Set<number> | 'all'): void {
    const o = this.outbox;
    if (ids === 'all') o.all = true;
    else for (const id of ids) o.ids.add(id);
    o.timer ??= setTimeout(() => void this.sendNotify(), NOTIFY_DELAY_MS);
  }

  private async sendNotify(): Promise<void> {
    const o = this.outbox;
    const payload = `${this.origin} ${o.all || o.ids.size > MAX_NOTIFY_IDS ? 'all' : [...o.ids].join(',')}`;
    this.outbox = { ids: new Set(), all: false, timer: null };
    await this.database.notify!(CHANNEL, payload).catch(() => {
      // The database is gone or closing; the others will reload when their listener reconnects.
    });
  }

  /**
   * Load every provider, and what the search derives from them, now: at start, before the process
   * says it is ready. `progress` hears how many providers are in so far.
   */
  async load(progress: (providers: number) => void): Promise<void> {
    await this.current(progress);
    prepareSearch(this);
  }

  /** The index with every change committed before this call applied. */
  async current(progress?: (providers: number) => void): Promise<ProviderIndex> {
    // A change announced by a process that died before announcing it is picked up here.
    if (performance.now() - this.loadedAt > this.fullRefreshMs && !this.everything && !this.touchedDuringReload) this.reloadInBackground();
    if (this.database.dialect === 'sqlite') {
      // Changes only when another connection (another process) commits to the file.
      const row = await readStatement<{ data_version: number }>('pragma data_version').one(this.database, []);
      const version = Number(row?.data_version);
      if (this.dataVersion !== null && version !== this.dataVersion) this.invalidate('all');
      this.dataVersion = version;
    }
    // Wait for the changes marked before this call only: under a steady stream of claims there
    // is always a newer one, and waiting for those too could wait for ever.
    const wanted = this.marked;
    while (this.applied < wanted) {
      this.refreshing ??= this.refresh(progress).finally(() => (this.refreshing = null));
      await this.refreshing;
    }
    return this;
  }

  /**
   * A claim's committed usage. Taken only when it is the very next generation of what the index
   * holds and no refresh is under way (its rows may predate this commit and would overwrite it);
   * otherwise the provider is read again.
   */
  applyUsage(id: number, generation: number, used: Map<string, number>): void {
    const p = this.providers.get(id);
    if (!p || this.refreshing || this.touchedDuringReload || this.everything || this.stale.has(id)) {
      this.invalidate([id]);
      return;
    }
    if (generation <= p.generation) return; // the index already has this change or a later one
    if (generation !== p.generation + 1) {
      this.invalidate([id]);
      return;
    }
    for (const [cls, n] of used) {
      const inventory = p.inventories.get(cls);
      if (!inventory) {
        this.invalidate([id]);
        return;
      }
      inventory.used = n;
    }
    p.generation = generation;
    p.revision++;
  }

  /** id of the provider with this uuid */
  idOf(uuid: string): number | undefined {
    return this.byUuid.get(uuid);
  }

  private async refresh(progress?: (providers: number) => void): Promise<void> {
    const started = performance.now();
    const everything = this.everything;
    const ids = [...this.stale];
    const upTo = this.marked;
    this.everything = false;
    this.stale = new Set();
    try {
      if (everything) await this.reloadAll(undefined, progress);
      else this.apply(await readProviders(this.database, { ids }), ids);
    } catch (err) {
      this.invalidate('all'); // what was taken for this refresh must not be forgotten
      throw err;
    }
    this.applied = upTo;
    if (everything) this.loaded(started, 'wait');
  }

  private loaded(started: number, kind: 'wait' | 'background'): void {
    const ms = performance.now() - started;
    this.loadedAt = performance.now();
    // The safety net (a full reload every so often) may take at most ~3% of a core.
    this.fullRefreshMs = Math.max(this.options.reloadMs, 30 * ms);
    this.options.metrics?.candidateIndexLoads.observe({ kind }, ms / 1000);
    this.options.log?.info({ providers: this.providers.size, ms: Math.round(ms), kind }, 'placement provider index loaded');
  }

  /**
   * The safety net: every provider read again while searches go on with what the index holds (at
   * a million providers a reload takes tens of seconds, and no search may wait for that). A chunk
   * read before a change it then overwrites is made good at once: the providers invalidated since
   * the reload began are marked stale again as their chunk is applied, so the next search re-reads
   * them, as it would without the reload.
   */
  private reloadInBackground(): void {
    const touched = new Set<number>();
    this.touchedDuringReload = touched;
    const started = performance.now();
    this.reloadAll(touched)
      .then(() => this.loaded(started, 'background'))
      .catch(() => this.invalidate('all')) // the next search reloads, and waits for it
      .finally(() => {
        this.touchedDuringReload = null;
      });
  }

  /**
   * Every provider, read in chunks of ids so that memory stays bounded at a million providers,
   * each chunk applied in place as it arrives (a search in between sees some providers a little
   * older than others, which candidates tolerate: every claim re-checks under its locks). The
   * event loop gets a turn between chunks (SQLite reads without one), so requests are answered
   * meanwhile. Providers that are gone are dropped at the end.
   */
  private async reloadAll(touched?: Set<number>, progress?: (providers: number) => void): Promise<void> {
    const seen = new Set<number>();
    let after = 0;
    for (;;) {
      const rows = await readProviders(this.database, { after, limit: LOAD_CHUNK });
      if (rows.providers.length === 0) break;
      for (const r of rows.providers) seen.add(Number(r.id));
      this.apply(rows, []);
      // in the background: what changed since the reload began may be older in this chunk
      if (touched?.size) this.invalidate(rows.providers.map((r) => Number(r.id)).filter((id) => touched.has(id)));
      after = Number(rows.providers[rows.providers.length - 1]!.id);
      progress?.(this.providers.size);
      if (rows.providers.length < LOAD_CHUNK) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A provider made after its chunk was read is not gone: it is re-read as the change it is.
    const gone = [...this.providers.keys()].filter((id) => !seen.has(id) && !touched?.has(id));
    for (const id of gone) this.remove(id);
    if (touched?.size) this.invalidate(touched);
    this.computeSharingAnchors();
    this.structureVersion++;
  }

  /**
   * Apply rows read for some providers, synchronously: no search sees a half-applied provider. A
   * provider that keeps its place in its tree is updated in place, so what a search derived from
   * the trees (structureVersion) stays valid; a claim changes only `used`. `asked`: ids read that
   * may have been deleted.
   */
  private apply(rows: ProviderRows, asked: number[]): void {
    let structureChanged = false;
    let sharingChanged = false;
    const before = new Map<number, string>(); // id → what sharing depends on, before this refresh
    const present = new Set<number>();
    for (const r of rows.providers) {
      const id = Number(r.id);
      present.add(id);
      const parentId = r.parent === null ? null : Number(r.parent);
      const rootId = r.root === null ? id : Number(r.root);
      const old = this.providers.get(id);
      if (old && old.parentId === parentId && old.rootId === rootId) {
        before.set(id, sharingKey(old));
        old.generation = Number(r.generation);
        old.revision++;
        for (const uuid of old.aggregates) this.members.get(uuid)?.delete(id);
        old.inventories.clear();
        old.traits = NONE;
        old.aggregates = NONE;
        continue;
      }
      if (old) this.remove(id);
      structureChanged = true;
      this.providers.set(id, {
        id,
        uuid: r.uuid,
        generation: Number(r.generation),
        revision: 0,
        parentId,
        rootId,
        inventories: new Map(),
        traits: NONE,
        aggregates: NONE,
      });
      this.byUuid.set(r.uuid, id);
    }
    for (const id of asked) {
      if (!present.has(id) && this.providers.has(id)) {
        this.remove(id);
        structureChanged = true;
      }
    }
    for (const r of rows.inventories) {
      this.providers.get(Number(r.pid))?.inventories.set(r.name, {
        total: Number(r.total),
        reserved: Number(r.reserved),
        min_unit: Number(r.min_unit),
        max_unit: Number(r.max_unit),
        step_size: Number(r.step_size),
        allocation_ratio: Number(r.allocation_ratio),
        used: Number(r.used),
      });
    }
    for (const r of rows.traits) {
      const p = this.providers.get(Number(r.pid));
      if (p) (p.traits === NONE ? (p.traits = new Set()) : p.traits).add(r.name);
    }
    for (const r of rows.aggregates) {
      const pid = Number(r.pid);
      const p = this.providers.get(pid);
      if (!p) continue;
      (p.aggregates === NONE ? (p.aggregates = new Set()) : p.aggregates).add(r.uuid);
      let set = this.members.get(r.uuid);
      if (!set) this.members.set(r.uuid, (set = new Set()));
      set.add(pid);
    }
    for (const [id, key] of before) {
      if (sharingKey(this.providers.get(id)!) !== key) sharingChanged = true;
    }
    if (structureChanged || sharingChanged) {
      this.computeSharingAnchors();
      this.structureVersion++;
    }
  }

  private remove(id: number): void {
    const p = this.providers.get(id);
    if (!p) return;
    for (const uuid of p.aggregates) this.members.get(uuid)?.delete(id);
    this.byUuid.delete(p.uuid);
    this.providers.delete(id);
  }

  /**
   * Each sharing provider → the roots of every tree with a provider in one of its aggregates
   * (its own root among them when it is in any aggregate): the trees it may complete.
   */
  private computeSharingAnchors(): void {
    this.sharingAnchors.clear();
    for (const p of this.providers.values()) {
      if (!p.traits.has(SHARING_TRAIT)) continue;
      const roots = new Set<number>();
      for (const uuid of p.aggregates) {
        for (const member of this.members.get(uuid) ?? []) {
          const m = this.providers.get(member);
          if (m) roots.add(m.rootId);
        }
      }
      this.sharingAnchors.set(p.id, [...roots]);
    }
  }
}

/** What the sharing anchors depend on in one provider: its aggregates and whether it shares. */
function sharingKey(p: IndexedProvider): string {
  if (p.aggregates.size === 0) return '';
  return `${p.traits.has(SHARING_TRAIT)}:${[...p.aggregates].sort().join(',')}`;
}

type ProviderRows = Awaited<ReturnType<typeof readProviders>>;

/** The rows of some providers — these ids, or the next `limit` after an id — in four statements. */
async function readProviders(database: Database, which: { ids: number[] } | { after: number; limit: number }) {
  const pg = database.dialect === 'postgres';
  let only: (column: string) => string;
  let params: unknown[];
  let providerQuery: string;
  const providerColumns = 'select id, uuid, generation, parent_provider_id as parent, root_provider_id as root from resource_providers';
  if ('ids' in which) {
    // The ids go as one parameter (an array on PostgreSQL, a JSON array on SQLite): thousands of
    // stale providers cost one bind, not thousands.
    only = (column) => (pg ? `where ${column} = any(cast(? as integer[]))` : `where ${column} in (select value from json_each(?))`);
    params = [pg ? which.ids : JSON.stringify(which.ids)];
    providerQuery = `${providerColumns} ${only('id')}`;
  } else {
    // A chunk: the next providers by id, and the rows of exactly those (by their id range).
    const ids = await readStatement<{ id: number }>('select id from resource_providers where id > ? order by id limit ?').all(database, [
      which.after,
      which.limit,
    ]);
    if (ids.length === 0) return { providers: [], inventories: [], traits: [], aggregates: [] };
    only = (column) => `where ${column} between ? and ?`;
    params = [Number(ids[0]!.id), Number(ids[ids.length - 1]!.id)];
    providerQuery = `${providerColumns} ${only('id')} order by id`;
  }
  const [providers, inventories, traits, aggregates] = await Promise.all([
    readStatement<{ id: number; uuid: string; generation: number; parent: number | null; root: number | null }>(providerQuery).all(database, params),
    readStatement<InventoryState & { pid: number; name: string }>(
      `select i.resource_provider_id as pid, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, i.used
       from inventories i join resource_classes rc on rc.id = i.resource_class_id
       ${only('i.resource_provider_id')} order by i.resource_provider_id, i.resource_class_id`,
    ).all(database, params),
    readStatement<{ pid: number; name: string }>(
      `select pt.resource_provider_id as pid, t.name from resource_provider_traits pt join traits t on t.id = pt.trait_id
       ${only('pt.resource_provider_id')} order by pt.resource_provider_id, pt.trait_id`,
    ).all(database, params),
    readStatement<{ pid: number; uuid: string }>(
      `select pa.resource_provider_id as pid, a.uuid from resource_provider_aggregates pa join aggregates a on a.id = pa.aggregate_id
       ${only('pa.resource_provider_id')}`,
    ).all(database, params),
  ]);
  return { providers, inventories, traits, aggregates };
}
