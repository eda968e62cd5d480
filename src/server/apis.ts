// The APIs allot serves. The main port mounts each at its default prefix; a dedicated port mounts
// one at `/` (some OpenStack clients assume the root).
import { baremetalApi } from '../baremetal/api.js';
import type { ApiDefinition } from '../http/pipeline.js';
import { idsApi } from '../ids/api.js';
import { placementApi } from '../placement/api.js';
import type { AppContext } from './context.js';

export interface ApiModule {
  /** prefix on the main port */
  defaultPrefix: string;
  // biome-ignore lint: each API has its own context and request types
  definition: ApiDefinition<any, any, any>;
  /** the part of the process context its handlers get */
  context(app: AppContext): unknown;
}

export const APIS = {
  placement: { defaultPrefix: '/placement', definition: placementApi, context: (app) => app.placement },
  baremetal: { defaultPrefix: '/baremetal', definition: baremetalApi, context: (app) => app.baremetal },
  ids: { defaultPrefix: '/ids', definition: idsApi, context: (app) => app.ids },
} satisfies Record<string, ApiModule>;

export type ApiName = keyof typeof APIS;
