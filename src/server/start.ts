// Starting and stopping one allot process. It listens at once and then waits for its database
// (unreachable, still recovering, failing over), migrates it and loads the provider index: until
// then, API requests wait up to --ready-wait and are answered 503, and /readyz says why. Stopping finishes in-flight requests, then closes the database.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, databaseOptions } from '../config.js';
import { backoffDelay, sleep } from '../core/backoff.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { Database } from '../db/database.js';
import { openDatabase } from '../db/open.js';
import { classifyFault } from '../db/faults.js';
import { migrate } from '../db/migrate.js';
import { syncStandardNames } from '../placement/services/standard-names.js';
import type { BackgroundWorker } from '../background/worker.js';
import { APIS, type ApiName } from './apis.js';
import { type Mount, buildServer } from './app.js';
import { type AppContext, createContext } from './context.js';
import { createLogger } from './log.js';
import { createWorkers } from './workers.js';

export interface RunningAllot {
  /** base URL of each listener: `main`, and `placement` when a dedicated port is configured */
  urls: Record<string, string>;
  context: AppContext;
  /** resolves once the database is migrated and the workers run; rejects when start-up gave up */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Waits between start-up attempts while the database is unreachable. */
const STARTUP_BACKOFF = { baseMs: 200, maxMs: 5_000 };

/**
 * Bring the schema up to date and the standard names in, waiting (with backoff) while the database
 * is unreachable or recovering. Errors that are not faults (bad credentials, a broken migration)
 * end the wait at once. `giveUp` is checked between attempts.
 */
export function prepareDatabase(database: Database, log: Logger, giveUp: () => string | null, onWait: (reason: string) => void = () => {}): Promise<string[]> {
  return untilDone(
    async () => {
      const applied = await migrate(database);
      await database.flushCommits?.(); // the migrator commits on its own, outside transaction()
      await syncStandardNames(database);
      return applied;
    },
    log,
    giveUp,
    onWait,
  );
}

/** Run `step` until it succeeds, waiting with backoff while it meets database faults; any other error ends the wait. */
async function untilDone<T>(step: () => Promise<T>, log: Logger, giveUp: () => string | null, onWait: (reason: string) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const fault = classifyFault(err);
      if (!fault) throw err;
      const stop = giveUp();
      if (stop) throw new Error(`${stop}; last error: ${fault.message} (${(fault.cause as Error | undefined)?.message ?? ''})`);
      onWait(fault.message);
      if (attempt === 1 || attempt % 10 === 0) log.warn({ err: (fault.cause as Error | undefined)?.message, attempt }, 'waiting for the database');
      await sleep(backoffDelay(attempt, STARTUP_BACKOFF) + 50);
    }
  }
}

/** What a process gets from outside its configuration (tests hand in a clock they move). */
export interface Dependencies {
  clock?: Clock;
}

export async function startAllot(config: Config, dependencies: Dependencies = {}): Promise<RunningAllot> {
  const log = createLogger(config);
  const database = await openDatabase(config.db, { ...databaseOptions(config), clock: dependencies.clock ?? systemClock });
  const context = await createContext(config, log, database).catch(async (err) => {
    await database.close();
    throw err;
  });
  const { readiness } = context;
  const servers: FastifyInstance[] = [];
  let workers: BackgroundWorker[] = [];
  let stopping = false;
  try {
    const urls: Record<string, string> = {};
    const listen = async (name: string, mounts: Mount[], port: number, path: string) => {
      const server = buildServer(context, mounts);
      servers.push(server);
      await server.listen({ host: config.host, port });
      const address = server.server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      urls[name] = `http://${host}:${address.port}`;
      log.info({ api: name, url: `${urls[name]}${path}`, port: address.port }, `${name} listening on ${urls[name]}${path}`);
    };
    const allApis = Object.keys(APIS) as ApiName[];
    await listen(
      'main',
      allApis.map((api) => ({ api, prefix: APIS[api].defaultPrefix })),
      config.port,
      '/',
    );
    const dedicated: Array<[ApiName, number | null]> = [
      ['placement', config.placementPort],
      ['baremetal', config.baremetalPort],
    ];
    for (const [api, port] of dedicated) if (port !== null) await listen(api, [{ api, prefix: '/' }], port, '/');

    const ready = (async () => {
      const giveUp = () => (stopping ? 'stopped while starting' : null);
      const applied = await prepareDatabase(database, log, giveUp, (reason) => readiness.waiting(reason));
      if (applied.length) log.info({ migrations: applied }, 'database migrated');
      // Ready means able to answer: what a request would otherwise wait for is loaded first.
      const loading = (count: number) => readiness.loading(`loading the placement provider index (${count} providers so far)`);
      loading(0);
      await untilDone(
        () => context.placement.index.load(loading),
        log,
        giveUp,
        (reason) => readiness.waiting(reason),
      );
      if (stopping) return;
      workers = createWorkers(context);
      for (const w of workers) w.start();
      readiness.ready();
      log.info({ db: database.displayUrl, workers: workers.map((w) => w.name) }, 'allot ready');
    })();
    ready.catch(() => {}); // the caller decides what a failed start means (the CLI exits)

    let closing: Promise<void> | null = null;
    return {
      urls,
      context,
      ready,
      close: () =>
        (closing ??= (async () => {
          stopping = true;
          readiness.stopping();
          await Promise.all(servers.map((s) => s.close()));
          await ready.catch(() => {});
          await Promise.all(workers.map((w) => w.stop()));
          await context.close();
          await database.close();
          log.info('allot stopped');
        })()),
    };
  } catch (err) {
    await Promise.all(servers.map((s) => s.close().catch(() => {})));
    await context.close().catch(() => {});
    await database.close().catch(() => {});
    throw err;
  }
}
