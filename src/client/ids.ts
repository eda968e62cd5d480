// A typed client of allot's identifier API (`/ids/v1`): pools, allocations (for an owner, in
// batches, imports), allocation specs, service instances and the outbox. Versions are ETags:
// pass `ifMatch` to make a change conditional on the version read.
import { type CallOptions, type ClientOptions, HttpTransport, type Query, segment as seg } from './http.js';
import type * as T from './ids-types.js';

export interface IdsClientOptions extends Omit<ClientOptions, 'url'> {
  /** the identifier API's mount, e.g. `http://127.0.0.1:8778/ids` (paths add `/v1/…`) */
  endpoint: string;
}

/** Most items one import request carries (the API's limit). */
export const IMPORT_MAX_ITEMS = 100_000;
/** Most allocations one batch request carries (the API's limit). */
export const BATCH_MAX_ITEMS = 100;

const guard = (g?: T.Guard): Record<string, string> => (g?.ifMatch !== undefined ? { 'if-match': `"${g.ifMatch}"` } : {});
const releaseQuery = (options?: T.ReleaseOptions) => (options?.force ? { force: 'true' } : {});

export class IdsClient {
  readonly http: HttpTransport;

  constructor(options: IdsClientOptions) {
    this.http = new HttpTransport('ids', options.endpoint, options);
  }

  async call<R = unknown>(method: string, path: string, options: CallOptions = {}) {
    return this.http.call<R>(method, `/v1${path}`, options);
  }

  private async body<R>(method: string, path: string, options?: CallOptions): Promise<R> {
    return (await this.call<R>(method, path, options)).body;
  }

  /** Every item of a paginated list (its page: `P`), following `next_cursor`. */
  async listAll<P extends T.Page>(path: string, query: Query = {}): Promise<Array<P['items'][number]>> {
    const out: Array<P['items'][number]> = [];
    for await (const item of this.iterate<P>(path, query)) out.push(item);
    return out;
  }

  /** The items of a paginated list (its page: `P`) one by one, fetching pages as needed. */
  async *iterate<P extends T.Page>(path: string, query: Query = {}): AsyncGenerator<P['items'][number]> {
    let cursor: string | null = null;
    do {
      const page: P = await this.body<P>('GET', path, { query: { ...query, cursor: cursor ?? undefined } });
      yield* page.items;
      cursor = page.next_cursor;
    } while (cursor);
  }

  // ---- pools --------------------------------------------------------------------------------

  listPools(query: T.PageQuery & { kind?: T.PoolKind } = {}): Promise<T.PoolPage> {
    return this.body('GET', '/pools', { query: { ...query } });
  }

  listAllPools(query: { kind?: T.PoolKind } = {}): Promise<T.Pool[]> {
    return this.listAll<T.PoolPage>('/pools', { ...query });
  }

  getPool(name: string): Promise<T.Pool> {
    return this.body('GET', `/pools/${seg(name)}`);
  }

  /** Create a pool (the same definition again answers the existing pool). */
  createPool(pool: T.PoolCreate): Promise<T.Pool> {
    return this.body('POST', '/pools', { body: pool });
  }

  updatePool(name: string, update: T.PoolUpdate, g?: T.Guard): Promise<T.Pool> {
    return this.body('PATCH', `/pools/${seg(name)}`, { body: update, headers: guard(g) });
  }

  async deletePool(name: string, g?: T.Guard): Promise<void> {
    await this.call('DELETE', `/pools/${seg(name)}`, { headers: guard(g) });
  }

  listFreeRanges(pool: string, query: T.PageQuery & { band?: 'auto' | 'static' } = {}): Promise<T.FreeRangePage> {
    return this.body('GET', `/pools/${seg(pool)}/free-ranges`, { query: { ...query } });
  }

  listAllFreeRanges(pool: string, query: { band?: 'auto' | 'static' } = {}): Promise<T.FreeRange[]> {
    return this.listAll<T.FreeRangePage>(`/pools/${seg(pool)}/free-ranges`, { ...query });
  }

  listPoolAllocations(pool: string, query: T.PoolAllocationListQuery = {}): Promise<T.AllocationPage> {
    return this.body('GET', `/pools/${seg(pool)}/allocations`, { query: { ...query } });
  }

