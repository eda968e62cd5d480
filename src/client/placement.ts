// A typed client of the Placement API (allot's, or any OpenStack Placement). It negotiates the
// microversion (the newest both sides know, unless the caller pins one), sends the token, and
// returns generations with everything that has one, so a caller can write back what it read.
import { AllotApiError } from './errors.js';
import { type CallOptions, type ClientOptions, HttpTransport, compareVersions, segment as seg } from './http.js';
import type * as T from './placement-types.js';
import { type RetryOptions, retryOnConflict } from './retry.js';

/** The newest Placement microversion this client knows the bodies of. */
export const PLACEMENT_MAX_VERSION = '1.39';

export interface PlacementClientOptions extends Omit<ClientOptions, 'url'> {
  /** the Placement endpoint, e.g. `http://127.0.0.1:8778/placement` */
  endpoint: string;
  /** use this microversion instead of negotiating one */
  microversion?: string;
}

export class PlacementClient {
  readonly http: HttpTransport;
  private negotiated: Promise<string> | null = null;

  constructor(private readonly options: PlacementClientOptions) {
    this.http = new HttpTransport('placement', options.endpoint, options);
  }

  /** The same client at another microversion (pinned). */
  at(microversion: string): PlacementClient {
    return new PlacementClient({ ...this.options, microversion });
  }

  /** The microversion requests use: the pinned one, or min(server's max_version, PLACEMENT_MAX_VERSION). */
  microversion(): Promise<string> {
    if (this.options.microversion) return Promise.resolve(this.options.microversion);
    this.negotiated ??= this.versions().then(
      (doc) => {
        const max = doc.versions[0]?.max_version;
        if (!max)
          throw new AllotApiError(0, 'client.bad_response', 'the Placement root document names no max_version', null, 'placement', {
            method: 'GET',
            url: `${this.http.endpoint}/`,
          });
        return compareVersions(max, PLACEMENT_MAX_VERSION) < 0 ? max : PLACEMENT_MAX_VERSION;
      },
      (err: unknown) => {
        this.negotiated = null; // try again on the next call
        throw err;
      },
    );
    return this.negotiated;
  }

  /** GET /: the versions document (no microversion, no token needed). */
  versions(): Promise<T.PlacementVersions> {
    return this.http.get<T.PlacementVersions>('/');
  }

  /** Any Placement call at the negotiated microversion; the typed methods below use it. */
  async call<R = unknown>(method: string, path: string, options: CallOptions = {}) {
    const mv = await this.microversion();
    return this.http.call<R>(method, path, { ...options, headers: { 'openstack-api-version': `placement ${mv}`, ...options.headers } });
  }

  private async body<R>(method: string, path: string, options?: CallOptions): Promise<R> {
    return (await this.call<R>(method, path, options)).body;
  }

  // ---- resource providers -------------------------------------------------------------------

  async listProviders(query: T.ProviderListQuery = {}): Promise<T.ResourceProvider[]> {
    return (await this.body<T.ResourceProviderList>('GET', '/resource_providers', { query: { ...query } })).resource_providers;
  }

  getProvider(uuid: string): Promise<T.ResourceProvider> {
    return this.body('GET', `/resource_providers/${seg(uuid)}`);
  }

  /** Create a provider; answers it (1.20+ returns the body; before, it is read back). */
  async createProvider(provider: T.ProviderCreate): Promise<T.ResourceProvider> {
    const res = await this.call<T.ResourceProvider | undefined>('POST', '/resource_providers', { body: provider });
    if (res.body) return res.body;
    const location = res.headers.get('location') ?? '';
    return this.getProvider(provider.uuid ?? location.slice(location.lastIndexOf('/') + 1));
  }

  updateProvider(uuid: string, update: T.ProviderUpdate): Promise<T.ResourceProvider> {
    return this.body('PUT', `/resource_providers/${seg(uuid)}`, { body: update });
  }

  async deleteProvider(uuid: string): Promise<void> {
    await this.call('DELETE', `/resource_providers/${seg(uuid)}`);
  }

  // ---- inventories ----------------------------------------------------------------------------

  getInventories(uuid: string): Promise<T.Inventories> {
    return this.body('GET', `/resource_providers/${seg(uuid)}/inventories`);
  }

  /** Replace every inventory of the provider, naming the generation it was read at. */
  setInventories(uuid: string, generation: number, inventories: Record<string, T.Inventory>): Promise<T.Inventories> {
    return this.body('PUT', `/resource_providers/${seg(uuid)}/inventories`, { body: { resource_provider_generation: generation, inventories } });
  }

