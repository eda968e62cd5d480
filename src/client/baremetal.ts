// A typed client of the bare-metal (Ironic) API: nodes, their states, traits and maintenance,
// allocations, and bounded waits for the asynchronous parts (allocations, provision states).
import type * as T from './baremetal-types.js';
import { AllotApiError } from './errors.js';
import { type CallOptions, type ClientOptions, HttpTransport, type Query, compareVersions, segment as seg, sleep } from './http.js';

/** The newest Ironic microversion this client knows the bodies of. */
export const BAREMETAL_MAX_VERSION = '1.82';

export interface BaremetalClientOptions extends Omit<ClientOptions, 'url'> {
  /** the bare-metal endpoint, e.g. `http://127.0.0.1:8778/baremetal` or `http://host:6385` */
  endpoint: string;
  /** use this microversion instead of negotiating one */
  microversion?: string;
}

export interface WaitOptions {
  /** give up after this long, ms (default 60 000) */
  timeoutMs?: number;
  /** pause between two reads, ms (default 250) */
  intervalMs?: number;
  signal?: AbortSignal;
  /** called with each state read, e.g. to show progress */
  onPoll?: (state: string) => void;
}

/** A wait ran out of time; `last` is what was read last. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  constructor(
    message: string,
    readonly last: unknown,
  ) {
    super(message);
  }
}

/** Provision states a node ends up in when an operation failed. */
const FAILED_STATES = new Set([
  'error',
  'deploy failed',
  'clean failed',
  'inspect failed',
  'adopt failed',
  'rescue failed',
  'unrescue failed',
  'service failed',
]);

export class BaremetalClient {
  readonly http: HttpTransport;
  private negotiated: Promise<string> | null = null;

  constructor(private readonly options: BaremetalClientOptions) {
    this.http = new HttpTransport('baremetal', options.endpoint, options);
  }

  at(microversion: string): BaremetalClient {
    return new BaremetalClient({ ...this.options, microversion });
  }

  /** The pinned microversion, or min(the server's newest, BAREMETAL_MAX_VERSION). */
  microversion(): Promise<string> {
    if (this.options.microversion) return Promise.resolve(this.options.microversion);
    this.negotiated ??= this.root().then(
      (doc) => {
        const max = doc.default_version?.version;
        if (!max)
          throw new AllotApiError(0, 'client.bad_response', 'the bare-metal root document names no version', null, 'baremetal', {
            method: 'GET',
            url: `${this.http.endpoint}/`,
          });
        return compareVersions(max, BAREMETAL_MAX_VERSION) < 0 ? max : BAREMETAL_MAX_VERSION;
      },
      (err: unknown) => {
        this.negotiated = null;
        throw err;
      },
    );
    return this.negotiated;
  }

  /** GET /: the version document. */
  root(): Promise<T.Root> {
    return this.http.get<T.Root>('/');
  }

  async call<R = unknown>(method: string, path: string, options: CallOptions = {}) {
    const mv = await this.microversion();
    return this.http.call<R>(method, path, { ...options, headers: { 'x-openstack-ironic-api-version': mv, ...options.headers } });
  }

  private async body<R>(method: string, path: string, options?: CallOptions): Promise<R> {
    return (await this.call<R>(method, path, options)).body;
  }

  /** Every page of a list: follows `next` markers until a page is not full. */
  private async all<R>(path: string, key: string, query: Query): Promise<R[]> {
    const out: R[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = await this.body<Record<string, unknown>>('GET', path, { query: { ...query, marker } });
      const items = (page[key] as R[] | undefined) ?? [];
      out.push(...items);
      if (!page.next || items.length === 0) return out;
      marker = new URL(String(page.next)).searchParams.get('marker') ?? undefined;
      if (!marker) return out;
    }
  }

  // ---- nodes --------------------------------------------------------------------------------

  /** One page of nodes (`next` is the link to the following page, when there is one). */
  listNodes(query: T.NodeListQuery = {}): Promise<T.NodeList> {
    return this.body('GET', '/v1/nodes', { query: listQuery(query) });
  }

  /** Every node matching the query, all pages. */
  listAllNodes(query: Omit<T.NodeListQuery, 'marker'> = {}): Promise<T.NodeSelection[]> {
    return this.all<T.NodeSelection>('/v1/nodes', 'nodes', listQuery(query));
  }

