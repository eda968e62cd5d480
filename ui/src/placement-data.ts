// What the capacity and consumer views show, read from the Placement API as a client reads it.
//
// Placement has no bulk endpoint for inventories and allocations, so the dashboard keeps each
// provider's details (inventories + allocations: two GETs) and re-reads them only when the
// provider's generation moved: every change to what a provider offers or holds bumps it. Each
// refresh is one `GET /resource_providers` plus the details of the providers that changed, read
// six at a time for at most DETAIL_BUDGET_MS; what is left waits for the next refresh (the page
// says how many are still loading). On an idle cloud of any size a refresh is one request.
//
// Consumers are gathered from the providers' allocations. Their project, user and type come from
// `GET /allocations/{consumer}`, read (for the consumers view only) within the same time budget,
// largest consumers first, and again only when what the consumer holds changed. Whether a consumer
// is a service instance's (the capacity an instance reserves is the consumer of the instance's id)
// comes from the identifier API's list of instances, read when consumers appear that it has not
// classified, at most every INSTANCES_LIST_EVERY_MS (not one request per consumer: most consumers
// are no instance's, and a 404 each would fill the browser's console). An identifier API that
// refuses the token (403) is not asked again with it; one that fails otherwise, a minute later;
// Placement's figures never wait for it.
import type { Api } from './api.js';
import { ApiError } from './api.js';
import { loadInstances } from './instances-data.js';

/** a browser opens at most six HTTP/1.1 connections to one server */
const DETAIL_CONCURRENCY = 6;
const DETAIL_BUDGET_MS = 1500;
/**
 * While details are still being read (the first load of a large cloud), loads follow each other
 * at once; the provider list (1.8 MB at 3 000 providers) is then read again only this often.
 */
const LIST_MAX_AGE_MS = 5000;
/** how often new consumers may make the identifier API's instances be listed again */
const INSTANCES_LIST_EVERY_MS = 15_000;
/** after the identifier API failed (but for a 403: never again with this token), how long until it is asked again */
const IDS_RETRY_MS = 60_000;

interface ListedProvider {
  uuid: string;
  name: string;
  generation: number;
  parent_provider_uuid: string | null;
  root_provider_uuid: string;
}

export interface Inventory {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

interface ProviderDetail {
  /** the generation these details were read at; -1 when the two reads disagreed (read again) */
  generation: number;
  inventories: Record<string, Inventory>;
  /** consumer uuid → resource class → amount */
  allocations: Record<string, Record<string, number>>;
}

interface CachedProvider extends ListedProvider {
  detail: ProviderDetail | null;
}

/** One resource class of one provider (or summed over several). */
export interface ClassUse {
  /** sum of total */
  total: number;
  reserved: number;
  /** (total − reserved): what the hardware has for consumers */
  physical: number;
  /** (total − reserved) × allocation_ratio: what may be allocated */
  capacity: number;
  used: number;
  /** lowest and highest allocation_ratio among the inventories summed */
  minRatio: number;
  maxRatio: number;
}

export interface ProviderView {
  uuid: string;
  name: string;
  parent: string | null;
  root: string;
  generation: number;
  classes: Record<string, ClassUse>;
  /** used / capacity of its fullest class; null without inventory or details */
  load: number | null;
  /** the class `load` comes from */
  loadClass: string | null;
}

export interface TreeView {
  root: ProviderView;
  members: ProviderView[];
  classes: Record<string, ClassUse>;
  load: number | null;
  loadClass: string | null;
}

export interface ConsumerView {
  uuid: string;
  /** per provider: what the consumer holds there */
  holdings: Array<{ provider: ProviderView; resources: Record<string, number> }>;
  totals: Record<string, number>;
  /** its largest share of the cloud's capacity of any class (0..1) */
  share: number;
  shareClass: string | null;
  /** changes whenever what the consumer holds changes */
  signature: string;
  /** from GET /allocations/{consumer}; null until read */
  owner: ConsumerOwner | null;
  /** the service instance whose capacity this consumer is (its id); null: none, or not known */
  instance: string | null;
}

export interface ConsumerOwner {
  project_id: string | null;
  user_id: string | null;
  consumer_type: string | null;
  consumer_generation: number | null;
}

export interface PlacementSnapshot {
  providers: ProviderView[];
  /** resource class → sum over every provider: VCPU, PCPU, MEMORY_MB, DISK_GB, then by name */
  classes: Array<[string, ClassUse]>;
  trees: TreeView[];
  consumers: ConsumerView[];
  /** providers whose details are not loaded yet, or older than their generation */
  pending: number;
  /** consumers whose project and user are not read yet (when asked for) */
  ownersPending: number;
  /** the load stopped at its time budget with details left unread: the next should follow at once */
  unfinished: boolean;
}

export class PlacementCache {
  private readonly providers = new Map<string, CachedProvider>();
  private listedAt = -Infinity;
  private unfinished = false;
  /** consumer uuid → its owner, as read when it held `signature` */
  private readonly owners = new Map<string, { signature: string; owner: ConsumerOwner }>();
  /** consumer uuid → the service instance it is, or null (classified once: a consumer never becomes another's) */
  private readonly instances = new Map<string, string | null>();
  /** when the identifier API may be asked next: INSTANCES_LIST_EVERY_MS after a list, never after a 403, a while after a failure */
  private idsAskableAt = 0;

