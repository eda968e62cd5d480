// allot's typed client: `import { AllotClient } from 'allot/client'`. Plain fetch, no Node-only
// imports, so it runs in Node 20 and in browsers.
//
//   const allot = new AllotClient({ url: 'http://127.0.0.1:8778', token: 'admin' });
//   const rp = await allot.placement.createProvider({ name: 'cn1' });
//   await allot.placement.updateInventories(rp.uuid, (inv) => ({ ...inv, VCPU: { total: 16 } }));
//   const a = await allot.baremetal.createAllocation({ resource_class: 'bm-large' });
//   await allot.baremetal.waitForAllocation(a.uuid, { timeoutMs: 60_000 });
//   const vni = await allot.ids.allocate('vni', { owner: 'wire-17' });
import { BaremetalClient } from './baremetal.js';
import type { ClientOptions } from './http.js';
import { IdsClient } from './ids.js';
import { PlacementClient } from './placement.js';

export interface AllotClientOptions extends ClientOptions {
  /** pin a Placement microversion instead of negotiating */
  placementMicroversion?: string;
  /** pin a bare-metal microversion instead of negotiating */
  baremetalMicroversion?: string;
}

/** The three APIs of one allot server (its main port: /placement, /baremetal, /ids). */
export class AllotClient {
  readonly placement: PlacementClient;
  readonly baremetal: BaremetalClient;
  readonly ids: IdsClient;

  constructor(options: AllotClientOptions) {
    const { url, placementMicroversion, baremetalMicroversion, ...common } = options;
    const base = url.replace(/\/+$/, '');
    this.placement = new PlacementClient({ ...common, endpoint: `${base}/placement`, microversion: placementMicroversion });
    this.baremetal = new BaremetalClient({ ...common, endpoint: `${base}/baremetal`, microversion: baremetalMicroversion });
    this.ids = new IdsClient({ ...common, endpoint: `${base}/ids` });
  }
}

export { AllotApiError, type ApiName } from './errors.js';
export { type CallOptions, type ClientOptions, DEFAULT_TIMEOUT_MS, HttpTransport, type HttpResult, type Query, type TokenProvider } from './http.js';
export { CONFLICT_CODES, type RetryOptions, retryOnConflict } from './retry.js';
export { type KeystonePasswordAuth, keystonePasswordLogin, keystonePasswordToken } from './keystone.js';
export { PLACEMENT_MAX_VERSION, PlacementClient, type PlacementClientOptions } from './placement.js';
export { BAREMETAL_MAX_VERSION, BaremetalClient, type BaremetalClientOptions, type WaitOptions, WaitTimeoutError } from './baremetal.js';
export { BATCH_MAX_ITEMS, IMPORT_MAX_ITEMS, IdsClient, type IdsClientOptions } from './ids.js';
export type * as placement from './placement-types.js';
export type * as baremetal from './baremetal-types.js';
export type * as ids from './ids-types.js';
