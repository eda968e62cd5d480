// The dashboard's build: ui/ → dist/ui/, served by allot at /ui (src/server/dashboard.ts).
// Everything is bundled (no CDN, no web fonts): the page works on a machine with no network.
// `npm run ui:dev` serves the sources with live reload and passes the API paths on to a running
// allot (ALLOT_URL, default http://127.0.0.1:8778).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const allot = process.env.ALLOT_URL ?? 'http://127.0.0.1:8778';

export default defineConfig({
  root: here,
  base: '/ui/',
  logLevel: 'warn',
  // Preact's JSX runtime, without a framework plugin.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  server: {
    proxy: Object.fromEntries(['/placement', '/baremetal', '/ids'].map((prefix) => [prefix, { target: allot, changeOrigin: true }])),
  },
  build: {
    outDir: path.join(here, '../dist/ui'),
    emptyOutDir: true,
    // No inlined data: URLs, so the server's Content-Security-Policy can stay 'self' only.
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
