// Checks the dashboard's browser tests share: that a screenshot shows a view (not a blank or an
// error page), and waiting until the page shows a number of elements.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { type Chromium, summarizePixels } from '../helpers/chromium.js';

/** The page's screenshot (saved in `dir`) shows a view: the header, enough colours, and at least so many pixels of each colour asked. */
export async function screenshotShows(browser: Chromium, page: Page, dir: string, name: string, colors: Record<string, number>): Promise<void> {
  const png = await page.screenshot({ fullPage: true });
  await writeFile(path.join(dir, `${name}.png`), png);
  const HEADER = '#0f172a';
  const pixels = await summarizePixels(browser.context, png, [HEADER, ...Object.keys(colors)]);
  const where = `${name}.png in ${dir}: ${JSON.stringify(pixels)}`;
  assert.equal(pixels.width, 1440, where);
  assert.ok(pixels.height >= 900, where);
  assert.ok(pixels.distinctColors >= 30, `too few colours, a blank page? ${where}`);
  // white panels on a light page: a real view measured 0.10–0.12; a blank one is 0
  assert.ok(pixels.nonBackground >= 0.06, `mostly one colour, a blank page? ${where}`);
  // the header bar: 1440 × 52 px of it
  assert.ok(pixels.matches[HEADER]! >= 1440 * 40, `no header bar: ${where}`);
  for (const [color, atLeast] of Object.entries(colors)) assert.ok(pixels.matches[color]! >= atLeast, `fewer than ${atLeast} px of ${color}: ${where}`);
}

/** Wait until the page shows exactly `n` elements matching `selector` (a failure guard, 10 s). */
export async function countReaches(page: Page, selector: string, n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await page.locator(selector).count();
  while (seen !== n) {
    if (Date.now() > deadline) assert.fail(`${selector}: ${seen} shown, expected ${n}`);
    await new Promise((r) => setTimeout(r, 50));
    seen = await page.locator(selector).count();
  }
}
