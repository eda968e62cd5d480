// A connection that times out while the process is paused (SIGSTOP: a long GC pause, a frozen VM)
// is answered 408 when the process resumes, before the bytes that arrived meanwhile are read. A
// request among those bytes must then not run: its client reads the 408 as its answer (found by
// `npm run test:chaos`: a DELETE answered 408 and applied). On both databases: the connection is
// opened, the server paused past --http-headers-timeout, a DELETE of a Placement consumer sent,
// the server resumed; the answer is 408, and the consumer's allocations are still there.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything the server sends on `socket` until it closes it (bounded: 20 s). */
function readAll(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no close within 20 s; got: ${text}`)), 20_000);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => {}); // a reset after the answer ends it like a close
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`a request on a connection that timed out while the server was paused (${dialect})`, () => {
    let server: SpawnedServer;
    let api: PlacementClient;
    before(async () => {
      server = await spawnServer(['--db', await freshDatabaseUrl(dialect), '--http-headers-timeout', '1']);
      api = new PlacementClient(server.placementUrl);
    });
    after(async () => {
      server?.process.kill('SIGCONT');
      await server?.stop();
    });

    test('is answered 408 and not run', async () => {
      const rp = randomUUID();
      const consumer = randomUUID();
      assert.equal((await api.post('/resource_providers', { name: `paused-${rp}`, uuid: rp })).status, 200);
      assert.equal(
        (await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } })).status,
        200,
      );
      const claim = await api.put(`/allocations/${consumer}`, {
        allocations: { [rp]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
      assert.equal(claim.status, 204, claim.text);

      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const answer = readAll(socket);
      await sleep(200); // accepted by the server before it stops
      server.process.kill('SIGSTOP');
      try {
        await sleep(2_500); // past --http-headers-timeout (1 s) and its 1 s check
        socket.write(
          `DELETE /placement/allocations/${consumer} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-auth-token: admin\r\nopenstack-api-version: placement 1.28\r\n\r\n`,
        );
        await sleep(200);
      } finally {
        server.process.kill('SIGCONT');
      }
      const text = await answer;
      assert.match(text, /^HTTP\/1\.1 408 /, `the first answer on the connection: ${text.slice(0, 300)}`);
      assert.ok(!/HTTP\/1\.1 204/.test(text), `no second answer (the DELETE's): ${text.slice(0, 600)}`);

      const after = await api.get(`/allocations/${consumer}`);
      assert.equal(after.status, 200);
      assert.deepEqual((after.body as { allocations: Record<string, unknown> }).allocations, { [rp]: { generation: 2, resources: { VCPU: 1 } } });
    });
  });
}