  /** `withOwners`: also read the project, user and type of consumers (the consumers view). */
  async refresh(api: Api, signal: AbortSignal, withOwners = false): Promise<PlacementSnapshot> {
    if (!this.unfinished || performance.now() - this.listedAt > LIST_MAX_AGE_MS) {
      this.listedAt = performance.now();
      const listed = (await api.get<{ resource_providers: ListedProvider[] }>('placement', '/resource_providers', signal)).body.resource_providers;
      const seen = new Set<string>();
      for (const p of listed) {
        seen.add(p.uuid);
        const cached = this.providers.get(p.uuid);
        this.providers.set(p.uuid, { ...p, detail: cached?.detail ?? null });
      }
      for (const uuid of [...this.providers.keys()]) if (!seen.has(uuid)) this.providers.delete(uuid);
    }

    const deadline = performance.now() + DETAIL_BUDGET_MS;
    const stale = [...this.providers.values()].filter((p) => p.detail?.generation !== p.generation);
    const detailsRead = await untilDeadline(stale, deadline, signal, async (p) => {
      const detail = await readDetail(api, p.uuid, signal);
      const cached = this.providers.get(p.uuid);
      if (detail === 'gone') this.providers.delete(p.uuid);
      else if (cached) {
        cached.detail = detail;
        // read after the list: the provider changed meanwhile, and these details are the newer truth
        if (detail.generation > cached.generation) cached.generation = detail.generation;
      }
    });
    const snapshot = summarize([...this.providers.values()]);
    this.unfinished = detailsRead < stale.length;
    if (!withOwners) return { ...snapshot, unfinished: this.unfinished };

    const current = new Set(snapshot.consumers.map((c) => c.uuid));
    for (const map of [this.owners, this.instances]) for (const uuid of [...map.keys()]) if (!current.has(uuid)) map.delete(uuid);
    const unknown = snapshot.consumers.filter((c) => this.owners.get(c.uuid)?.signature !== c.signature);
    const [ownersRead] = await Promise.all([
      untilDeadline(unknown, deadline, signal, (c) => this.readOwner(api, c, signal)),
      this.classify(api, snapshot.consumers, signal),
    ]);
    let ownersPending = 0;
    for (const c of snapshot.consumers) {
      const known = this.owners.get(c.uuid);
      c.owner = known?.owner ?? null;
      c.instance = this.instances.get(c.uuid) ?? null;
      if (known?.signature !== c.signature) ownersPending++;
    }
    this.unfinished ||= ownersRead < unknown.length;
    return { ...snapshot, ownersPending, unfinished: this.unfinished };
  }