  /** A node; with `fields`, only those (and its links). */
  getNode(ident: string): Promise<T.Node>;
  getNode(ident: string, fields: string[] | undefined): Promise<T.NodeSelection>;
  getNode(ident: string, fields?: string[]): Promise<T.NodeSelection> {
    return this.body('GET', `/v1/nodes/${seg(ident)}`, { query: { fields: fields?.join(',') } });
  }

  createNode(node: T.NodeCreate): Promise<T.Node> {
    return this.body('POST', '/v1/nodes', { body: node });
  }

  /** PATCH with a JSON patch: `[{op: 'replace', path: '/extra/rack', value: 'r1'}]`. */
  updateNode(ident: string, patch: T.PatchOperation[]): Promise<T.Node> {
    return this.body('PATCH', `/v1/nodes/${seg(ident)}`, { body: patch });
  }

  async deleteNode(ident: string): Promise<void> {
    await this.call('DELETE', `/v1/nodes/${seg(ident)}`);
  }

  getNodeStates(ident: string): Promise<T.NodeStates> {
    return this.body('GET', `/v1/nodes/${seg(ident)}/states`);
  }

  /** Ask for a provision state change (202: it happens in the background; see waitForProvisionState). */
  async setProvisionState(ident: string, target: T.ProvisionTarget, extra: Record<string, unknown> = {}): Promise<void> {
    await this.call('PUT', `/v1/nodes/${seg(ident)}/states/provision`, { body: { target, ...extra } });
  }

  async setPowerState(ident: string, target: T.PowerTarget, timeoutSeconds?: number): Promise<void> {
    await this.call('PUT', `/v1/nodes/${seg(ident)}/states/power`, { body: { target, ...(timeoutSeconds !== undefined ? { timeout: timeoutSeconds } : {}) } });
  }

  async setMaintenance(ident: string, reason?: string): Promise<void> {
    await this.call('PUT', `/v1/nodes/${seg(ident)}/maintenance`, { body: reason !== undefined ? { reason } : {} });
  }

  async clearMaintenance(ident: string): Promise<void> {
    await this.call('DELETE', `/v1/nodes/${seg(ident)}/maintenance`);
  }

  async listNodeTraits(ident: string): Promise<string[]> {
    return (await this.body<T.NodeTraits>('GET', `/v1/nodes/${seg(ident)}/traits`)).traits;
  }

  async setNodeTraits(ident: string, traits: string[]): Promise<void> {
    await this.call('PUT', `/v1/nodes/${seg(ident)}/traits`, { body: { traits } satisfies T.NodeTraitsPut });
  }

  async addNodeTrait(ident: string, trait: string): Promise<void> {
    await this.call('PUT', `/v1/nodes/${seg(ident)}/traits/${seg(trait)}`);
  }

  async removeNodeTrait(ident: string, trait: string): Promise<void> {
    await this.call('DELETE', `/v1/nodes/${seg(ident)}/traits/${seg(trait)}`);
  }

  async removeNodeTraits(ident: string): Promise<void> {
    await this.call('DELETE', `/v1/nodes/${seg(ident)}/traits`);
  }

  getNodeAllocation(ident: string): Promise<T.Allocation> {
    return this.body('GET', `/v1/nodes/${seg(ident)}/allocation`);
  }

  async deleteNodeAllocation(ident: string): Promise<void> {
    await this.call('DELETE', `/v1/nodes/${seg(ident)}/allocation`);
  }

  /**
   * Poll a node until its provision state settles (no target state left): resolves with the
   * node when it reached `expected`, throws when it settled elsewhere (a failed state, with the
   * node's last_error) and WaitTimeoutError when it did not settle in time.
   */
  async waitForProvisionState(ident: string, expected: string, options: WaitOptions = {}): Promise<T.Node> {
    const node = await this.poll(
      () => this.getNode(ident),
      (n) => String(n.provision_state),
      // settled: no target left and the conductor's lock released (the next change would be refused while it is held)
      (n) => !n.target_provision_state && !n.reservation && (n.provision_state === expected || FAILED_STATES.has(String(n.provision_state))),
      `node ${ident} to become ${expected}`,
      options,
    );
    if (node.provision_state !== expected) {
      throw new AllotApiError(
        409,
        'client.provision_failed',
        `node ${ident} is ${node.provision_state}, not ${expected}: ${node.last_error ?? 'no error recorded'}`,
        null,
        'baremetal',
        {
          method: 'GET',
          url: `${this.http.endpoint}/v1/nodes/${seg(ident)}`,
        },
      );
    }
    return node;
  }

