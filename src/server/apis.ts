// The APIs allot serves. Each registers itself on a Fastify server under a prefix; the main port
// mounts all of them at their default prefix, a dedicated port mounts one at `/`.
import type { FastifyInstance } from 'fastify';
import { baremetalApi } from '../baremetal/index.js';
import { baremetalRuntime } from '../baremetal/runtime.js';
import { idsApi } from '../ids/index.js';
import { runtimeOf } from '../ids/runtime.js';
import { placementApi } from '../placement/index.js';
import type { Services } from './services.js';

export interface ApiModule {
  /** prefix on the main port */
  defaultPrefix: string;
  /** mount the API under `prefix` ('' for a port's root) */
  register(app: FastifyInstance, services: Services, prefix: string): void;
}

export const APIS = {
  placement: {
    defaultPrefix: '/placement',
    register: (app, services, prefix) => app.register(placementApi, { prefix, ctx: { database: services.database, prefix, config: services.config } }),
  },
  baremetal: {
    defaultPrefix: '/baremetal',
    register: (app, services, prefix) => app.register(baremetalApi, { prefix, ctx: { rt: baremetalRuntime(services) } }),
  },
  ids: {
    defaultPrefix: '/ids',
    register: (app, services, prefix) =>
      app.register(async (scope) => scope.register(idsApi, { prefix, ctx: { database: services.database, prefix, runtime: await runtimeOf(services) } })),
  },
} satisfies Record<string, ApiModule>;

export type ApiName = keyof typeof APIS;