  private async readOwner(api: Api, c: ConsumerView, signal: AbortSignal): Promise<void> {
    try {
      const { body } = await api.get<ConsumerOwner>('placement', `/allocations/${c.uuid}`, signal);
      this.owners.set(c.uuid, {
        signature: c.signature,
        owner: { project_id: body.project_id, user_id: body.user_id, consumer_type: body.consumer_type, consumer_generation: body.consumer_generation },
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
  }

  /**
   * Which consumers not yet classified are service instances': the instances the identifier API
   * lists now (read after the consumers, so an instance's consumer seen is in the list). Nothing
   * is learnt when it cannot say.
   */
  private async classify(api: Api, consumers: ConsumerView[], signal: AbortSignal): Promise<void> {
    const unknown = consumers.filter((c) => !this.instances.has(c.uuid));
    const now = performance.now();
    if (unknown.length === 0 || now < this.idsAskableAt) return;
    this.idsAskableAt = now + INSTANCES_LIST_EVERY_MS;
    try {
      const ids = new Set((await loadInstances(api, signal)).instances.map((i) => i.id));
      for (const c of unknown) this.instances.set(c.uuid, ids.has(c.uuid) ? c.uuid : null);
    } catch (err) {
      if (signal.aborted) throw err;
      this.idsAskableAt = err instanceof ApiError && err.status === 403 ? Infinity : performance.now() + IDS_RETRY_MS;
    }
  }
}

/** Work through `items`, DETAIL_CONCURRENCY at a time, starting none after `deadline`; how many were. */
async function untilDeadline<T>(items: T[], deadline: number, signal: AbortSignal, work: (item: T) => Promise<void>): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && performance.now() < deadline && !signal.aborted) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: DETAIL_CONCURRENCY }, worker));
  return next;
}

async function readDetail(api: Api, uuid: string, signal: AbortSignal): Promise<ProviderDetail | 'gone'> {
  try {
    const [inv, alloc] = await Promise.all([
      api.get<{ resource_provider_generation: number; inventories: Record<string, Inventory> }>('placement', `/resource_providers/${uuid}/inventories`, signal),
      api.get<{ resource_provider_generation: number; allocations: Record<string, { resources: Record<string, number> }> }>(
        'placement',
        `/resource_providers/${uuid}/allocations`,
        signal,
      ),
    ]);
    const allocations: ProviderDetail['allocations'] = {};
    for (const [consumer, a] of Object.entries(alloc.body.allocations)) allocations[consumer] = a.resources;
    const same = inv.body.resource_provider_generation === alloc.body.resource_provider_generation;
    return { generation: same ? inv.body.resource_provider_generation : -1, inventories: inv.body.inventories, allocations };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return 'gone';
    throw err;
  }
}

/** The classes every cloud has come first, in the order operators name them; the rest by name. */
const CLASS_ORDER = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'];
function classRank(rc: string): number {
  const i = CLASS_ORDER.indexOf(rc);
  return i < 0 ? CLASS_ORDER.length : i;
}

function emptyUse(): ClassUse {
  return { total: 0, reserved: 0, physical: 0, capacity: 0, used: 0, minRatio: Infinity, maxRatio: 0 };
}

function addUse(into: ClassUse, u: ClassUse): void {
  into.total += u.total;
  into.reserved += u.reserved;
  into.physical += u.physical;
  into.capacity += u.capacity;
  into.used += u.used;
  into.minRatio = Math.min(into.minRatio, u.minRatio);
  into.maxRatio = Math.max(into.maxRatio, u.maxRatio);
}

function loadOf(classes: Record<string, ClassUse>): { load: number | null; loadClass: string | null } {
  let load: number | null = null;
  let loadClass: string | null = null;
  for (const [rc, u] of Object.entries(classes)) {
    const l = u.capacity > 0 ? u.used / u.capacity : u.used > 0 ? Infinity : 0;
    if (load === null || l > load) {
      load = l;
      loadClass = rc;
    }
  }
  return { load, loadClass };
}

