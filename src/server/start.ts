// Starting and stopping one allot process: open the database, migrate, listen on the configured
// ports, and shut down gracefully (finish in-flight requests, then close the database).
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { setDefaultMaxAttempts } from '../db/transaction.js';
import { syncStandardNames } from '../placement/store/names.js';
import { APIS, type ApiName } from './apis.js';
import { type Mount, buildServer } from './app.js';
import type { Services } from './services.js';
import { type BackgroundWorker, createWorkers } from './workers.js';

export interface RunningAllot {
  /** base URL of each listener: `main`, and `placement` when a dedicated port is configured */
  urls: Record<string, string>;
  services: Services;
  close(): Promise<void>;
}

export async function startAllot(config: Config): Promise<RunningAllot> {
  const log = pino({ level: config.logLevel, base: { pid: process.pid } });
  setDefaultMaxAttempts(config.maxAttempts);
  const database = await openDatabase(config.db, { sqliteSync: config.sqliteSync, poolSize: config.poolSize });
  const servers: FastifyInstance[] = [];
  let workers: BackgroundWorker[] = [];
  try {
    const applied = await migrate(database);
    if (applied.length) log.info({ migrations: applied }, 'database migrated');
    await syncStandardNames(database);
    await database.flushCommits?.(); // set-up writes ran outside transaction(): sync them too

    const services: Services = { config, database, log };
    const urls: Record<string, string> = {};
    const listen = async (name: string, mounts: Mount[], port: number, path: string) => {
      const server = buildServer(services, mounts);
      servers.push(server);
      await server.listen({ host: config.host, port });
      const address = server.server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      urls[name] = `http://${host}:${address.port}`;
      log.info({ api: name, url: `${urls[name]}${path}`, port: address.port }, `${name} listening on ${urls[name]}${path}`);
    };
    const allApis = Object.keys(APIS) as ApiName[];
    await listen('main', allApis.map((api) => ({ api, prefix: APIS[api].defaultPrefix })), config.port, '/');
    const dedicated: Array<[ApiName, number | null]> = [
      ['placement', config.placementPort],
      ['baremetal', config.baremetalPort],
    ];
    for (const [api, port] of dedicated) if (port !== null) await listen(api, [{ api, prefix: '/' }], port, '/');
    workers = createWorkers(services);
    for (const w of workers) w.start();
    log.info({ db: database.displayUrl, workers: workers.map((w) => w.name) }, 'allot started');

    let closing: Promise<void> | null = null;
    return {
      urls,
      services,
      close: () =>
        (closing ??= (async () => {
          await Promise.all(servers.map((s) => s.close()));
          await Promise.all(workers.map((w) => w.stop()));
          await database.close();
          log.info('allot stopped');
        })()),
    };
  } catch (err) {
    await Promise.all(workers.map((w) => w.stop().catch(() => {})));
    await Promise.all(servers.map((s) => s.close().catch(() => {})));
    await database.close().catch(() => {});
    throw err;
  }
}
