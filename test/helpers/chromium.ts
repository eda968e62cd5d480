// Debian's Chromium (/usr/bin/chromium, installed by scripts/system-deps.ts), driven headless by
// playwright-core, for the dashboard's tests and screenshots. Never a browser download of
// Playwright's own. The flags keep Chromium from calling out to the network at start.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** One browser with a fresh, throwaway profile. */
export async function launchChromium(viewport = { width: 1440, height: 900 }): Promise<Chromium> {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'allot-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport,
    deviceScaleFactor: 1,
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

export interface PixelSummary {
  width: number;
  height: number;
  /** colours in the image, counted after rounding each channel to 16 levels */
  distinctColors: number;
  /** share of pixels that differ from the most common colour */
  nonBackground: number;
  /** for each colour asked about (#rrggbb): how many pixels are within ±12 per channel of it */
  matches: Record<string, number>;
}

/** The little of a page's DOM that summarizePixels uses (this tsconfig has no DOM library). */
interface BrowserGlobals {
  Image: new () => { src: string; width: number; height: number; decode(): Promise<void> };
  document: {
    createElement(tag: 'canvas'): {
      width: number;
      height: number;
      getContext(kind: '2d'): {
        drawImage(img: unknown, x: number, y: number): void;
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
      };
    };
  };
}

/**
 * Read a PNG's pixels in a blank page of the browser (a canvas decodes it): enough to tell a blank
 * or broken screenshot from one that shows the view's charts, without pixel-exact references that
 * break on a font or anti-aliasing change.
 */
export async function summarizePixels(context: BrowserContext, png: Buffer, colors: string[]): Promise<PixelSummary> {
  const page: Page = await context.newPage();
  try {
    return await page.evaluate(
      async ({ data, colors }) => {
        const { Image, document } = globalThis as unknown as BrowserGlobals;
        const img = new Image();
        img.src = `data:image/png;base64,${data}`;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.width;
        canvas.height = img.height;
        const ctx = canvas.getContext('2d');
        ctx.drawImage(img, 0, 0);
        const px = ctx.getImageData(0, 0, img.width, img.height).data;
        const wanted = colors.map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
        const matches = colors.map(() => 0);
        const histogram = new Map<number, number>();
        for (let i = 0; i < px.length; i += 4) {
          const r = px[i]!;
          const g = px[i + 1]!;
          const b = px[i + 2]!;
          const key = ((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4);
          histogram.set(key, (histogram.get(key) ?? 0) + 1);
          wanted.forEach((w, k) => {
            if (Math.abs(w[0]! - r) <= 12 && Math.abs(w[1]! - g) <= 12 && Math.abs(w[2]! - b) <= 12) matches[k]!++;
          });
        }
        const total = px.length / 4;
        const background = Math.max(...histogram.values());
        return {
          width: img.width,
          height: img.height,
          distinctColors: histogram.size,
          nonBackground: (total - background) / total,
          matches: Object.fromEntries(colors.map((c, k) => [c, matches[k]!])),
        };
      },
      { data: png.toString('base64'), colors },
    );
  } finally {
    await page.close();
  }
}