  /** Poll a node until its power state is `expected` and no power change is under way. */
  waitForPowerState(ident: string, expected: 'power on' | 'power off', options: WaitOptions = {}): Promise<T.Node> {
    return this.poll(
      () => this.getNode(ident),
      (n) => String(n.power_state),
      (n) => !n.target_power_state && !n.reservation && n.power_state === expected,
      `node ${ident} to be ${expected}`,
      options,
    );
  }

  // ---- allocations --------------------------------------------------------------------------

  /**
   * Create an allocation. Ironic answers it `allocating` until a conductor picks a node (see
   * waitForAllocation). With `waitSeconds` the server is asked (`Prefer: wait=N`, RFC 7240) to
   * answer once the allocation is active or failed, within N seconds: allot does (bounded by its
   * --max-prefer-wait), a server that ignores the preference (Ironic) answers at once — so a
   * caller that needs the outcome checks `state` and waits for the rest if it is still `allocating`.
   */
  createAllocation(allocation: T.AllocationCreate, options: { waitSeconds?: number } = {}): Promise<T.Allocation> {
    const wait = options.waitSeconds === undefined ? undefined : Math.max(0, Math.ceil(options.waitSeconds));
    if (wait === undefined) return this.body('POST', '/v1/allocations', { body: allocation });
    return this.body('POST', '/v1/allocations', { body: allocation, headers: { prefer: `wait=${wait}` }, timeoutMs: this.http.timeoutMs + wait * 1000 });
  }

  getAllocation(ident: string): Promise<T.Allocation> {
    return this.body('GET', `/v1/allocations/${seg(ident)}`);
  }

  /** One page of allocations (whole, or with `fields` only those and their links). */
  listAllocations(query: T.AllocationListQuery = {}): Promise<T.AllocationList> {
    return this.body('GET', '/v1/allocations', { query: listQuery(query) });
  }

  listAllAllocations(query: Omit<T.AllocationListQuery, 'marker'> = {}): Promise<T.AllocationSelection[]> {
    return this.all<T.AllocationSelection>('/v1/allocations', 'allocations', listQuery(query));
  }

  /** PATCH (1.57+: name and extra) with a JSON patch. */
  updateAllocation(ident: string, patch: T.PatchOperation[]): Promise<T.Allocation> {
    return this.body('PATCH', `/v1/allocations/${seg(ident)}`, { body: patch });
  }

  /** Delete an allocation, releasing its node. */
  async deleteAllocation(ident: string): Promise<void> {
    await this.call('DELETE', `/v1/allocations/${seg(ident)}`);
  }

  /**
   * Poll an allocation until it is `active` or `error` and resolve with it (check `state`;
   * `last_error` says why an allocation failed); WaitTimeoutError when it stays `allocating`
   * longer than `timeoutMs`.
   */
  waitForAllocation(ident: string, options: WaitOptions = {}): Promise<T.Allocation> {
    return this.poll(
      () => this.getAllocation(ident),
      (a) => a.state,
      (a) => a.state === 'active' || a.state === 'error',
      `allocation ${ident} to leave allocating`,
      options,
    );
  }

  // ---- conductors ---------------------------------------------------------------------------

  /** The conductors: hostname, conductor_group, alive and links; with `detail`, every field. */
  async listConductors(detail = false): Promise<T.ConductorSelection[]> {
    return (await this.body<T.ConductorList>('GET', '/v1/conductors', { query: { detail: detail || undefined } })).conductors;
  }

  private async poll<R>(read: () => Promise<R>, state: (r: R) => string, done: (r: R) => boolean, what: string, options: WaitOptions): Promise<R> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const interval = options.intervalMs ?? 250;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await read();
      options.onPoll?.(state(current));
      if (done(current)) return current;
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(`gave up waiting for ${what} after ${timeoutMs} ms (still ${state(current)})`, current);
      await sleep(Math.min(interval, left), options.signal);
    }
  }
}

function listQuery(query: T.NodeListQuery | T.AllocationListQuery): Query {
  const out: Query = {};
  for (const [k, v] of Object.entries(query)) out[k] = k === 'fields' && Array.isArray(v) ? v.join(',') : (v as Query[string]);
  return out;
}
