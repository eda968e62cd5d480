// SQLite on a full filesystem (a small tmpfs): writes answer 507 in each API's format saying the
// disk is full, /readyz is 503 with that reason, reads keep working, nothing acknowledged is lost,
// and writes work again as soon as space is freed, without a restart.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PlacementClient, request } from '../helpers/http.js';
import { type SpawnedServer, spawnServer } from '../helpers/server.js';
import { IdsClient } from '../ids/helpers.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-full-'));
// Mounting needs root; say why when the machine does not allow it, rather than pass silently.
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dir]).status === 0;

describe('SQLite on a full disk', { skip: mounted ? false : 'this machine does not allow mounting a small tmpfs (needs root)' }, () => {
  let server: SpawnedServer;
  const filler = path.join(dir, 'filler');
  before(async () => {
    server = await spawnServer(['--db', `sqlite:${path.join(dir, 'allot.db')}`]);
  });
  after(async () => {
    await server?.stop();
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Fill the filesystem with a file, leaving about `leave` bytes free. */
  function fill(leave: number) {
    const { bavail, bsize } = statfsSync(dir);
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - leave)));
  }

  test('writes answer 507 while full and work again once space is freed', async () => {
    const ids = new IdsClient(server.url);
    const placement = new PlacementClient(server.placementUrl);
    assert.equal((await ids.post('/pools', { name: 'full', kind: 'integer', ranges: ['1-1000000'] })).status, 201);
    fill(64 * 1024);

    const acknowledged = new Map<string, string>();
    let refusal = null;
    for (let i = 0; i < 5_000 && !refusal; i++) {
      const owner = `owner-${i}-${'x'.repeat(200)}`;
      const res = await ids.post('/pools/full/allocations', { owner, metadata: { pad: 'y'.repeat(500) } });
      if (res.status === 201) acknowledged.set(owner, String(res.body.value));
      else refusal = res;
    }
    assert.ok(refusal, 'the disk filled up');
    assert.equal(refusal.status, 507, refusal.text);
    assert.equal(refusal.headers.get('content-type'), 'application/problem+json');
    assert.equal(refusal.body.code, 'ids.storage_full');
    assert.match(refusal.body.detail, /disk is full/);

    // A small write may still fit in space SQLite's files already hold; keep writing until one does not.
    let placementRefusal = null;
    for (let i = 0; i < 2_000 && !placementRefusal; i++) {
      const res = await placement.post('/resource_providers', { name: `full-${i}-${randomUUID()}-${'z'.repeat(150)}` });
      if (res.status !== 200) placementRefusal = res;
    }
    assert.ok(placementRefusal, 'placement writes fill the disk too');
    assert.equal(placementRefusal.status, 507, placementRefusal.text);
    assert.match(placementRefusal.body.errors[0].detail, /disk is full/);

    const ready = await request('GET', `${server.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(ready.body.reason, /disk is full/);
    assert.equal((await ids.get('/pools/full')).status, 200, 'reads keep working');

    unlinkSync(filler);
    const again = await ids.post('/pools/full/allocations', { owner: 'after-space-freed' });
    assert.equal(again.status, 201, again.text);
    assert.equal((await request('GET', `${server.url}/readyz`)).status, 200);
    assert.equal(server.process.exitCode, null);

    const held = new Map((await ids.all('/pools/full/allocations?limit=1000')).map((a) => [a.owner as string, String(a.value)]));
    for (const [owner, value] of acknowledged) assert.equal(held.get(owner), value, `acknowledged ${owner} is still held`);
  });
});
