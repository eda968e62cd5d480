// The dashboard at /ui, end to end: a real allot (SQLite and PostgreSQL) holding the demo cloud
// of ./demo.ts, created through the APIs, and Debian's Chromium opening each view. Each view must
// show that cloud's numbers (computed here from the demo's definitions) in text and charts; a new
// allocation must appear without a reload; and a screenshot of each view must show the view (its
// chart colours present, not a blank or an error page).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type Chromium, launchChromium } from '../helpers/chromium.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { AllotClient } from '../../src/client/index.js';
import { request } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { FAILED_ALLOCATION, NODES, PROVIDERS, type SeededDemo, allocatePlacement, consumerDefs, poolDefs, provisionState, seedDemo } from './demo.js';
import { countReaches, screenshotShows } from './page-checks.js';

const en = (n: number) => n.toLocaleString('en-US');

/** What Placement must report per class and per provider, from the demo's definitions. */
function expectedPlacement() {
  const capacity = new Map<string, Map<string, number>>();
  const used = new Map<string, Map<string, number>>();
  const ratios = new Map<string, number[]>();
  for (const p of PROVIDERS) {
    capacity.set(p.name, new Map());
    used.set(p.name, new Map());
    for (const [rc, inv] of Object.entries(p.inventories)) {
      capacity.get(p.name)!.set(rc, Math.floor((inv.total - (inv.reserved ?? 0)) * (inv.allocation_ratio ?? 1)));
      ratios.set(rc, [...(ratios.get(rc) ?? []), inv.allocation_ratio ?? 1]);
    }
  }
  for (const c of consumerDefs())
    for (const [name, resources] of Object.entries(c.allocations))
      for (const [rc, n] of Object.entries(resources)) used.get(name)!.set(rc, (used.get(name)!.get(rc) ?? 0) + n);
  const classTotals = new Map<string, { capacity: number; used: number }>();
  for (const [name, caps] of capacity)
    for (const [rc, cap] of caps) {
      const t = classTotals.get(rc) ?? { capacity: 0, used: 0 };
      t.capacity += cap;
      t.used += used.get(name)!.get(rc) ?? 0;
      classTotals.set(rc, t);
    }
  const loads = PROVIDERS.map((p) => ({
    name: p.name,
    load: Math.max(...[...capacity.get(p.name)!].map(([rc, cap]) => (used.get(p.name)!.get(rc) ?? 0) / cap)),
  }));
  loads.sort((a, b) => b.load - a.load || a.name.localeCompare(b.name));
  return { classTotals, ratios, loads };
}

const texts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();

let browser: Chromium;
before(async () => {
  browser = await launchChromium();
});
after(() => browser?.close());

