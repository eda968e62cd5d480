// Starting and stopping one allot process. It listens at once and then waits for its database
// (unreachable, still recovering, failing over), migrates it and loads the provider index: until
// then, API requests wait up to --ready-wait and are answered 503, and /readyz says why. Stopping
// first drains for --shutdown-delay (requests served, /readyz 503, so a load balancer's health
// check takes the process out of rotation), then closes the listeners, finishes in-flight
// requests and closes the database.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, databaseOptions } from '../config.js';
import { backoffDelay, sleep } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
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
 * Measure the database's clock (PostgreSQL: db/database-clock.ts, before anything reads "now"),
 * bring the schema up to date and the standard names in, waiting (with backoff) while the database
 * is unreachable or recovering. Errors that are not faults (bad credentials, a missing privilege, a
 * broken migration) end the wait at once, and so does a SQLite file that cannot be opened or
 * written: a permission or a read-only mount does not heal by waiting (a lock another process
 * holds, or a full disk, may). `giveUp` is checked between attempts.
 */
export function prepareDatabase(database: Database, log: Logger, giveUp: () => string | null, onWait: (reason: string) => void = () => {}): Promise<string[]> {
  return untilDone(
    database,
    async () => {
      const clock = await database.measureClock?.();
      if (clock) log.info({ skew_ms: clock.skewMs, uncertainty_ms: clock.uncertaintyMs }, "timing leases and heartbeats on the database's clock");
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
async function untilDone<T>(
  database: Database,
  step: () => Promise<T>,
  log: Logger,
  giveUp: () => string | null,
  onWait: (reason: string) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const fault = classifyFault(err);
      if (!fault) throw refusal(database, err);
      if (database.dialect === 'sqlite' && fault.kind === 'unavailable') throw refusal(database, fault.cause ?? err);
      const stop = giveUp();
      if (stop) throw new Error(`${stop}; last error: ${fault.message} (${(fault.cause as Error | undefined)?.message ?? ''})`);
      onWait(fault.message);
      if (attempt === 1 || attempt % 10 === 0) log.warn({ err: (fault.cause as Error | undefined)?.message, attempt }, 'waiting for the database');
      await sleep(backoffDelay(attempt, STARTUP_BACKOFF) + 50);
    }
  }
}

/** A database that refuses what start-up needs, as one message naming it (and the fix, where known). */
function refusal(database: Database, err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  // PostgreSQL's insufficient_privilege: the role may connect but not create allot's tables
  const hint =
    code === '42501'
      ? ' (allot creates and alters its tables at start: make its role the owner of the database and its schema, or GRANT CREATE ON SCHEMA public TO it)'
      : '';
  return new Error(`${database.displayUrl}: ${(err as Error).message}${hint}`, { cause: err });
}

/** What a process gets from outside its configuration (tests hand in a clock they move). */
export interface Dependencies {
  clock?: Clock;
}

/** The option that sets each listener's port, for the messages that name it. */
const PORT_OPTIONS = { main: '--port', placement: '--placement-port', baremetal: '--baremetal-port' } as const;
type Listener = keyof typeof PORT_OPTIONS;

/** Two listeners given one port: the second could only fail with a bare EADDRINUSE. */
function checkPorts(config: Config): void {
  const ports: Array<[Listener, number | null]> = [
    ['main', config.port],
    ['placement', config.placementPort],
    ['baremetal', config.baremetalPort],
  ];
  const taken = new Map<number, Listener>();
  for (const [listener, port] of ports) {
    if (port === null || port === 0) continue; // 0: each listener gets a free port of its own
    const other = taken.get(port);
    if (other) {
      throw new Error(
        `${PORT_OPTIONS[listener]} ${port} is also ${PORT_OPTIONS[other]}: every listener needs a port of its own (the main port already serves each API under its prefix; give ${PORT_OPTIONS[listener]} another port, or leave it out)`,
      );
    }
    taken.set(port, listener);
  }
}

/** A listener that could not bind, as one line naming the option, the address and the fix. */
function listenRefusal(listener: Listener, host: string, port: number, err: NodeJS.ErrnoException): Error {
  const at = `${host}:${port} (${PORT_OPTIONS[listener]})`;
  if (err.code === 'EADDRINUSE')
    return new Error(`cannot listen on ${at}: another process is using the port; stop it, or choose another port with ${PORT_OPTIONS[listener]}`);
  if (err.code === 'EACCES')
    return new Error(`cannot listen on ${at}: permission denied (a port below 1024 needs privileges); choose another port with ${PORT_OPTIONS[listener]}`);
  if (err.code === 'EADDRNOTAVAIL') return new Error(`cannot listen on ${at}: ${host} is not an address of this machine (--host)`);
  return new Error(`cannot listen on ${at}: ${err.message}`, { cause: err });
}

export async function startAllot(config: Config, dependencies: Dependencies = {}): Promise<RunningAllot> {
  checkPorts(config);
  const log = createLogger(config);
  const database = await openDatabase(config.db, { ...databaseOptions(config), clock: dependencies.clock });
  const context = await createContext(config, log, database).catch(async (err) => {
    await database.close();
    throw err;
  });
  const { readiness } = context;
  const servers: FastifyInstance[] = [];
  let workers: BackgroundWorker[] = [];
  let stopping = false;
  // a SIGTERM while the provider index loads ends the load at its next chunk, not after every provider
  const stopLoading = new AbortController();
  try {
    const urls: Record<string, string> = {};
    const listen = async (name: Listener, mounts: Mount[], port: number, path: string) => {
      const server = buildServer(context, mounts);
      servers.push(server);
      // Fastify would also say "Server listening at …" (once per address): the line below says it once, with its API
      const level = server.log.level;
      server.log.level = 'silent';
      await server
        .listen({ host: config.host, port })
        .catch((err: NodeJS.ErrnoException) => {
          throw listenRefusal(name, config.host, port, err);
        })
        .finally(() => {
          server.log.level = level;
        });
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
    const dedicated: Array<[ApiName & Listener, number | null]> = [
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
        database,
        () => context.placement.index.load(loading, stopLoading.signal),
        log,
        giveUp,
        (reason) => readiness.waiting(reason),
      ).catch((err) => {
        if (!stopLoading.signal.aborted) throw err;
        log.info('provider index load stopped: the process is stopping');
      });
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
          stopLoading.abort();
          if (config.shutdownDelay > 0 && readiness.isReady) {
            readiness.draining();
            log.info({ seconds: config.shutdownDelay / 1000 }, 'draining: /readyz answers 503, requests are still served');
            await sleep(config.shutdownDelay);
          }
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