export function summarize(cached: CachedProvider[]): PlacementSnapshot {
  const providers: ProviderView[] = [];
  const byUuid = new Map<string, ProviderView>();
  let pending = 0;
  for (const p of cached) {
    if (p.detail?.generation !== p.generation) pending++;
    const classes: Record<string, ClassUse> = {};
    if (p.detail) {
      const used: Record<string, number> = {};
      for (const resources of Object.values(p.detail.allocations)) for (const [rc, n] of Object.entries(resources)) used[rc] = (used[rc] ?? 0) + n;
      for (const [rc, inv] of Object.entries(p.detail.inventories)) {
        const physical = inv.total - inv.reserved;
        // Placement's capacity: int((total - reserved) * allocation_ratio)
        classes[rc] = {
          total: inv.total,
          reserved: inv.reserved,
          physical,
          capacity: Math.floor(physical * inv.allocation_ratio),
          used: used[rc] ?? 0,
          minRatio: inv.allocation_ratio,
          maxRatio: inv.allocation_ratio,
        };
      }
    }
    const view: ProviderView = {
      uuid: p.uuid,
      name: p.name,
      parent: p.parent_provider_uuid,
      root: p.root_provider_uuid,
      generation: p.generation,
      classes,
      ...loadOf(classes),
    };
    providers.push(view);
    byUuid.set(p.uuid, view);
  }

  const totals: Record<string, ClassUse> = {};
  for (const p of providers) for (const [rc, u] of Object.entries(p.classes)) addUse((totals[rc] ??= emptyUse()), u);
  const classes = Object.entries(totals).sort((a, b) => classRank(a[0]) - classRank(b[0]) || a[0].localeCompare(b[0]));

  const treeMembers = new Map<string, ProviderView[]>();
  for (const p of providers) {
    const list = treeMembers.get(p.root);
    if (list) list.push(p);
    else treeMembers.set(p.root, [p]);
  }
  const trees: TreeView[] = [];
  for (const [rootUuid, members] of treeMembers) {
    const root = byUuid.get(rootUuid) ?? members[0]!;
    const sums: Record<string, ClassUse> = {};
    for (const m of members) for (const [rc, u] of Object.entries(m.classes)) addUse((sums[rc] ??= emptyUse()), u);
    const l = loadOf(sums);
    trees.push({ root, members, classes: sums, load: Object.keys(sums).length ? l.load : null, loadClass: l.loadClass });
  }

  const consumers = new Map<string, ConsumerView>();
  for (const p of cached) {
    if (!p.detail) continue;
    const provider = byUuid.get(p.uuid)!;
    for (const [uuid, resources] of Object.entries(p.detail.allocations)) {
      let c = consumers.get(uuid);
      if (!c) consumers.set(uuid, (c = { uuid, holdings: [], totals: {}, share: 0, shareClass: null, signature: '', owner: null, instance: null }));
      c.holdings.push({ provider, resources });
      for (const [rc, n] of Object.entries(resources)) c.totals[rc] = (c.totals[rc] ?? 0) + n;
    }
  }
  for (const c of consumers.values()) {
    for (const [rc, n] of Object.entries(c.totals)) {
      const cap = totals[rc]?.capacity ?? 0;
      const share = cap > 0 ? n / cap : 0;
      if (share >= c.share) {
        c.share = share;
        c.shareClass = rc;
      }
    }
    c.holdings.sort((a, b) => a.provider.name.localeCompare(b.provider.name));
    c.signature = JSON.stringify(c.holdings.map((h) => [h.provider.uuid, h.resources]));
  }

  return {
    providers,
    classes,
    trees,
    consumers: [...consumers.values()].sort((a, b) => b.share - a.share || a.uuid.localeCompare(b.uuid)),
    pending,
    ownersPending: 0,
    unfinished: false,
  };
}