for (const dialect of DIALECTS) {
  describe(`dashboard (${dialect})`, () => {
    const conductor = `dash-${dialect}`;
    let server: TestServer;
    let demo: SeededDemo;
    let page: Page;
    let shots: string;
    const pageProblems: string[] = [];
    const requested: string[] = [];
    const tokensSent = new Set<string>();

    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), conductorId: conductor, transitionTime: 20 });
      demo = await seedDemo(server.url);
      shots = await mkdtemp(path.join(os.tmpdir(), `allot-dashboard-${dialect}-`));
      page = await browser.context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') pageProblems.push(m.text());
      });
      page.on('pageerror', (e) => pageProblems.push(e.message));
      page.on('request', (r) => {
        requested.push(r.url());
        const token = r.headers()['x-auth-token'];
        if (token) tokensSent.add(token);
      });
    });
    after(async () => {
      await page?.close();
      await server?.close();
    });

    test('served at /ui from the built files, with a strict content security policy', async () => {
      const root = await fetch(`${server.url}/ui`, { redirect: 'manual' });
      assert.equal(root.status, 302);
      assert.equal(root.headers.get('location'), '/ui/');
      const index = await request('GET', `${server.url}/ui/`);
      assert.equal(index.status, 200);
      assert.match(index.headers.get('content-type')!, /^text\/html/);
      assert.equal(index.headers.get('cache-control'), 'no-cache');
      assert.match(index.headers.get('content-security-policy')!, /default-src 'self'/);
      const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
      assert.ok(script, index.text);
      const asset = await request('GET', server.url + script);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get('content-type')!, /^text\/javascript/);
      assert.match(asset.headers.get('cache-control')!, /immutable/);
      assert.doesNotMatch(index.text + asset.text, /https?:\/\/(?!www\.w3\.org)/, 'the page must load nothing from elsewhere');
      const missing = await request('GET', `${server.url}/ui/nothing-here.js`);
      assert.equal(missing.status, 404);
    });

    test('capacity: per resource class capacity, used, free and overcommit; heaviest and emptiest providers; trees', async () => {
      const { classTotals, ratios, loads } = expectedPlacement();
      await page.goto(`${server.url}/ui/#/capacity`);
      await page.waitForSelector('[data-view="capacity"] [data-rc="VCPU"]');
      assert.equal(await page.locator('[data-stat="providers"] .stat-value').innerText(), String(PROVIDERS.length));
      assert.equal(await page.locator('[data-stat="consumers"] .stat-value').innerText(), String(consumerDefs().length));
      assert.deepEqual(await page.locator('[data-rc]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-rc'))), [
        'VCPU',
        'PCPU',
        'MEMORY_MB',
        'DISK_GB',
        'SRIOV_NET_VF',
      ]);
      for (const [rc, t] of classTotals) {
        const bar = page.locator(`[data-rc="${rc}"] [data-chart="capacity-bar"]`);
        assert.equal(await bar.getAttribute('data-used'), String(t.used), rc);
        assert.equal(await bar.getAttribute('data-capacity'), String(t.capacity), rc);
      }
      const vcpu = classTotals.get('VCPU')!;
      assert.equal(
        await page.locator('[data-rc="VCPU"] [data-field="used"]').innerText(),
        `${en(vcpu.used)} vCPU (${Math.round((vcpu.used / vcpu.capacity) * 100)}%)`,
      );
      assert.equal(await page.locator('[data-rc="VCPU"] [data-field="free"]').innerText(), `${en(vcpu.capacity - vcpu.used)} vCPU`);
      assert.equal(await page.locator('[data-rc="VCPU"] [data-field="capacity"]').innerText(), `${en(vcpu.capacity)} vCPU`);
      assert.equal(
        await page.locator('[data-rc="VCPU"] [data-field="ratio"]').innerText(),
        `${Math.min(...ratios.get('VCPU')!)}×–${Math.max(...ratios.get('VCPU')!)}×`,
      );
      assert.equal(await page.locator('[data-rc="PCPU"] [data-field="ratio"]').innerText(), '1×');
      // overcommitted classes hatch what exists only through the ratio
      assert.equal(await page.locator('[data-rc="VCPU"] rect[fill="url(#hatch)"]').count(), 1);
      assert.equal(await page.locator('[data-rc="PCPU"] rect[fill="url(#hatch)"]').count(), 0);

      const heaviest = await texts(page, '[data-panel="heaviest"] tr[data-provider] td.name');
      assert.equal(heaviest[0], loads[0]!.name);
      assert.equal(
        await page.locator(`[data-panel="heaviest"] tr[data-provider="${loads[0]!.name}"] td.num`).innerText(),
        `${Math.round(loads[0]!.load * 100)}%`,
      );
      const emptiest = await texts(page, '[data-panel="emptiest"] tr[data-provider] td.name');
      assert.equal(emptiest[0], loads[loads.length - 1]!.name);
      // a child provider is named with its tree
      assert.ok(
        heaviest.some((n) => n.startsWith('cn-nfv-01 › cn-nfv-01-')),
        heaviest.join(),
      );

      const roots = PROVIDERS.filter((p) => !p.parent).map((p) => p.name);
      assert.deepEqual((await page.locator('tr[data-tree]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-tree')))).sort(), [...roots].sort());
      assert.equal(await page.locator('tr[data-tree="cn-nfv-01"] td.num').first().innerText(), '4');
      await screenshotShows(browser, page, shots, 'capacity', { '#2563eb': 2000, '#dbeafe': 2000, '#d97706': 200 });
    });

    test('consumers: each consumer with its allocations per provider, project and user', async () => {
      await page.click('a[data-route="consumers"]');
      await page.waitForSelector('[data-view="consumers"] tr[data-consumer]');
      const defs = [...demo.consumers];
      assert.equal(await page.locator('[data-stat="consumers"] .stat-value').innerText(), String(defs.length));
      assert.equal(
        await page.locator('[data-stat="allocations"] .stat-value').innerText(),
        String(defs.reduce((n, [, c]) => n + Object.keys(c.allocations).length, 0)),
      );
      assert.equal(await page.locator('tr[data-consumer]').count(), 25);
      assert.equal(await page.locator('[data-chart="top-consumers"] rect').count(), 10);
      // the largest consumers are the VNFs: 8 of 48 PCPU each
      const [vnfUuid, vnf] = defs.find(([, c]) => c.name === 'vnf-0')!;
      const row = page.locator(`tr[data-consumer="${vnfUuid}"]`);
      await row.getByText('telco').waitFor();
      const rowText = await row.innerText();
      for (const name of Object.keys(vnf.allocations)) assert.ok(rowText.includes(name), rowText);
      for (const chip of ['8 pCPU', '64 GiB memory', '8 SRIOV_NET_VF', '500 GB disk', 'nfv-orchestrator', 'INSTANCE', '17%'])
        assert.ok(rowText.includes(chip), `${chip} in ${rowText}`);
      // projects, with how many consumers each
      const perProject = new Map<string, number>();
      for (const [, c] of defs) perProject.set(c.project, (perProject.get(c.project) ?? 0) + 1);
      await page.waitForSelector('.notice:has-text("Reading the project")', { state: 'detached' });
      const projects = await page
        .locator('tr[data-project]')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-project'), r.querySelector('.small')!.textContent] as const));
      assert.deepEqual(new Map(projects), new Map([...perProject].map(([p, n]) => [p, `${n} consumers`])));
      // the filter finds a project's consumers
      await page.fill('#consumer-filter', 'ci-runners');
      const ci = defs.filter(([, c]) => c.project === 'ci-runners').map(([u]) => u);
      await countReaches(page, 'tr[data-consumer]', ci.length);
      assert.deepEqual((await page.locator('tr[data-consumer]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-consumer')))).sort(), ci.sort());
      await page.fill('#consumer-filter', '');
      await screenshotShows(browser, page, shots, 'consumers', { '#2563eb': 2000, '#dbeafe': 2000 });
    });

    test('bare metal: nodes by provision state with their allocations, and the conductor with its heartbeat', async () => {
      await page.click('a[data-route="baremetal"]');
      await page.waitForSelector('[data-chart="provision-states"]');
      const byState = new Map<string, number>();
      for (const n of NODES) byState.set(provisionState(n), (byState.get(provisionState(n)) ?? 0) + 1);
      const drawn = await page
        .locator('[data-chart="provision-states"] rect[data-segment]')
        .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-segment'), Number(r.getAttribute('data-value'))]));
      assert.deepEqual(Object.fromEntries(drawn), Object.fromEntries(byState));
      assert.equal(await page.locator('[data-chart="provision-states"]').getAttribute('data-total'), String(NODES.length));
      assert.equal(
        await page.locator('[data-stat="allocatable"] .stat-value').innerText(),
        String(NODES.filter((n) => n.state === 'available' && !n.maintenance).length),
      );

      const active = NODES.filter((n) => n.state === 'allocated' || n.state === 'active').length;
      const allocationStates = Object.fromEntries(
        await page
          .locator('[data-chart="allocation-states"] rect[data-segment]')
          .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-segment'), Number(r.getAttribute('data-value'))])),
      );
      assert.deepEqual(allocationStates, { active, error: 1 });
      assert.match(
        await page.locator(`tr[data-allocation="${FAILED_ALLOCATION.name}"]`).innerText(),
        /no available nodes match the resource class baremetal-xxl/,
      );
      for (const n of NODES.filter((x) => x.state === 'allocated' || x.state === 'active')) {
        const nodeRow = await page.locator(`tr[data-node="${n.name}"]`).innerText();
        assert.ok(nodeRow.includes(`alloc-${n.name} (active)`), nodeRow);
        assert.ok(nodeRow.includes(provisionState(n)), nodeRow);
      }
      assert.match(await page.locator('tr[data-node="bm-rack4-06"]').innerText(), /maintenance/);

      const conductorRow = page.locator(`tr[data-conductor="${conductor}"]`);
      assert.match(await conductorRow.innerText(), /alive/);
      assert.match(await conductorRow.locator('[data-field="heartbeat"]').innerText(), /^\d+ s ago$/);

      // a state in the chart's legend lists only its nodes
      await page.click('[data-panel="states"] button:text-is("enroll")');
      await countReaches(page, 'tr[data-node]', 2);
      assert.deepEqual(
        (await page.locator('tr[data-node]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')))).sort(),
        NODES.filter((n) => n.state === 'enroll').map((n) => n.name),
      );
      await page.click('[data-panel="states"] button:text-is("enroll")');
      await countReaches(page, 'tr[data-node]', NODES.length);
      await screenshotShows(browser, page, shots, 'baremetal', { '#22c55e': 1000, '#2563eb': 1000, '#94a3b8': 300, '#a78bfa': 200, '#dc2626': 300 });
    });

    test('identifier pools: utilization and where the free values are', async () => {
      await page.click('a[data-route="pools"]');
      await page.waitForSelector('[data-pool="vlan"] [data-chart="free-strip"]');
      const defs = poolDefs();
      assert.deepEqual(
        (await page.locator('[data-pool]').evaluateAll((ps) => ps.map((p) => p.getAttribute('data-pool')))).sort(),
        defs.map((d) => d.body.name).sort(),
      );
      for (const d of defs) {
        const pool = page.locator(`[data-pool="${d.body.name}"]`);
        // values, addresses, or (a prefix pool) prefixes of its prefix_length: the p2p pool's /31s
        const taken = d.taken.reduce((n, [, c]) => n + c, 0);
        assert.equal(await pool.locator('[data-field="used"]').innerText(), en(taken), d.body.name);
        assert.equal(await pool.locator('[data-field="allocations"]').innerText(), en(d.taken.length), d.body.name);
      }
      // the VLAN strip: 160 buckets over 1–4094; the excluded VLAN 1 grey, the dense low band mostly
      // taken, the top free; the static band 2–99 marked
      const free = await page
        .locator('[data-pool="vlan"] [data-chart="free-strip"] rect[data-free]')
        .evaluateAll((rs) => rs.map((r) => r.getAttribute('data-free')));
      assert.equal(free.length, 160);
      assert.equal(free[0], '1', 'bucket 1–25: VLAN 1 excluded, 2–25 (static band) free');
      const dense = free.slice(5, 10).map(Number);
      assert.ok(
        dense.every((f) => f < 0.2),
        `VLANs 100–419 are 93% taken: ${dense}`,
      );
      assert.equal(free[159], '1');
      assert.equal(await page.locator('[data-pool="vlan"] rect[fill="#7c3aed"]').count(), 1);
      // the selected pool's allocations
      await page.click('[data-pool="vlan"] button.pool-name');
      await page.waitForSelector('#pool-allocations h2:text-is("Allocations in vlan")');
      await page.waitForSelector('tr[data-id-allocation="vlan-owner-0"]');
      await screenshotShows(browser, page, shots, 'pools', { '#bbf7d0': 5000, '#7c3aed': 30, '#2563eb': 1000 });
    });

    test('live updates: new allocations in each API show without reloading the page', async () => {
      await page.goto(`${server.url}/ui/?refresh=1#/consumers`);
      await page.waitForSelector('tr[data-consumer]');
      await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));

      const allot = new AllotClient({ url: server.url, token: 'admin' });
      const consumer = randomUUID();
      await allocatePlacement(
        allot.placement,
        consumer,
        { name: 'live', project: 'live-project', user: 'live-user', allocations: { 'cn-r1-03': { VCPU: 32, MEMORY_MB: 131072 } } },
        demo.providers,
      );
      await page.locator(`tr[data-consumer="${consumer}"]`).getByText('live-project').waitFor({ timeout: 15_000 });

      await page.click('a[data-route="capacity"]');
      const vcpu = expectedPlacement().classTotals.get('VCPU')!;
      await page.waitForSelector(`[data-rc="VCPU"] [data-chart="capacity-bar"][data-used="${vcpu.used + 32}"]`, { timeout: 15_000 });

      await page.click('a[data-route="baremetal"]');
      await page.waitForSelector('[data-chart="provision-states"]');
      await allot.baremetal.createAllocation({
        name: 'alloc-live',
        resource_class: 'baremetal-large',
        candidate_nodes: [demo.nodes.get('bm-rack4-04')!],
        owner: 'bm-project',
      });
      assert.equal((await allot.baremetal.waitForAllocation('alloc-live')).state, 'active');
      await page.locator('tr[data-node="bm-rack4-04"]').getByText('alloc-live (active)').waitFor({ timeout: 15_000 });

      await page.click('a[data-route="pools"]');
      const vlan = poolDefs().find((d) => d.body.name === 'vlan')!;
      await page.waitForSelector(`[data-pool="vlan"] [data-field="allocations"]:text-is("${en(vlan.taken.length)}")`);
      assert.equal((await allot.ids.allocate('vlan', { owner: 'live-owner', count: 4 })).created, true);
      await page.waitForSelector(`[data-pool="vlan"] [data-field="allocations"]:text-is("${en(vlan.taken.length + 1)}")`, { timeout: 15_000 });
      assert.equal(await page.locator('[data-pool="vlan"] [data-field="used"]').innerText(), en(vlan.taken.length + 4));

      assert.equal(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded), true, 'the page was reloaded');
      assert.equal(await page.locator('[data-live]').getAttribute('data-live'), 'live');
    });

    test('the sign-in step: the token given is the one sent to every API', async () => {
      assert.deepEqual((await request('GET', `${server.url}/ui/server.json`)).body, { auth: 'noauth' });
      await page.goto(`${server.url}/ui/#/capacity`);
      await page.waitForSelector('[data-rc="VCPU"]');
      assert.deepEqual([...tokensSent], ['admin'], 'noauth: Placement is read as admin');
      await page.click('button.token');
      assert.match(await page.locator('.signin').innerText(), /runs without authentication/);
      await page.fill('.signin input', 'reader-only');
      await page.click('.signin button[type="submit"]');
      // noauth Placement takes the token as a user without the admin role: refused, and said so
      await page.waitForSelector('.notice.error:has-text("The placement API refused this token the access (403)")');
      assert.ok(tokensSent.has('reader-only'));
      await page.click('button.token');
      await page.click('.signin button:text-is("No authentication (noauth)")');
      await page.waitForSelector('[data-rc="VCPU"]');
      await page.waitForSelector('.notice.error', { state: 'detached' });
    });

    test('the page logged no error and asked nothing of any other server', () => {
      assert.deepEqual(
        pageProblems.filter((p) => !p.includes('403')),
        [],
      );
      const elsewhere = requested.filter((u) => !u.startsWith(`${server.url}/`) && !u.startsWith('data:'));
      assert.deepEqual(elsewhere, []);
    });
  });
}
