// Many concurrent HTTP clients against one allot process: racing for the last units of capacity,
// for one consumer's generation, and with POST /allocations swaps.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { raceEveryWrite, raceForConsumerGeneration, raceForLastUnits, raceForProviderGeneration, raceSwaps } from './races.js';

for (const dialect of DIALECTS) {
  describe(`concurrent clients, one process (${dialect})`, () => {
    let server: TestServer;
    let api: PlacementClient;
    let dir: string | undefined;
    before(async () => {
      // SQLite as users run it: a file in WAL mode with synchronous=FULL.
      let db = await freshDatabaseUrl(dialect);
      if (dialect === 'sqlite') {
        dir = mkdtempSync(path.join(os.tmpdir(), 'allot-race-'));
        db = `sqlite:${path.join(dir, 'allot.db')}`;
      }
      server = await startServer({ db });
      api = new PlacementClient(server.placementUrl);
    });
    after(async () => {
      await server.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('racing for the last units never over-allocates', async () => {
      const { ok, refused } = await raceForLastUnits([api], dialect);
      assert.ok(ok > 0 && refused > 0, `the race must be contended (ok ${ok}, refused ${refused})`);
    });

    test('registration: one creator of a name, one writer of inventories, traits and aggregates per generation; the rest 409', async () => {
      await raceForProviderGeneration([api], dialect);
    });

    test('racing on one consumer generation lets exactly one writer win', async () => {
      await raceForConsumerGeneration([api], dialect);
    });

    test('POST /allocations swaps are all-or-nothing under contention', async () => {
      const { swapped, filled } = await raceSwaps([api], dialect);
      assert.ok(swapped + filled <= 12);
    });

    test('swaps, moves, deletes and new claims racing on the same providers keep usage, capacity and generations right', async () => {
      await raceEveryWrite([api], dialect);
    });
  });
}
