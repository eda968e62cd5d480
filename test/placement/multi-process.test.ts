// Three allot processes sharing one PostgreSQL database, many concurrent clients spread over
// them: the same races as concurrency.test.ts, now between processes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { raceForConsumerGeneration, raceForLastUnits, raceSwaps } from './races.js';

describe('three processes on one PostgreSQL', () => {
  let servers: SpawnedServer[] = [];
  let clients: PlacementClient[] = [];
  before(async () => {
    const db = await freshDatabaseUrl('postgres');
    // Started together on an empty database: their migrations race too.
    servers = await Promise.all([1, 2, 3].map((n) => spawnServer(['--db', db, '--conductor-id', `proc-${n}`, '--pool-size', '8'])));
    clients = servers.map((s) => new PlacementClient(s.placementUrl));
  });
  after(async () => {
    const codes = await Promise.all(servers.map((s) => s.stop()));
    assert.deepEqual(codes, [0, 0, 0], 'every process stops cleanly on SIGTERM');
  });

  test('racing for the last units never over-allocates', async () => {
    const { ok, refused } = await raceForLastUnits(clients, 'mp', 240);
    assert.ok(ok > 0 && refused > 0, `the race must be contended (ok ${ok}, refused ${refused})`);
  });

  test('racing on one consumer generation lets exactly one writer win', async () => {
    await raceForConsumerGeneration(clients, 'mp', 45);
  });

  test('POST /allocations swaps are all-or-nothing under contention', async () => {
    await raceSwaps(clients, 'mp', 36);
  });

  test('no process logged an unexpected error', () => {
    for (const s of servers) assert.doesNotMatch(s.output(), /"level":50|unexpected error/);
  });
});