  getInventory(uuid: string, resourceClass: string): Promise<T.InventoryWithGeneration> {
    return this.body('GET', `/resource_providers/${seg(uuid)}/inventories/${seg(resourceClass)}`);
  }

  /** Add one inventory (POST; 409 when the class already has one). */
  addInventory(uuid: string, generation: number, resourceClass: string, inventory: T.Inventory): Promise<T.InventoryWithGeneration> {
    return this.body('POST', `/resource_providers/${seg(uuid)}/inventories`, {
      body: { resource_class: resourceClass, resource_provider_generation: generation, ...inventory },
    });
  }

  /** Create or replace one inventory. */
  setInventory(uuid: string, generation: number, resourceClass: string, inventory: T.Inventory): Promise<T.InventoryWithGeneration> {
    return this.body('PUT', `/resource_providers/${seg(uuid)}/inventories/${seg(resourceClass)}`, {
      body: { resource_provider_generation: generation, ...inventory },
    });
  }

  async deleteInventory(uuid: string, resourceClass: string): Promise<void> {
    await this.call('DELETE', `/resource_providers/${seg(uuid)}/inventories/${seg(resourceClass)}`);
  }

  /** Delete every inventory of the provider (1.5+). */
  async deleteInventories(uuid: string): Promise<void> {
    await this.call('DELETE', `/resource_providers/${seg(uuid)}/inventories`);
  }

  /** Read, change and write back the inventories, again on a generation conflict. */
  updateInventories(uuid: string, change: (current: Record<string, T.Inventory>) => Record<string, T.Inventory>, retry?: RetryOptions): Promise<T.Inventories> {
    return retryOnConflict(async () => {
      const current = await this.getInventories(uuid);
      return this.setInventories(uuid, current.resource_provider_generation, change({ ...current.inventories }));
    }, retry);
  }

  // ---- usages -------------------------------------------------------------------------------

  getProviderUsages(uuid: string): Promise<T.ProviderUsages> {
    return this.body('GET', `/resource_providers/${seg(uuid)}/usages`);
  }

  /** GET /usages (1.9+): what a project (and user, consumer type) holds. */
  getUsages(query: T.UsagesQuery): Promise<T.TotalUsages> {
    return this.body('GET', '/usages', { query: { ...query } });
  }

  // ---- aggregates ---------------------------------------------------------------------------

  getAggregates(uuid: string): Promise<T.ProviderAggregates> {
    return this.body('GET', `/resource_providers/${seg(uuid)}/aggregates`);
  }

  /** Replace the provider's aggregates (1.19+ naming the generation it was read at). */
  setAggregates(uuid: string, generation: number | undefined, aggregates: string[]): Promise<T.ProviderAggregates> {
    const body = generation === undefined ? aggregates : { aggregates, resource_provider_generation: generation };
    return this.body('PUT', `/resource_providers/${seg(uuid)}/aggregates`, { body });
  }

  updateAggregates(uuid: string, change: (current: string[]) => string[], retry?: RetryOptions): Promise<T.ProviderAggregates> {
    return retryOnConflict(async () => {
      const current = await this.getAggregates(uuid);
      return this.setAggregates(uuid, current.resource_provider_generation, change([...current.aggregates]));
    }, retry);
  }

  // ---- traits -------------------------------------------------------------------------------

  async listTraits(query: T.TraitListQuery = {}): Promise<string[]> {
    return (await this.body<T.TraitList>('GET', '/traits', { query: { ...query } })).traits;
  }

  /** Does the trait exist? */
  async traitExists(name: string): Promise<boolean> {
    try {
      await this.call('GET', `/traits/${seg(name)}`);
      return true;
    } catch (err) {
      if (err instanceof AllotApiError && err.status === 404) return false;
      throw err;
    }
  }

  /** Create a custom trait (CUSTOM_…); `created` false when it existed. */
  async createTrait(name: string): Promise<{ created: boolean }> {
    return { created: (await this.call('PUT', `/traits/${seg(name)}`)).status === 201 };
  }

  async deleteTrait(name: string): Promise<void> {
    await this.call('DELETE', `/traits/${seg(name)}`);
  }

  getProviderTraits(uuid: string): Promise<T.ProviderTraits> {
    return this.body('GET', `/resource_providers/${seg(uuid)}/traits`);
  }

