// `npm run screenshots`: the dashboard's pictures in docs/images/, taken from a real allot with
// the demo cloud of test/ui/demo.ts (Placement providers and instances, bare-metal nodes,
// identifier pools, service instances reserving across the three) in headless Chromium. A second allot process on the same database is started
// and stopped, so the conductor table shows one live and one stopped conductor.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../test/helpers/chromium.js';
import { startServer } from '../test/helpers/server.js';
import { seedDemo, seedInstances } from '../test/ui/demo.js';
import { ensureSystemPackages } from './system-deps.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'docs/images');

/** view → what must be on the page before it is photographed (`instance`: one service instance's page) */
const VIEWS: Array<{ route: string; ready: string }> = [
  { route: 'capacity', ready: '[data-rc="VCPU"] [data-chart="capacity-bar"]' },
  { route: 'consumers', ready: 'tr[data-consumer] >> text=web-frontend' },
  { route: 'baremetal', ready: '[data-chart="provision-states"] [data-segment="active"]' },
  { route: 'pools', ready: '[data-pool="vlan"] [data-chart="free-strip"]' },
  { route: 'instances', ready: 'tr[data-instance] .chip' },
  { route: 'instance', ready: 'tr[data-holding="uplink"]' },
];

ensureSystemPackages(['chromium']);
const dir = await mkdtemp(path.join(os.tmpdir(), 'allot-screenshots-'));
const db = `sqlite:${path.join(dir, 'allot.db')}`;
const server = await startServer({ db, conductorId: 'allot-a', transitionTime: 20, heartbeatInterval: 2_000 });
const chromium = await launchChromium({ width: 1440, height: 900 });
try {
  const other = await startServer({ db, conductorId: 'allot-b', transitionTime: 20 });
  await seedDemo(server.url);
  const { instances } = await seedInstances(server.url);
  await other.close();

  const page = await chromium.context.newPage();
  for (const view of VIEWS) {
    const route = view.route === 'instance' ? `instances/${instances.get('web-a')}` : view.route;
    await page.goto(`${server.url}/ui/#/${route}`);
    await page.waitForSelector(view.ready, { timeout: 30_000 });
    await page.waitForSelector('[data-live="live"]');
    await page.waitForTimeout(500);
    const file = path.join(out, `dashboard-${view.route}.png`);
    await writeFile(file, await page.screenshot({ fullPage: true }));
    console.log(`wrote ${path.relative(root, file)}`);
  }
  // the sign-in step, as an operator of a Keystone-protected allot meets it
  await page.goto(`${server.url}/ui/#/capacity`);
  await page.waitForSelector(VIEWS[0]!.ready);
  await page.click('button.token');
  await page.waitForSelector('.signin');
  const file = path.join(out, 'dashboard-sign-in.png');
  await writeFile(file, await page.screenshot());
  console.log(`wrote ${path.relative(root, file)}`);
} finally {
  await chromium.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
