// The dashboard's service instances, end to end: a real allot (SQLite and PostgreSQL) with the
// tenant servers of ./demo.ts (seedInstances: each reserves a bare-metal node, bandwidth on its
// NIC, a VLAN and an address through the identifier API) and Debian's Chromium. The list shows
// every instance with its state, spec, project and holdings; an instance's page shows its
// holdings across the three engines, each linking to the view that shows it, and each of those
// views links back to the instance. What the pages must show is read from the APIs here. Then an
// allot whose policy refuses to show service instances: the other views keep working.
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { AllotClient, type ids } from '../../src/client/index.js';
import { type Chromium, launchChromium } from '../helpers/chromium.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { INSTANCES, type SeededInstances, TENANT_SPEC, seedInstances } from './demo.js';
import { countReaches, screenshotShows } from './page-checks.js';

const short = (uuid: string) => uuid.slice(0, 8);
const attributesOf = (page: Page, selector: string, attribute: string) =>
  page.locator(selector).evaluateAll((els, a) => els.map((e) => e.getAttribute(a as string)), attribute);

let browser: Chromium;
before(async () => {
  browser = await launchChromium();
});
after(() => browser?.close());

for (const dialect of DIALECTS) {
  describe(`dashboard: service instances (${dialect})`, () => {
    let server: TestServer;
    let allot: AllotClient;
    let seeded: SeededInstances;
    let page: Page;
    let shots: string;
    const pageProblems: string[] = [];
    const requested: string[] = [];

    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20 });
      allot = new AllotClient({ url: server.url, token: 'admin' });
      seeded = await seedInstances(server.url);
      shots = await mkdtemp(path.join(os.tmpdir(), `allot-dashboard-instances-${dialect}-`));
      page = await browser.context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') pageProblems.push(m.text());
      });
      page.on('pageerror', (e) => pageProblems.push(e.message));
      page.on('request', (r) => requested.push(r.url()));
    });
    after(async () => {
      await page?.close();
      await server?.close();
    });

    const instance = (name: string) => allot.ids.getInstance(seeded.instances.get(name)!);

    test('the list: every instance with its state, spec, project and what it holds', async () => {
      const all = await allot.ids.listAllInstances();
      assert.equal(all.length, INSTANCES.length);
      await page.goto(`${server.url}/ui/#/instances`);
      await page.waitForSelector('[data-view="instances"] tr[data-instance]');
      assert.equal(await page.locator('a[data-route="instances"]').getAttribute('class'), 'active');
      await countReaches(page, 'tr[data-instance]', all.length);

      const byState: Record<string, number> = {};
      for (const i of all) byState[i.state] = (byState[i.state] ?? 0) + 1;
      assert.deepEqual(byState, { up: 3, start: 1, terminated: 1 });
      const drawn = await page
        .locator('[data-chart="instance-states"] rect[data-segment]')
        .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-segment'), Number(r.getAttribute('data-value'))]));
      assert.deepEqual(Object.fromEntries(drawn), byState);

      const holdings = all.flatMap((i) => i.holdings);
      const stat = (id: string) => page.locator(`[data-stat="${id}"] .stat-value`).innerText();
      assert.equal(await stat('live-instances'), String(all.filter((i) => i.state !== 'terminated').length));
      assert.equal(await stat('held-nodes'), String(holdings.filter((h) => h.source === 'node').length));
      assert.equal(await stat('held-capacity'), String(holdings.filter((h) => h.source === 'capacity').length));
      assert.equal(await stat('held-values'), String(holdings.filter((h) => h.source === 'pool').length));
      assert.equal(await page.locator('[data-stat="held-capacity"] .stat-hint').innerText(), '30 Gbit/s egress bandwidth');

      for (const i of all) {
        const row = page.locator(`tr[data-instance="${i.id}"]`);
        const text = await row.innerText();
        for (const shown of [short(i.id), i.state, TENANT_SPEC.name, i.project_id!]) assert.ok(text.includes(shown), `${shown} in ${text}`);
        const chips = await row.locator('[data-field="holds"] .chip').allInnerTexts();
        if (i.state !== 'up') assert.deepEqual(chips, [], text);
        else {
          const node = i.holdings.find((h) => h.source === 'node')!.value as ids.NodeValue;
          assert.equal(chips.length, 4, text);
          assert.ok(chips.includes(node.name!), `${node.name} in ${chips}`);
          assert.ok(chips.includes('10 Gbit/s egress bandwidth'), chips.join());
          assert.ok(chips.includes(String(i.active_attributes!.vlan)), chips.join());
        }
      }
      // a state in the chart's legend lists only its instances
      await page.click('[data-panel="instance-states"] button:text-is("up")');
      await countReaches(page, 'tr[data-instance]', byState.up!);
      await page.click('[data-panel="instance-states"] button:text-is("up")');
      await countReaches(page, 'tr[data-instance]', all.length);
      // the filter finds an instance by what it holds
      const webA = await instance('web-a');
      await page.fill('#instance-filter', (webA.active_attributes!.server as ids.NodeValue).name!);
      await countReaches(page, 'tr[data-instance]', 1);
      assert.deepEqual(await attributesOf(page, 'tr[data-instance]', 'data-instance'), [webA.id]);
      await page.fill('#instance-filter', '');
      await screenshotShows(browser, page, shots, 'instances', { '#22c55e': 1000, '#a78bfa': 200, '#94a3b8': 200 });
    });

    test("an instance's page: its holdings across the engines and its sets; each holding links to where it is shown, which links back", async () => {
      const webA = await instance('web-a');
      const node = webA.active_attributes!.server as ids.NodeValue;
      const onPage = `[data-view="instance"][data-instance="${webA.id}"]`;
      await page.goto(`${server.url}/ui/#/instances`);
      await page.click(`tr[data-instance="${webA.id}"] a[href="#/instances/${webA.id}"]`);
      await page.waitForSelector(`${onPage} tr[data-holding]`);
      assert.equal(await page.locator('[data-stat="project"] .stat-value').innerText(), 'web-frontend');
      assert.equal(await page.locator('[data-stat="state"] .stat-value').innerText(), 'up');

      // one row per holding: its engine, its value, and where its own API has it
      const rows = new Map(
        (await page.locator('tr[data-holding]').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-holding'), tr.getAttribute('data-source')]))).map(
          ([a, s]) => [a, s],
        ),
      );
      assert.deepEqual(new Map(webA.holdings.map((h) => [h.attribute, h.source])), rows);
      const cell = (attribute: string, field: string) => page.locator(`tr[data-holding="${attribute}"] [data-field="${field}"]`).innerText();
      for (const h of webA.holdings) assert.equal(await cell(h.attribute!, 'href'), h.href);
      assert.match(await cell('server', 'value'), new RegExp(`^${node.name}`));
      assert.match(await cell('uplink', 'value'), /^10 Gbit\/s egress bandwidth/);
      assert.equal(await cell('vlan', 'value'), String(webA.active_attributes!.vlan));
      assert.equal(await cell('address', 'value'), String(webA.active_attributes!.address));
      // the sets: the active one names the node by its name
      assert.equal(await page.locator('tr[data-attribute="server"] td[data-set="active"]').innerText(), node.name);
      assert.equal(await page.locator('tr[data-attribute="vlan"] td[data-set="active"]').innerText(), String(webA.active_attributes!.vlan));
      await screenshotShows(browser, page, shots, 'instance', { '#2563eb': 300, '#0891b2': 100, '#7c3aed': 200 });

      // the node, in the bare-metal view: only it listed, its allocation held by the instance
      await page.click('tr[data-holding="server"] [data-field="shown-in"] a');
      await page.waitForSelector('[data-view="baremetal"]');
      await countReaches(page, 'tr[data-node]', 1);
      assert.deepEqual(await attributesOf(page, 'tr[data-node]', 'data-node'), [node.name]);
      const back = page.locator(`tr[data-node="${node.name}"] [data-field="held-by"]`);
      assert.equal(await back.innerText(), `service instance ${short(webA.id)} · server`);
      await back.click();
      await page.waitForSelector(`${onPage} tr[data-holding]`);

      // the capacity, in the consumers view: the instance is the consumer, and the identifier API says whose it is
      await page.click('tr[data-holding="uplink"] [data-field="shown-in"] a');
      await page.waitForSelector('[data-view="consumers"]');
      await countReaches(page, 'tr[data-consumer]', 1);
      assert.deepEqual(await attributesOf(page, 'tr[data-consumer]', 'data-consumer'), [webA.id]);
      const consumer = page.locator(`tr[data-consumer="${webA.id}"]`);
      assert.ok((await consumer.innerText()).includes(`bm-gold-0`), 'the NIC under the node is named');
      await consumer.locator('[data-field="instance"]').click();
      await page.waitForSelector(`${onPage} tr[data-holding]`);

      // the VLAN, in the pools view: its pool chosen, only the instance's allocations listed
      await page.click('tr[data-holding="vlan"] [data-field="shown-in"] a');
      await page.waitForSelector(`#pool-allocations h2:text-is("Allocations in tenant-vlan held by service-instance/${webA.id}")`);
      await countReaches(page, 'tr[data-id-allocation]', 1);
      assert.match(await page.locator('tr[data-id-allocation]').innerText(), new RegExp(`^${webA.active_attributes!.vlan}\\s`));
      await page.click(`tr[data-id-allocation="service-instance/${webA.id}"] [data-field="instance"]`);
      await page.waitForSelector(`${onPage} tr[data-holding]`);
    });

    test('a node the bare-metal API releases shows on the open page without a reload, as released while held', async () => {
      const nfv = await instance('nfv-t');
      const node = nfv.active_attributes!.server as ids.NodeValue;
      await page.goto(`${server.url}/ui/?refresh=1#/instances/${nfv.id}`);
      await page.waitForSelector('tr[data-holding="server"]');
      await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
      await allot.baremetal.updateNode(node.node, [{ op: 'remove', path: '/instance_uuid' }]);
      await page.waitForSelector('#forced-releases tr[data-release="server"]', { timeout: 15_000 });
      assert.equal(await page.locator('tr[data-holding="server"]').count(), 0);
      const released = await page.locator('#forced-releases tr[data-release="server"]').innerText();
      assert.ok(released.includes(node.name!), released);
      assert.ok(released.includes('active'), released);
      assert.equal(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded), true, 'the page was reloaded');
    });

    test('the page logged no error and asked nothing of any other server', () => {
      assert.deepEqual(pageProblems, []);
      assert.deepEqual(
        requested.filter((u) => !u.startsWith(`${server.url}/`)),
        [],
      );
    });
  });

  describe(`dashboard with service instances refused by the policy (${dialect})`, () => {
    let server: TestServer;
    let seeded: SeededInstances;
    let page: Page;
    const idsRequests: Array<{ url: string; status: number }> = [];

    before(async () => {
      // instances may be made and terminated, but nobody may list or show one
      const dir = await mkdtemp(path.join(os.tmpdir(), 'allot-policy-'));
      const policyFile = path.join(dir, 'policy.yaml');
      await writeFile(policyFile, '"ids:service_instances:show": "!"\n"ids:service_instances:list": "!"\n');
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 20, policyFile });
      seeded = await seedInstances(server.url);
      page = await browser.context.newPage();
      page.on('response', (r) => {
        if (new URL(r.url()).pathname.startsWith('/ids/v1/service-instances')) idsRequests.push({ url: r.url(), status: r.status() });
      });
    });
    after(async () => {
      await page?.close();
      await server?.close();
    });

    test('consumers, bare metal and pools show as before; the identifier API is asked once and then left alone', async () => {
      const reserved = INSTANCES.filter((d) => d.reserve && !d.terminate).map((d) => seeded.instances.get(d.name)!);
      await page.goto(`${server.url}/ui/?refresh=1#/consumers`);
      for (const id of reserved) await page.waitForSelector(`tr[data-consumer="${id}"]`);
      await page.waitForSelector('.notice:has-text("Reading the project")', { state: 'detached' });
      const asked = idsRequests.length;
      assert.ok(asked >= 1, 'the identifier API was asked');
      assert.ok(
        idsRequests.every((r) => r.status === 403),
        JSON.stringify(idsRequests),
      );
      // three more refreshes: Placement is read again, the identifier API is not
      await page.waitForTimeout(3500);
      assert.equal(idsRequests.length, asked);
      assert.equal(await page.locator('.notice.error').count(), 0);
      assert.equal(await page.locator('[data-field="instance"]').count(), 0);

      // the bare-metal view links its held allocations to their instances without asking the identifier API
      await page.click('a[data-route="baremetal"]');
      await page.waitForSelector('tr[data-node="bm-gold-03"] [data-field="held-by"]');
      assert.equal(await page.locator('.notice.error').count(), 0);
      await page.click('a[data-route="pools"]');
      await page.waitForSelector('[data-pool="tenant-vlan"] [data-chart="free-strip"]');
      assert.equal(await page.locator('.notice.error').count(), 0);
      // the instances view itself says why it cannot show them
      await page.click('a[data-route="instances"]');
      await page.waitForSelector('.notice.error:has-text("The ids API refused this token the access (403)")');
      const listed = idsRequests.slice(asked);
      assert.ok(listed.length >= 1);
      assert.ok(
        listed.every((r) => r.status === 403 && new URL(r.url).pathname === '/ids/v1/service-instances'),
        JSON.stringify(listed),
      );
    });
  });
}
