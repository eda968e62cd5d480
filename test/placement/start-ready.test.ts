// Ready means able to answer: a process loads its provider index (what allocation candidates are
// searched in) before /readyz says 200, says meanwhile what it is loading, and answers a request
// that arrives during the load within --ready-wait: 503 in Placement's format, never a wait as long
// as the load. A process told to stop (SIGTERM) while it loads stops the load at its next chunk and
// exits 0 at once, not after reading every provider. A real `allot serve` process on 200 000
// providers filled straight into each database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { fillProviders } from '../helpers/fill-providers.js';
import { type HttpResponse, request } from '../helpers/http.js';
import { spawnServer } from '../helpers/server.js';

const PROVIDERS = 200_000;
const READY_WAIT_MS = 200;
/** what the event loop may add to the wait: the longest synchronous step of the load, on a shared machine */
const SLACK_MS = 2_000;
const CANDIDATES = '/placement/allocation_candidates?resources=VCPU:8&limit=5';
/** how long a SIGTERM during the load may take to end the process: a chunk of the load, closing, a shared machine */
const STOP_WITHIN_MS = 5_000;
const PLACEMENT = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };

for (const dialect of DIALECTS) {
  describe(`a starting process is ready once its provider index is loaded (${dialect})`, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-start-'));
    let url: string;
    before(async () => {
      url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'start.db')}` : await freshDatabaseUrl(dialect);
      await fillProviders(url, dialect, PROVIDERS);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('/readyz is 503 with the reason until the index is loaded, 200 after; a candidates request meanwhile is answered within --ready-wait', async () => {
      const server = await spawnServer(['--db', url, '--ready-wait', String(READY_WAIT_MS / 1000)], {}, { waitFor: 'listening' });
      try {
        const reasons: string[] = [];
        let duringLoad: { res: HttpResponse; ms: number; health: number } | null = null;
        for (;;) {
          const ready = await request('GET', `${server.url}/readyz`);
          if (ready.status === 200) break;
          assert.equal(ready.status, 503, ready.text);
          assert.equal(ready.body.status, 'not ready');
          reasons.push(ready.body.reason);
          if (!duringLoad && /loading the placement provider index/.test(ready.body.reason)) {
            const started = performance.now();
            const res = await request('GET', `${server.url}${CANDIDATES}`, undefined, { headers: PLACEMENT });
            duringLoad = { res, ms: performance.now() - started, health: (await request('GET', `${server.url}/healthz`)).status };
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        // the first 200 comes after the load finished, and the first search needs nothing more
        const loaded = server
          .output()
          .split('\n')
          .filter((l) => l.includes('placement provider index loaded'))
          .map((l) => JSON.parse(l) as { providers: number });
        assert.deepEqual(
          loaded.map((l) => l.providers),
          [PROVIDERS],
          'loaded once, every provider, before ready',
        );
        assert.ok(
          reasons.some((r) => /^starting: loading the placement provider index \(\d+ providers so far\)$/.test(r)),
          `/readyz said what it waits for: ${[...new Set(reasons)].join(' | ')}`,
        );
        const first = await request('GET', `${server.url}${CANDIDATES}`, undefined, { headers: PLACEMENT });
        assert.equal(first.status, 200, first.text);
        assert.equal(first.body.allocation_requests.length, 5);

        assert.ok(duringLoad, `a request was sent while the index loaded: ${[...new Set(reasons)].join(' | ')}`);
        const { res, ms, health } = duringLoad;
        assert.ok(ms < READY_WAIT_MS + SLACK_MS, `answered in ${Math.round(ms)} ms, the bound is --ready-wait ${READY_WAIT_MS} ms`);
        // still loading after --ready-wait (sent as the load began): refused in Placement's format, with when to come back
        assert.equal(res.status, 503, res.text);
        assert.equal(res.body.errors[0].status, 503);
        assert.match(res.body.errors[0].detail, /starting: loading the placement provider index/);
        assert.equal(res.headers.get('retry-after'), '2');
        assert.equal(health, 200, '/healthz: the process works while it loads');
        assert.ok(server.output().includes('allot ready'));
      } finally {
        await server.stop();
      }
    });

    test('a SIGTERM while the index loads stops the load at its next chunk: the process exits 0 at once', async () => {
      const server = await spawnServer(['--db', url], {}, { waitFor: 'listening' });
      try {
        // stopped early in the load: well before its last chunk
        let loadedSoFar = -1;
        while (loadedSoFar < 0) {
          const ready = await request('GET', `${server.url}/readyz`);
          assert.equal(ready.status, 503, `still loading when stopped: ${ready.text}`);
          const m = /loading the placement provider index \((\d+) providers so far\)/.exec(ready.body.reason);
          if (m && Number(m[1]) > 0) loadedSoFar = Number(m[1]);
        }
        assert.ok(loadedSoFar < PROVIDERS / 2, `stopped in the first half of the load (${loadedSoFar} providers in)`);
        const signalled = performance.now();
        const code = await server.stop();
        const ms = performance.now() - signalled;
        assert.equal(code, 0, server.output());
        assert.ok(ms < STOP_WITHIN_MS, `exited ${Math.round(ms)} ms after SIGTERM, the bound is ${STOP_WITHIN_MS} ms`);
        assert.ok(server.output().includes('provider index load stopped'), server.output());
        assert.ok(!server.output().includes('placement provider index loaded'), 'the load did not run to its end');
        assert.ok(!server.output().includes('allot ready'));
      } finally {
        await server.kill();
      }
    });
  });
}