  listAllPoolAllocations(pool: string, query: Omit<T.PoolAllocationListQuery, 'cursor'> = {}): Promise<T.Allocation[]> {
    return this.listAll<T.AllocationPage>(`/pools/${seg(pool)}/allocations`, { ...query });
  }

  /**
   * Who holds a value: the allocation of the pool whose block holds it (none: an empty list), as
   * the pool's kind writes values (105, "10.0.0.5", "10.0.1.0/24"). A prefix may find several:
   * the blocks holding part of it.
   */
  allocationsHolding(pool: string, value: T.Value): Promise<T.Allocation[]> {
    return this.listAllPoolAllocations(pool, { value });
  }

  /**
   * Import values already in use (at most IMPORT_MAX_ITEMS per call). `abort` (default): any
   * conflict imports nothing (409 ids.import_conflicts, `body.conflicts` lists them); `skip`:
   * the rest is imported and the conflicts are listed in the outcome.
   */
  importValues(pool: string, items: T.ImportItem[], onConflict: 'abort' | 'skip' = 'abort'): Promise<T.ImportOutcome> {
    return this.body('POST', `/pools/${seg(pool)}/imports`, { body: { items, on_conflict: onConflict } });
  }

  // ---- allocations --------------------------------------------------------------------------

  /**
   * Allocate a value for an owner from a pool. Idempotent: the same owner and purpose asking
   * again get the allocation they hold (`created` false).
   */
  async allocate(pool: string, request: T.AllocationRequest & { dry_run?: boolean }): Promise<T.Allocation & { created: boolean }> {
    const res = await this.call<T.Allocation>('POST', `/pools/${seg(pool)}/allocations`, { body: request });
    return { ...res.body, created: res.status === 201 };
  }

  /** Several values from several pools, all or nothing (at most BATCH_MAX_ITEMS). */
  allocateBatch(items: T.BatchItem[], options: { dryRun?: boolean } = {}): Promise<T.Batch> {
    return this.body('POST', '/allocations', { body: { allocations: items, ...(options.dryRun ? { dry_run: true } : {}) } });
  }

  listAllocations(query: T.AllocationListQuery = {}): Promise<T.AllocationPage> {
    return this.body('GET', '/allocations', { query: { ...query } });
  }

  listAllAllocations(query: Omit<T.AllocationListQuery, 'cursor'> = {}): Promise<T.Allocation[]> {
    return this.listAll<T.AllocationPage>('/allocations', { ...query });
  }

  getAllocation(id: string): Promise<T.Allocation> {
    return this.body('GET', `/allocations/${seg(id)}`);
  }

  /** Confirm a reservation, extend its lease or replace its metadata. */
  updateAllocation(id: string, update: T.AllocationUpdate, g?: T.Guard): Promise<T.Allocation> {
    return this.body('PATCH', `/allocations/${seg(id)}`, { body: update, headers: guard(g) });
  }

  /** Release: the value is free again at once. */
  async releaseAllocation(id: string, options?: T.ReleaseOptions): Promise<void> {
    await this.call('DELETE', `/allocations/${seg(id)}`, { headers: guard(options), query: releaseQuery(options) });
  }

  /**
   * Release the allocation of a pool whose value is `value`, as the allocation writes it (its
   * first value, or its prefix); a value inside a larger block is a 404 naming that block.
   */
  async releaseAllocationByValue(pool: string, value: T.Value, options?: T.ReleaseOptions): Promise<void> {
    await this.call('DELETE', `/pools/${seg(pool)}/allocations`, { headers: guard(options), query: { value, ...releaseQuery(options) } });
  }

  // ---- allocation specs ---------------------------------------------------------------------

  listSpecs(query: T.PageQuery = {}): Promise<T.SpecPage> {
    return this.body('GET', '/allocation-specs', { query: { ...query } });
  }

  listAllSpecs(): Promise<T.Spec[]> {
    return this.listAll<T.SpecPage>('/allocation-specs');
  }

  getSpec(name: string): Promise<T.Spec> {
    return this.body('GET', `/allocation-specs/${seg(name)}`);
  }

