// A database address that accepts TCP connections but never answers — HAProxy in front of a
// PostgreSQL cluster while no member is primary (a failover) looks exactly like this to a client:
// node-postgres gives each connection attempt up after the connect timeout with a bare
// `timeout expired`. That is a database fault like a refused connection: allot keeps waiting at
// start-up instead of exiting, and answers 503 (never 500) meanwhile.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { classifyFault } from '../../src/db/faults.js';
import { request } from '../helpers/http.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a database that accepts connections and never answers', () => {
  let silent: net.Server;
  const sockets = new Set<net.Socket>();
  let port = 0;
  let server: SpawnedServer;

  before(async () => {
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as net.AddressInfo).port;
    server = await spawnServer(
      ['--db', `postgres://allot:x@127.0.0.1:${port}/allot`, '--db-connect-timeout', '0.3', '--health-timeout', '0.5'],
      {},
      { waitFor: 'listening' },
    );
  });
  after(async () => {
    await server?.stop();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  test("node-postgres's connect timeout is classified as the database being unavailable", () => {
    assert.equal(classifyFault(new Error('timeout expired'))?.kind, 'unavailable');
  });

  test('allot keeps waiting for it and answers 503 with Retry-After in each API format, never 500', async () => {
    await sleep(1_500); // several connection attempts time out meanwhile
    assert.equal(server.process.exitCode, null, `allot exited:\n${server.output()}`);
    const ready = await request('GET', `${server.url}/readyz`);
    assert.equal(ready.status, 503);
    const placement = await request('GET', `${server.url}/placement/resource_providers`, undefined, { headers: { 'x-auth-token': 'admin' } });
    assert.equal(placement.status, 503, placement.text);
    assert.ok(placement.headers.get('retry-after'));
    const ids = await request('GET', `${server.url}/ids/v1/pools`);
    assert.equal(ids.status, 503, ids.text);
    assert.equal(ids.body.code, 'ids.database_unavailable');
    assert.match(server.output(), /waiting for the database/);
    assert.doesNotMatch(server.output(), /unexpected error|"status":500/, 'no request failed unexpectedly');
  });
});