  setProviderTraits(uuid: string, generation: number, traits: string[]): Promise<T.ProviderTraits> {
    return this.body('PUT', `/resource_providers/${seg(uuid)}/traits`, { body: { traits, resource_provider_generation: generation } });
  }

  async deleteProviderTraits(uuid: string): Promise<void> {
    await this.call('DELETE', `/resource_providers/${seg(uuid)}/traits`);
  }

  updateProviderTraits(uuid: string, change: (current: string[]) => string[], retry?: RetryOptions): Promise<T.ProviderTraits> {
    return retryOnConflict(async () => {
      const current = await this.getProviderTraits(uuid);
      return this.setProviderTraits(uuid, current.resource_provider_generation, change([...current.traits]));
    }, retry);
  }

  // ---- resource classes ---------------------------------------------------------------------

  async listResourceClasses(): Promise<T.ResourceClass[]> {
    return (await this.body<T.ResourceClassList>('GET', '/resource_classes')).resource_classes;
  }

  getResourceClass(name: string): Promise<T.ResourceClass> {
    return this.body('GET', `/resource_classes/${seg(name)}`);
  }

  /** Create a custom resource class (CUSTOM_…; PUT, 1.7+); `created` false when it existed. */
  async createResourceClass(name: string): Promise<{ created: boolean }> {
    return { created: (await this.call('PUT', `/resource_classes/${seg(name)}`)).status === 201 };
  }

  async deleteResourceClass(name: string): Promise<void> {
    await this.call('DELETE', `/resource_classes/${seg(name)}`);
  }

  // ---- allocations --------------------------------------------------------------------------

  getAllocations(consumer: string): Promise<T.ConsumerAllocations> {
    return this.body('GET', `/allocations/${seg(consumer)}`);
  }

  /** Replace a consumer's allocations (consumer_generation: what was read, null for a new consumer). */
  async setAllocations(consumer: string, allocations: T.AllocationsPut): Promise<void> {
    await this.call('PUT', `/allocations/${seg(consumer)}`, { body: allocations });
  }

  async deleteAllocations(consumer: string): Promise<void> {
    await this.call('DELETE', `/allocations/${seg(consumer)}`);
  }

  /** Set the allocations of several consumers at once, all or nothing (1.13+). */
  async postAllocations(allocations: T.AllocationsPost): Promise<void> {
    await this.call('POST', '/allocations', { body: allocations });
  }

  getProviderAllocations(uuid: string): Promise<T.ProviderAllocations> {
    return this.body('GET', `/resource_providers/${seg(uuid)}/allocations`);
  }

  /**
   * Read a consumer's allocations, change them and write them back naming the consumer
   * generation read; again when another writer moved it. `change` gets the current allocations
   * (provider → resources) and returns the new ones.
   */
  updateAllocations(
    consumer: string,
    owner: { project_id: string; user_id: string; consumer_type?: string },
    change: (current: Record<string, { resources: T.Resources }>) => Record<string, { resources: T.Resources }>,
    retry?: RetryOptions,
  ): Promise<void> {
    return retryOnConflict(async () => {
      const current = await this.getAllocations(consumer);
      const resources = Object.fromEntries(Object.entries(current.allocations).map(([rp, a]) => [rp, { resources: { ...a.resources } }]));
      await this.setAllocations(consumer, {
        allocations: change(resources),
        project_id: current.project_id ?? owner.project_id,
        user_id: current.user_id ?? owner.user_id,
        consumer_generation: current.consumer_generation ?? null,
        ...(owner.consumer_type !== undefined || current.consumer_type !== undefined ? { consumer_type: current.consumer_type ?? owner.consumer_type } : {}),
      });
    }, retry);
  }

  // ---- allocation candidates, reshaper -----------------------------------------------------

  /** GET /allocation_candidates; `groups` become suffixed parameters (`resources_NIC=…`). */
  getAllocationCandidates(query: T.CandidatesQuery): Promise<T.AllocationCandidates> {
    const { groups, ...flat } = query;
    const params: Record<string, string | number | string[] | undefined> = { ...flat };
    for (const [suffix, group] of Object.entries(groups ?? {})) {
      for (const [key, value] of Object.entries(group)) params[`${key}${suffix}`] = value as string | string[];
    }
    return this.body('GET', '/allocation_candidates', { query: params });
  }

  /** POST /reshaper (1.30+): move inventories and allocations in one step. */
  async reshape(request: T.ReshapeRequest): Promise<void> {
    await this.call('POST', '/reshaper', { body: request });
  }
}
