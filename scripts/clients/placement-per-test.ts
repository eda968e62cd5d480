// A fresh allot server for each test of a suite that must not see another test's providers (Nova's
// functional tests: every test names its computes `compute1`, `host1`…). An HTTP service on
// 127.0.0.1 that scripts/clients/allot_placement_fixture.py asks once per test:
//
//   POST /      → 201 {"id", "placementUrl"}: a server started on a database of its own
//   DELETE /ID  → 204 when that server has stopped and its database is gone
//
// Starting a server (process start and migrations) takes one to two seconds: the next one starts
// while a test runs, so a test waits for one only when it asks before the last has come up.
import { rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { type SpawnedServer, spawnServer } from '../../test/helpers/server.js';

interface Started {
  server: SpawnedServer;
  database: string;
}

export interface ServerPerTest {
  /** where to ask (ALLOT_PLACEMENT_SERVERS) */
  url: string;
  /** stop the service, the spare server and every server not given back */
  close(): Promise<void>;
}

/** Remove a server's database: its SQLite files, or its PostgreSQL database. */
async function dropDatabase(database: string): Promise<void> {
  if (database.startsWith('sqlite:')) {
    const file = database.slice('sqlite:'.length);
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    return;
  }
  const admin = new URL(database);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * @param database a fresh database URL for each server
 * @param serverArgs `allot serve` options besides --db
 */
export async function serverPerTest(database: () => Promise<string>, serverArgs: string[]): Promise<ServerPerTest> {
  const running = new Map<string, Started>();
  let count = 0;
  const start = async (): Promise<Started> => {
    const db = await database();
    return { server: await spawnServer(['--db', db, ...serverArgs]), database: db };
  };
  // Always one starting or started ahead; a failed start is reported to the test that takes it.
  let spare: Promise<Started> = start();
  spare.catch(() => {});

  const stop = async ({ server, database: db }: Started) => {
    await server.stop();
    await dropDatabase(db);
  };

  const handle = async (req: http.IncomingMessage): Promise<{ status: number; body?: unknown }> => {
    if (req.method === 'POST' && req.url === '/') {
      const next = spare;
      spare = start();
      spare.catch(() => {});
      const started = await next;
      const id = String(++count);
      running.set(id, started);
      return { status: 201, body: { id, placementUrl: started.server.placementUrl } };
    }
    const id = req.method === 'DELETE' ? req.url?.slice(1) : undefined;
    const started = id === undefined ? undefined : running.get(id);
    if (id === undefined || !started) return { status: 404, body: { error: `no server ${req.method} ${req.url}` } };
    running.delete(id);
    await stop(started);
    return { status: 204 };
  };

  const service = http.createServer((req, res) => {
    req.resume();
    handle(req).then(
      ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? '' : JSON.stringify(body)),
      (error: unknown) => {
        console.log(`# ${req.method} ${req.url} of the server-per-test service failed: ${String(error).slice(0, 2000)}`);
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
      },
    );
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise<void>((resolve) => service.close(() => resolve()));
      const left = [...running.values()];
      running.clear();
      await Promise.allSettled([...left.map(stop), spare.then(stop)]);
    },
  };
}