  createSpec(spec: T.SpecCreate): Promise<T.Spec> {
    return this.body('POST', '/allocation-specs', { body: spec });
  }

  async deleteSpec(name: string, g?: T.Guard): Promise<void> {
    await this.call('DELETE', `/allocation-specs/${seg(name)}`, { headers: guard(g) });
  }

  // ---- service instances --------------------------------------------------------------------

  listInstances(query: T.InstanceListQuery = {}): Promise<T.InstancePage> {
    return this.body('GET', '/service-instances', { query: { ...query } });
  }

  listAllInstances(query: Omit<T.InstanceListQuery, 'cursor'> = {}): Promise<T.Instance[]> {
    return this.listAll<T.InstancePage>('/service-instances', { ...query });
  }

  getInstance(id: string): Promise<T.Instance> {
    return this.body('GET', `/service-instances/${seg(id)}`);
  }

  /**
   * Create a service instance; with `validate: true` it also reserves every attribute (pool
   * values, nodes, capacity), all or nothing, and with `promote: true` makes them active — one
   * request, idempotent by `id`.
   */
  createInstance(instance: T.InstanceCreate): Promise<T.Instance> {
    return this.body('POST', '/service-instances', { body: instance });
  }

  /** A holding's `href` (a path from the server's root: `/ids/v1/…`, `/baremetal/v1/…`, `/placement/…`) as a full URL. */
  holdingUrl(href: string): string {
    return `${this.http.endpoint.replace(/\/ids$/, '')}${href}`;
  }

  /** Merge-patch the candidate attributes (a null value removes one). */
  updateInstance(id: string, attributes: Record<string, unknown>, g?: T.Guard): Promise<T.Instance> {
    return this.body('PATCH', `/service-instances/${seg(id)}`, { body: { attributes }, headers: guard(g) });
  }

  /** Allocate and look up into the candidate set. */
  validateInstance(id: string, g?: T.Guard): Promise<T.Instance> {
    return this.body('POST', `/service-instances/${seg(id)}/validate`, { headers: guard(g) });
  }

  /** Candidate → active, active → rollback. */
  promoteInstance(id: string, g?: T.Guard): Promise<T.Instance> {
    return this.body('POST', `/service-instances/${seg(id)}/promote`, { headers: guard(g) });
  }

  rollbackInstance(id: string, g?: T.Guard): Promise<T.Instance> {
    return this.body('POST', `/service-instances/${seg(id)}/rollback`, { headers: guard(g) });
  }

  clearAttributeSet(id: string, set: 'candidate' | 'rollback', g?: T.Guard): Promise<T.Instance> {
    return this.body('DELETE', `/service-instances/${seg(id)}/attribute-sets/${set}`, { headers: guard(g) });
  }

  /** Terminate: every value is released (external ones through the outbox). */
  terminateInstance(id: string, g?: T.Guard): Promise<T.Instance> {
    return this.body('DELETE', `/service-instances/${seg(id)}`, { headers: guard(g) });
  }

  // ---- inventories and outbox ---------------------------------------------------------------

  async listInventories(): Promise<T.Inventory[]> {
    return (await this.body<T.InventoryPage>('GET', '/inventories')).items;
  }

  listOutbox(query: T.PageQuery & { state?: 'pending' | 'done'; instance?: string } = {}): Promise<T.OutboxPage> {
    return this.body('GET', '/outbox', { query: { ...query } });
  }

  listAllOutbox(query: { state?: 'pending' | 'done'; instance?: string } = {}): Promise<T.OutboxEntry[]> {
    return this.listAll<T.OutboxPage>('/outbox', { ...query });
  }

  getOutboxEntry(id: number): Promise<T.OutboxEntry> {
    return this.body('GET', `/outbox/${id}`);
  }

  /** Make a pending entry due now. */
  retryOutboxEntry(id: number): Promise<T.OutboxEntry> {
    return this.body('POST', `/outbox/${id}/retry`);
  }

  /** The API's OpenAPI 3.1 document. */
  openapi(): Promise<Record<string, unknown>> {
    return this.body('GET', '/openapi.json');
  }
}
