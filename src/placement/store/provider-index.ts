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
//
// Size: at a million providers, one object per provider in an array by id, its inventories a
// stretch of one Float64Array per chunk of a load (model.ts), and shared copies of what many
// providers have alike — the list of their classes, their set of traits, their set of aggregates.
// (A Map of inventory objects and a Set per provider took 1.4 GB and most of a 15–50 s load in
// allocation and garbage collection; a Map of providers, a Map of uuids and an array of numbers
// per provider still took half of what remained: docs/performance.md.)
type Logger = { info(details: object, message: string): void };
import { randomUUID } from 'node:crypto';
import type { CommitTopic, Database, Tx } from '../../db/database.js';
import type { ThreadReader } from '../../db/thread-reader.js';
import { onCommit } from '../../db/transaction.js';
import { readStatement } from '../../db/statement.js';
import type { Metrics } from '../../metrics/metrics.js';

import {
  ALLOCATION_RATIO,
  INVENTORY_WIDTH,
  MAX_UNIT,
  MIN_UNIT,
  type ModelProvider,
  type ProviderModel,
  RESERVED,
  STEP_SIZE,
  TOTAL,
  USED,
  inventoryAt,
} from '../candidates/model.js';
import { prepareSearch } from '../candidates/search.js';
import type { NameCache } from './names.js';
import { LAST_CHUNK, type Names, PackedLines, type PackedProviders, type ProviderSelection, readChunkEnd, readNames, readProviders } from './provider-rows.js';

export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';
const CHANNEL = 'allot_placement_providers';
/** NOTIFY payloads are limited to 8000 bytes; beyond this many ids say "everything". */
const MAX_NOTIFY_IDS = 1000;

class IndexedProvider implements ModelProvider {
  revision = 0;
  renderedSummary?: ModelProvider['renderedSummary'];
  /** the full load that last read it (a provider no full load read is gone) */
  loadedIn = 0;
  classes: readonly string[] = NO_CLASSES;
  /** shared with the other providers read with it (a chunk of a load), each its own stretch */
  inventories: Float64Array = NO_NUMBERS;
  inventoryStart = 0;
  /** NONE until the provider has one; sets are shared by every provider with the same members */
  traits: ReadonlySet<string> = NONE;
  aggregates: ReadonlySet<string> = NONE;
  constructor(
    readonly id: number,
    readonly uuid: string,
    public generation: number,
    readonly parentId: number | null,
    readonly rootId: number,
  ) {}
}

/** The one empty set every provider without traits (or aggregates) shares. */
const NONE: ReadonlySet<string> = new Set();
const NO_CLASSES: readonly string[] = [];
const NO_NUMBERS = new Float64Array(0);
/** ':' in a packed row: a short form of the row follows (provider-rows.ts) */
const COLON = 58;

/** Providers per statement of a full load: bounds its memory and how long one step holds the event loop. */
const LOAD_CHUNK = 10_000;
/**
 * Chunks asked for at once in a full load, beyond the one being applied. PostgreSQL packs a chunk's
 * rows in one backend, which at a million providers took twice the client's CPU (4.2–4.5 s against
 * 1.9–2.2 s): two chunks asked for are packed by two backends, on both cores. SQLite has one
 * reader thread, which reads them one after the other anyway: a second chunk asked for only holds
 * one more chunk's text, and its loads were no faster (docs/performance.md).
 */
