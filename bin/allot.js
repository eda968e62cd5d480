#!/usr/bin/env node
// The `allot` command (package.json bin). In a checkout that has no dist/ yet — the first `npx
// allot` after a clone — it builds dist/ first and says so on stderr (npm's own build for npx is
// silent); an installed package carries dist/ and starts at once.
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../dist/cli/main.js', import.meta.url)) && existsSync(new URL('../scripts/build-if-stale.mjs', import.meta.url))) {
  await import('../scripts/build-if-stale.mjs');
}
await import('../dist/cli/main.js');
