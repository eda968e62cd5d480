// The dashboard of an allot started with `--auth keystone`, against the real Keystone of the run
// (test/helpers/keystone.ts; this file's name makes `npm test` start it): the page asks for a
// token before it reads anything, sends the token given as X-Auth-Token to the APIs, says so when
// an API refuses it (401: unknown token, back to the sign-in; 403: a token whose roles may not
// read the view), and shows the data with a token that may read it. With the default policies no
// one token reads every view: Placement's rules are for project-scoped admins, Ironic's listings
// (as allot serves them today, docs/auth.md) for system-scoped readers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type Chromium, launchChromium } from '../helpers/chromium.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { AllotClient } from '../../src/client/index.js';
import { request } from '../helpers/http.js';
import { type RealKeystone, realKeystone } from '../helpers/keystone.js';
import { type TestServer, startServer } from '../helpers/server.js';

let ks: RealKeystone & { stop(): Promise<void> };
let browser: Chromium;
before(async () => {
  ks = await realKeystone();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await ks?.stop();
});

for (const dialect of DIALECTS) {
  describe(`dashboard with Keystone tokens (${dialect})`, () => {
    let server: TestServer;
    let page: Page;
    /** every request the page made to an API, with the token it carried */
    const apiRequests: Array<{ url: string; token: string | undefined }> = [];

    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), ...ks.allotConfig() });
      await new AllotClient({ url: server.url, token: await ks.token('admin') }).placement.createProvider({ name: `ks-cn-${dialect}` });
      page = await browser.context.newPage();
      page.on('request', (r) => {
        if (/\/(placement|baremetal|ids)\//.test(new URL(r.url()).pathname)) apiRequests.push({ url: r.url(), token: r.headers()['x-auth-token'] });
      });
    });
    after(async () => {
      await page?.close();
      await server?.close();
    });

    test('the server tells the page it checks Keystone tokens', async () => {
      const res = await request('GET', `${server.url}/ui/server.json`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { auth: 'keystone' });
    });

    test('the sign-in comes first, with no way around it, and nothing is read without a token', async () => {
      await page.goto(`${server.url}/ui/#/capacity`);
      await page.waitForSelector('.signin');
      assert.match(await page.locator('.signin').innerText(), /checks Keystone tokens/);
      assert.equal(await page.locator('.signin button:text-is("Cancel")').count(), 0);
      assert.equal(await page.locator('.signin button:text-is("No authentication (noauth)")').count(), 0);
      assert.equal(await page.locator('[data-view]').count(), 0);
      assert.deepEqual(apiRequests, []);
    });

    test('a token Keystone does not know: 401, and the sign-in says so', async () => {
      await page.fill('.signin input', 'not-a-keystone-token');
      await page.click('.signin button[type="submit"]');
      await page.waitForSelector('[data-signin="refused"]');
      assert.match(await page.locator('[data-signin="refused"]').innerText(), /placement API refused the token \(401\)/);
      assert.ok(apiRequests.length > 0);
      assert.ok(
        apiRequests.every((r) => r.token === 'not-a-keystone-token'),
        JSON.stringify(apiRequests),
      );
    });

    test('a project member may not read Placement: 403, said in the view', async () => {
      const member = await ks.token('p1-member');
      apiRequests.length = 0;
      // Every error notice the page shows from now on without the sign-in, caught as the DOM
      // changes: the view must never show the previous token's 401 once the new token is taken,
      // not even for the one render before it reloads.
      await page.evaluate(`(() => {
        const seen = (window.noticesSeen = []);
        new MutationObserver(() => {
          if (document.querySelector('.signin')) return;
          for (const n of document.querySelectorAll('.notice.error')) if (!seen.includes(n.textContent)) seen.push(n.textContent);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      })()`);
      await page.fill('.signin input', member);
      await page.click('.signin button[type="submit"]');
      await page.waitForSelector('.signin', { state: 'detached' });
      const notice = page.locator('.notice.error');
      await notice.waitFor();
      assert.match(await notice.innerText(), /The placement API refused this token the access \(403\)/);
      assert.ok(apiRequests.every((r) => r.token === member));
      const seen = (await page.evaluate('window.noticesSeen')) as string[];
      assert.deepEqual(
        seen.filter((text) => !/refused this token the access \(403\)/.test(text)),
        [],
        'no notice but the 403 was ever shown',
      );
    });

    test("a project administrator's token reads Placement and the identifier pools, sent as X-Auth-Token", async () => {
      const admin = await ks.token('admin');
      await page.click('button.token');
      apiRequests.length = 0;
      await page.fill('.signin input', admin);
      await page.click('.signin button[type="submit"]');
      await page.waitForSelector('[data-view="capacity"] [data-stat="providers"]');
      assert.equal(await page.locator('[data-stat="providers"] .stat-value').innerText(), '1');
      await page.click('a[data-route="pools"]');
      await page.waitForSelector('[data-view="pools"]');
      // Ironic lists every node only to a system-scoped reader
      await page.click('a[data-route="baremetal"]');
      await page.waitForSelector('.notice.error:has-text("The baremetal API refused this token the access (403)")');
      const apis = new Set(apiRequests.map((r) => new URL(r.url).pathname.split('/')[1]));
      assert.deepEqual([...apis].sort(), ['baremetal', 'ids', 'placement']);
      assert.ok(
        apiRequests.every((r) => r.token === admin),
        JSON.stringify(apiRequests.filter((r) => r.token !== admin)),
      );
    });

    test("a system reader's token reads the bare-metal view, and stays with the tab across a reload", async () => {
      const systemAdmin = await ks.token('sys-admin');
      await page.click('button.token');
      apiRequests.length = 0;
      await page.fill('.signin input', systemAdmin);
      await page.click('.signin button[type="submit"]');
      await page.waitForSelector('[data-view="baremetal"] [data-conductor]');
      assert.match(await page.locator('[data-view="baremetal"] [data-conductor]').first().innerText(), /alive/);
      await page.reload();
      await page.waitForSelector('[data-view="baremetal"] [data-conductor]');
      assert.equal(await page.locator('.signin').count(), 0);
      assert.ok(
        apiRequests.length > 0 && apiRequests.every((r) => r.token === systemAdmin),
        JSON.stringify(apiRequests.filter((r) => r.token !== systemAdmin)),
      );
    });
  });
}
