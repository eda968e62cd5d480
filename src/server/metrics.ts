// `GET /metrics` on the main port (Prometheus text format), and the gauges read from the database
// when Prometheus scrapes. Who may scrape:
//
//   --metrics-public        anyone who reaches the port (the operator said so)
//   --auth noauth (default) requests addressed to a loopback name or an --allowed-hosts name, as
//                           every API in that mode (the listener itself is loopback only)
//   --auth keystone         a valid X-Auth-Token whose roles include `admin` (401 without one,
//                           403 for other roles, 503 while Keystone is unreachable)
//
// The gauges read at scrape time ask each domain's services (bare-metal allocations by state,
// identifier pools' use, the outbox backlog), never its tables. Every such read is bounded: grouped
// counts over small sets (allocation states, outbox inventories) and at most MAX_POOLS identifier
// pools (for a prefix pool, also its allocations smaller than one of its child prefixes:
// ids/services/pools.ts countsOfPool); a read that fails leaves its gauge empty for that scrape
// rather than failing the others.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { BaremetalContext } from '../baremetal/context.js';
import { allocationCountsByState } from '../baremetal/services/allocations.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { AccessControl } from '../http/pipeline.js';
import { ApiError } from '../http/errors.js';
import type { IdsContext } from '../ids/context.js';
import { outboxCounts } from '../ids/services/outbox.js';
import { poolUsage } from '../ids/services/pools.js';
import type { Metrics } from '../metrics/metrics.js';

/** Pools whose utilization a scrape reports (by name); past this many, the rest are left out. */
export const MAX_POOLS = 1_000;

/** The gauges a scrape reads through the domains, and from the database's connection pool. */
export function registerDatabaseGauges(metrics: Metrics, app: { database: Database; baremetal: BaremetalContext; ids: IdsContext }, log: Logger): void {
  const safely = (what: string, collect: () => Promise<void>) => async () => {
    try {
      await collect();
    } catch (err) {
      log.warn({ err: (err as Error).message, metric: what }, 'a metric could not be read');
    }
  };
  metrics.gauge('allot_baremetal_allocations', 'bare-metal allocations by state (allocating, active, error)', ['state'], (g) =>
    safely('allot_baremetal_allocations', async () => {
      for (const [state, n] of await allocationCountsByState(app.baremetal)) g.set({ state }, n);
    })(),
  );
  // One read of the pools per scrape, shared by its three gauges (a scrape collects them at once;
  // a prefix pool's counts read its allocations).
  let poolsRead: ReturnType<typeof poolUsage> | null = null;
  const pools = () => (poolsRead ??= poolUsage(app.ids, MAX_POOLS).finally(() => (poolsRead = null)));
  metrics.gauge('allot_ids_pool_values', 'values in an identifier pool (prefix pools: child prefixes of its prefix_length; IPv6: as a float)', ['pool'], (g) =>
    safely('allot_ids_pool_values', async () => {
      for (const p of await pools()) g.set({ pool: p.name }, p.total);
    })(),
  );
  metrics.gauge('allot_ids_pool_used_values', 'values of an identifier pool that are allocated (prefix pools: child prefixes)', ['pool'], (g) =>
    safely('allot_ids_pool_used_values', async () => {
      for (const p of await pools()) g.set({ pool: p.name }, p.used);
    })(),
  );
  metrics.gauge('allot_ids_pool_utilization_ratio', 'used / total of an identifier pool (0–1)', ['pool'], (g) =>
    safely('allot_ids_pool_utilization_ratio', async () => {
      for (const p of await pools()) g.set({ pool: p.name }, p.total > 0 ? p.used / p.total : 0);
    })(),
  );
  metrics.gauge('allot_ids_outbox_pending', 'outbox entries not yet delivered to their external inventory (the backlog)', ['inventory'], (g) =>
    safely('allot_ids_outbox_pending', async () => {
      for (const [inventory, counts] of await outboxCounts(app.ids)) g.set({ inventory }, counts.pending);
    })(),
  );
  if (app.database.poolStats) {
    const stats = app.database.poolStats;
    metrics.gauge('allot_db_pool_connections', 'PostgreSQL connections of this process (state: total, idle)', ['state'], (g) => {
      const s = stats();
      g.set({ state: 'total' }, s.total);
      g.set({ state: 'idle' }, s.idle);
    });
    metrics.gauge('allot_db_pool_waiting', 'requests waiting for a pooled PostgreSQL connection', [], (g) => g.set(stats().waiting));
  }
}

/** `GET /metrics`: the exposition, to whoever the rule above lets in. */
export async function serveMetrics(
  app: { config: Pick<Config, 'metricsPublic' | 'auth'>; access: AccessControl; metrics: Metrics },
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  try {
    if (!app.config.metricsPublic) {
      app.access.admit(req.headers, req.method);
      if (app.config.auth === 'keystone') {
        const credentials = await app.access.authenticate('metrics', req.headers);
        if (!credentials.roles.includes('admin')) {
          return void reply
            .code(403)
            .send({ error: 'The metrics are for administrators (a token with the admin role), unless allot runs with --metrics-public.' });
        }
      }
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
    return void reply.code(err.status).send({ error: err.message });
  }
  const { contentType, body } = await app.metrics.scrape();
  return void reply.code(200).header('content-type', contentType).send(body);
}