const LOAD_AHEAD: Record<Database['dialect'], number> = { postgres: 2, sqlite: 1 };

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
  readonly providers = new ProviderTable();
  readonly sharingAnchors = new Map<number, number[]>();
  /**
   * uuid → id, made when first asked for (in_tree) and kept up to date from then on: at a million
   * providers a Map of uuids took a third of the load's JavaScript, for requests most clouds never make.
   */
  private byUuid: Map<string, number> | null = null;
  private readonly members = new Map<string, Set<number>>(); // aggregate uuid → provider ids
  /** resource class and trait names by id, read with every full load (and when a row names one not known) */
  private nameOf: Names = { classes: new Map(), traits: new Map(), maxClassId: 0, maxTraitId: 0 };
  /** the shared copies (class lists, trait and aggregate sets), by what they hold; made anew with every full load */
  private shared = new SharedValues();
  /** full loads so far (IndexedProvider.loadedIn) */
  private loads = 0;
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
  /** the periodic full reload while it runs in the background: ids invalidated since it began, and how to stop it */
  private background: { touched: Set<number>; stop: AbortController; done: Promise<void> } | null = null;
  /**
   * A full load (waited for or in the background) is under way. There is only ever one: each marks
   * the providers it read with its number and drops the rest at its end, so two at once would drop
   * what the other one read.
   */
  private loadingAll = false;
  /** a background reload is due at the next search, whenever the last one ended (the LISTEN connection was made again) */
  private reloadDue = false;
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
      () => this.listening(),
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

  /**
   * The LISTEN connection was made (again): what other processes announced while it was down is
   * lost. Every provider is read again in the background, as the safety net does, due now — not a
   * load every search waits for, which after a failover at a million providers would hold each
   * candidates request for seconds; until it ends another process's change may reach a search
   * late, as one does between its commit and its NOTIFY. A background reload already under way
   * may have read some providers before the lost changes: it is stopped and begun again.
   */
  private listening(): void {
    this.names.forget();
    if (this.loads === 0 || this.everything) return; // a load yet to begin reads after this anyway
    this.reloadDue = true;
    void this.stopBackgroundReload();
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
        this.background?.touched.add(id);
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
   * says it is ready. `progress` hears how many providers are in so far. `stop` ends the load at
   * the next chunk (rejecting with its reason): a process told to stop does not read a million
   * providers first; the index stays marked for a full load.
   */
  async load(progress: (providers: number) => void, stop?: AbortSignal): Promise<void> {
    await this.current(progress, stop);
    prepareSearch(this);
  }

  /** The index with every change committed before this call applied. */
  async current(progress?: (providers: number) => void, stop?: AbortSignal): Promise<ProviderIndex> {
    // A change announced by a process that died before announcing it is picked up here.
    const due = this.reloadDue || performance.now() - this.loadedAt > this.fullRefreshMs;
    if (due && !this.everything && !this.loadingAll && !this.background) this.reloadInBackground();
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
      this.refreshing ??= this.refresh(progress, stop).finally(() => (this.refreshing = null));
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
    if (!p || this.refreshing || this.background || this.everything || this.stale.has(id)) {
      this.invalidate([id]);
      return;
    }
    if (generation <= p.generation) return; // the index already has this change or a later one
    if (generation !== p.generation + 1) {
      this.invalidate([id]);
      return;
    }
    const at = [...used.keys()].map((cls) => inventoryAt(p, cls));
    if (at.includes(-1)) {
      this.invalidate([id]);
      return;
    }
    let k = 0;
    for (const n of used.values()) p.inventories[at[k++]! + USED] = n;
    p.generation = generation;
    p.revision++;
  }

  /** id of the provider with this uuid */
  idOf(uuid: string): number | undefined {
    if (!this.byUuid) {
      this.byUuid = new Map();
      for (const p of this.providers.values()) this.byUuid.set(p.uuid, p.id);
    }
    return this.byUuid.get(uuid);
  }

  private async refresh(progress?: (providers: number) => void, stop?: AbortSignal): Promise<void> {
    const started = performance.now();
    const everything = this.everything;
    const ids = [...this.stale];
    const upTo = this.marked;
    this.everything = false;
    this.stale = new Set();
    try {
      if (everything) {
        // anything may have changed, also what the background reload has read already: it stops
        // at its next chunk, and this load starts over
        await this.stopBackgroundReload();
        await this.reloadAll(undefined, progress, stop);
      } else this.apply(await this.read({ ids }), ids);
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
   * The safety net: every provider read again while searches go on with what the index holds (no
   * search may wait for a full load). A chunk read before a change it then overwrites is made good
   * at once: the providers invalidated since the reload began are marked stale again as their
   * chunk is applied, so the next search re-reads them, as it would without the reload.
   */
  private reloadInBackground(): void {
    this.reloadDue = false;
    const touched = new Set<number>();
    const stop = new AbortController();
    const started = performance.now();
    const running = { touched, stop, done: Promise.resolve() };
    running.done = this.reloadAll(touched, undefined, stop.signal)
      .then(() => this.loaded(started, 'background'))
      .catch(() => {
        if (!stop.signal.aborted) this.invalidate('all'); // the next search reloads, and waits for it
      })
      .finally(() => {
        if (this.background === running) this.background = null;
      });
    this.background = running;
  }

  private async stopBackgroundReload(): Promise<void> {
    const running = this.background;
    if (!running) return;
    running.stop.abort(new Error('a full load that waits for no background reload'));
    await running.done;
  }

  /**
   * Every provider, read in chunks of LOAD_CHUNK providers, each chunk applied in place as it
   * arrives (a search in between sees some providers a little older than others, which candidates
   * tolerate: every claim re-checks under its locks). LOAD_AHEAD chunks are asked for beyond the
   * one being applied, so the database (PostgreSQL's backends, or SQLite on a thread of its
   * own) reads them meanwhile, on the machine's other cores. The event loop gets a turn between
   * chunks, so requests are answered meanwhile. Providers that are gone are dropped at the end.
   */
  private async reloadAll(touched?: Set<number>, progress?: (providers: number) => void, stop?: AbortSignal): Promise<void> {
    if (this.loadingAll) throw new Error('a second full load of the provider index at once');
    this.loadingAll = true;
    try {
      await this.readAll(touched, progress, stop);
    } finally {
      this.loadingAll = false;
    }
  }

  private async readAll(touched?: Set<number>, progress?: (providers: number) => void, stop?: AbortSignal): Promise<void> {
    const load = ++this.loads;
    this.nameOf = await readNames(this.database);
    this.shared = new SharedValues();
    const reader = this.database.openThreadReader?.();
    const ahead = LOAD_AHEAD[this.database.dialect];
    // ends[k]: where chunk k ends (chunk k is (ends[k - 1], ends[k]]; ends[0] = 0): the first
    // `ahead` found before any chunk, each later one by the chunk `ahead` chunks before it — each
    // once, so the chunks cover every id whatever is deleted meanwhile
    const ends = [0, ...(await Promise.all(Array.from({ length: ahead }, (_, k) => readChunkEnd(this.database, 0, (k + 1) * LOAD_CHUNK))))];
    const asked: Array<{ after: number; through: number; rows: Promise<PackedProviders> }> = [];
    const ask = (k: number) => {
      const chunk = { after: ends[k - 1]!, through: ends[k]! };
      const rows = this.read({ ...chunk, aheadBy: ahead * LOAD_CHUNK }, reader);
      rows.catch(() => {}); // awaited (and thrown) at its turn
      asked.push({ ...chunk, rows });
    };
    for (let k = 1; k <= ahead && ends[k - 1] !== LAST_CHUNK; k++) ask(k);
    let closing: Promise<void> | undefined;
    try {
      for (let k = 1; asked.length > 0; k++) {
        const { after, through, rows: next } = asked.shift()!;
        const rows: PackedProviders = await next;
        ends[k + ahead] = rows.ahead;
        if (ends[k + ahead - 1] !== LAST_CHUNK) ask(k + ahead);
        // the last chunk is in: the thread ends while it is applied
        if (asked.length === 0) closing = reader?.close();
        // a turn for the event loop, which also puts the next chunk's statement on the wire
        await new Promise((resolve) => setImmediate(resolve));
        stop?.throwIfAborted();
        this.apply(rows, [], load);
        progress?.(this.providers.size);
        // in the background: what changed since the reload began may be older in this chunk
        if (touched?.size) this.invalidate([...touched].filter((id) => id > after && id <= through));
      }
    } finally {
      await (closing ?? reader?.close());
    }
    // A provider made after its chunk was read is not gone: it is re-read as the change it is.
    const gone: number[] = [];
    for (const p of this.providers.values()) if (p.loadedIn !== load && !touched?.has(p.id)) gone.push(p.id);
    for (const id of gone) this.remove(id);
    if (touched?.size) this.invalidate(touched);
    this.computeSharingAnchors();
    this.structureVersion++;
  }

  /** Rows of some providers, with every class and trait they name known by name. */
  private async read(which: ProviderSelection, reader?: ThreadReader): Promise<PackedProviders> {
    const rows = await readProviders(this.database, which, reader);
    if (rows.maxClassId > this.nameOf.maxClassId || rows.maxTraitId > this.nameOf.maxTraitId) this.nameOf = await readNames(this.database);
    return rows;
  }

  /**
   * Apply rows read for some providers, synchronously: no search sees a half-applied provider. A
   * provider that keeps its place in its tree is updated in place, so what a search derived from
   * the trees (structureVersion) stays valid; a claim changes only `used`. `asked`: ids read that
   * may have been deleted. `load`: part of this full load, which works out the trees' structure
   * once at its end.
   */
  private apply(rows: PackedProviders, asked: number[], load?: number): void {
    let structureChanged = false;
    let sharingChanged = false;
    const before = new Map<number, string>(); // id → what sharing depends on, before this refresh
    const present = new Set<number>();
    for (const lines = new PackedLines(rows.providers); !lines.done; ) {
      const id = lines.int();
      const generation = lines.int();
      // "id,generation:uuid": a root
      const root = lines.endedWith(COLON);
      const parentId = root ? null : lines.int() || null;
      const rootId = root ? id : lines.int();
      const uuid = lines.text();
      if (load === undefined) present.add(id);
      let p = this.providers.get(id);
      if (p && p.parentId === parentId && p.rootId === rootId) {
        if (p.aggregates !== NONE || p.traits.has(SHARING_TRAIT)) before.set(id, sharingKey(p));
        p.generation = generation;
        p.revision++;
        for (const uuid of p.aggregates) this.members.get(uuid)?.delete(id);
      } else {
        if (p) this.remove(id);
        structureChanged = true;
        p = new IndexedProvider(id, uuid, generation, parentId, rootId);
        this.providers.set(id, p);
        this.byUuid?.set(uuid, id);
      }
      p.classes = NO_CLASSES;
      p.inventories = NO_NUMBERS;
      p.inventoryStart = 0;
      p.traits = NONE;
      p.aggregates = NONE;
      if (load !== undefined) p.loadedIn = load;
    }
    for (const id of asked) {
      if (!present.has(id) && this.providers.has(id)) {
        this.remove(id);
        structureChanged = true;
      }
    }
    this.applyInventories(rows.inventories);
    this.applyTraits(rows.traits);
    for (const lines = new PackedLines(rows.aggregates); !lines.done; ) {
      const pid = lines.int();
      const members = [lines.text()];
      while (!lines.done && lines.peekInt() === pid) {
        lines.int(); // the same provider
        members.push(lines.text());
      }
      const p = this.providers.get(pid);
      if (!p) continue;
      p.aggregates = this.shared.set([...p.aggregates, ...members].sort());
      for (const uuid of members) {
        let set = this.members.get(uuid);
        if (!set) this.members.set(uuid, (set = new Set()));
        set.add(pid);
      }
      if (!before.has(pid)) sharingChanged = true; // it had no aggregates: its trees may now be shared into
    }
    for (const [id, key] of before) {
      if (sharingKey(this.providers.get(id)!) !== key) sharingChanged = true;
    }
    if (load === undefined && (structureChanged || sharingChanged)) {
      this.computeSharingAnchors();
      this.structureVersion++;
    }
  }

  /**
   * Each provider's inventories, ordered by class id, as a stretch of one Float64Array for all of
   * these rows (its memory outside the garbage-collected heap). Rows come grouped by provider and
   * ordered by class when the scan read them through the (provider, class) index; a group out of
   * class order is put in order where it lies, and a provider whose rows came in several groups gets
   * an array of its own.
   */
  private applyInventories(text: string): void {
    let rows = text.length > 0 ? 1 : 0;
    for (let at = text.indexOf(';'); at >= 0; at = text.indexOf(';', at + 1)) rows++;
    const numbers = new Float64Array(rows * INVENTORY_WIDTH);
    let end = 0;
    const ids: number[] = [];
    const lines = new PackedLines(text);
    // the provider id of the row about to be read (0: no more rows), read once per row
    for (let next = lines.done ? 0 : lines.int(); next !== 0; ) {
      const pid = next;
      const start = end;
      ids.length = 0;
      let ordered = true;
      do {
        const cls = lines.int();
        if (ids.length > 0 && cls < ids[ids.length - 1]!) ordered = false;
        ids.push(cls);
        if (lines.endedWith(COLON)) {
          // "total,ratio,used" with the defaults: reserved 0, min_unit 1, max_unit = total, step_size 1
          const total = lines.int();
          numbers[end + TOTAL] = total;
          numbers[end + RESERVED] = 0;
          numbers[end + MIN_UNIT] = 1;
          numbers[end + MAX_UNIT] = total;
          numbers[end + STEP_SIZE] = 1;
          numbers[end + ALLOCATION_RATIO] = lines.real();
          numbers[end + USED] = lines.int();
          end += INVENTORY_WIDTH;
        } else for (let f = 0; f < INVENTORY_WIDTH; f++) numbers[end++] = f === ALLOCATION_RATIO ? lines.real() : lines.int();
        next = lines.done ? 0 : lines.int();
      } while (next === pid);
      const p = this.providers.get(pid);
      if (!p) continue;
      if (p.classes === NO_CLASSES) {
        if (!ordered) sortInventories(ids, numbers, start);
        p.classes = this.shared.list(ids, this.nameOf.classes);
        p.inventories = numbers;
        p.inventoryStart = start;
        continue;
      }
      // another group of this provider's rows, read earlier: both together, in an array of its own
      const earlier = p.classes.map((name) => [...this.nameOf.classes].find(([, n]) => n === name)![0]);
      const own = new Float64Array(p.classes.length * INVENTORY_WIDTH + end - start);
      own.set(p.inventories.subarray(p.inventoryStart, p.inventoryStart + p.classes.length * INVENTORY_WIDTH));
      own.set(numbers.subarray(start, end), p.classes.length * INVENTORY_WIDTH);
      const all = [...earlier, ...ids];
      sortInventories(all, own, 0);
      p.classes = this.shared.list(all, this.nameOf.classes);
      p.inventories = own;
      p.inventoryStart = 0;
    }
  }

  /** Each provider's traits, in trait id order (a provider's groups put together, as for inventories). */
  private applyTraits(text: string): void {
    const ids: number[] = [];
    for (const lines = new PackedLines(text); !lines.done; ) {
      const pid = lines.int();
      ids.length = 0;
      ids.push(lines.int());
      while (!lines.done && lines.peekInt() === pid) {
        lines.int(); // the same provider
        ids.push(lines.int());
      }
      const p = this.providers.get(pid);
      if (!p) continue;
      if (p.traits !== NONE) for (const name of p.traits) ids.push([...this.nameOf.traits].find(([, n]) => n === name)![0]);
      ids.sort((a, b) => a - b);
      p.traits = this.shared.set(ids.map((id) => this.nameOf.traits.get(id)!));
    }
  }

  private remove(id: number): void {
    const p = this.providers.get(id);
    if (!p) return;
    for (const uuid of p.aggregates) this.members.get(uuid)?.delete(id);
    this.byUuid?.delete(p.uuid);
    this.providers.delete(id);
  }

  /**
   * Each sharing provider → the roots of every tree with a provider in one of its aggregates
   * (its own root among them when it is in any aggregate): the trees it may complete.
   */
  private computeSharingAnchors(): void {
    this.sharingAnchors.clear();
    // only a provider in an aggregate can share: those in `members`, not every provider
    const inAggregates = new Set<number>();
    for (const ids of this.members.values()) for (const id of ids) inAggregates.add(id);
    for (const id of [...inAggregates].sort((a, b) => a - b)) {
      const p = this.providers.get(id);
      if (!p || p.aggregates === NONE || !p.traits.has(SHARING_TRAIT)) continue;
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

/**
 * The providers by id: an array indexed by id (ids are a sequence the database hands out), read in
 * id order. At a million providers a Map's hashing and growth cost a quarter of the load's
 * JavaScript; an array slot is a store.
 */
class ProviderTable implements ReadonlyMap<number, IndexedProvider> {
  private readonly slots: Array<IndexedProvider | undefined> = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): IndexedProvider | undefined {
    return this.slots[id];
  }

  has(id: number): boolean {
    return this.slots[id] !== undefined;
  }

  set(id: number, p: IndexedProvider): void {
    if (this.slots[id] === undefined) this.count++;
    this.slots[id] = p;
  }

  delete(id: number): void {
    if (this.slots[id] === undefined) return;
    this.slots[id] = undefined;
    this.count--;
  }

  values(): MapIterator<IndexedProvider> {
    return new SlotWalk(this.slots);
  }

  *keys(): MapIterator<number> {
    for (const p of this.values()) yield p.id;
  }

  *entries(): MapIterator<[number, IndexedProvider]> {
    for (const p of this.values()) yield [p.id, p];
  }

  [Symbol.iterator](): MapIterator<[number, IndexedProvider]> {
    return this.entries();
  }

  forEach(fn: (p: IndexedProvider, id: number, table: ReadonlyMap<number, IndexedProvider>) => void): void {
    for (const p of this.values()) fn(p, p.id, this);
  }
}

/**
 * The providers in a table's slots, in id order. (A generator cost ~30 ms a pass at a million
 * providers, resumed once per provider, and a full load makes three passes after its last chunk —
 * the providers gone, the sharing anchors, the search's trees — before the process is ready; this
 * ~5 ms.)
 */
class SlotWalk implements MapIterator<IndexedProvider> {
  private at = 0;
  constructor(private readonly slots: ReadonlyArray<IndexedProvider | undefined>) {}

  next(): IteratorResult<IndexedProvider, undefined> {
    const slots = this.slots;
    for (let i = this.at; i < slots.length; i++) {
      const p = slots[i];
      if (p !== undefined) {
        this.at = i + 1;
        return { value: p, done: false };
      }
    }
    this.at = slots.length;
    return { value: undefined, done: true };
  }

  [Symbol.iterator](): SlotWalk {
    return this;
  }
}

/** Put the inventories of class `ids` (INVENTORY_WIDTH numbers each, from `start`) in class id order, in place; `ids` too. */
function sortInventories(ids: number[], numbers: Float64Array, start: number): void {
  const order = ids.map((_, i) => i).sort((a, b) => ids[a]! - ids[b]!);
  const copy = numbers.slice(start, start + ids.length * INVENTORY_WIDTH);
  for (const [to, from] of order.entries()) numbers.set(copy.subarray(from * INVENTORY_WIDTH, (from + 1) * INVENTORY_WIDTH), start + to * INVENTORY_WIDTH);
  const sorted = order.map((i) => ids[i]!);
  ids.length = 0;
  ids.push(...sorted);
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What the sharing anchors depend on in one provider: its aggregates and whether it shares. */
function sharingKey(p: IndexedProvider): string {
  if (p.aggregates.size === 0) return '';
  return `${p.traits.has(SHARING_TRAIT)}:${[...p.aggregates].sort().join(',')}`;
}

/**
 * One copy of each class list and each set of names that providers have: most providers of a
 * cloud have the same classes and the same traits, and a Set per provider cost ~100 bytes. Copies
 * are never changed (a provider's change takes another copy).
 */
class SharedValues {
  private readonly lists = new Map<string, readonly string[]>();
  private readonly sets = new Map<string, ReadonlySet<string>>();
  /** the last copy handed out, checked first: neighbours are often alike */
  private lastList: { ids: number[]; list: readonly string[] } | null = null;

  /** The names of these ids (their order kept), shared. */
  list(ids: readonly number[], names: ReadonlyMap<number, string>): readonly string[] {
    const last = this.lastList;
    if (last && sameIds(last.ids, ids)) return last.list;
    const key = ids.join(',');
    let list = this.lists.get(key);
    if (!list) this.lists.set(key, (list = ids.map((id) => names.get(id)!)));
    this.lastList = { ids: [...ids], list };
    return list;
  }

  /** A set of these names, shared. */
  set(names: readonly string[]): ReadonlySet<string> {
    if (names.length === 0) return NONE;
    const key = names.join(',');
    let set = this.sets.get(key);
    if (!set) this.sets.set(key, (set = new Set(names)));
    return set;
  }
}
