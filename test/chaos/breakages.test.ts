// Each deliberately broken build of `npm run test:chaos:broken` still applies to the built code:
// every text it replaces is in dist/ (npm test builds first). Two had stopped applying unnoticed
// when the code they break changed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BREAKAGES } from './breakages.js';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');

describe('the chaos suite’s broken builds', () => {
  for (const [name, breakage] of Object.entries(BREAKAGES)) {
    test(`${name}: every text it replaces is in dist/`, () => {
      for (const [file, edits] of Object.entries(breakage.edits)) {
        const text = readFileSync(path.join(dist, file), 'utf8');
        for (const [from] of edits) assert.ok(text.includes(from), `dist/${file} no longer contains ${JSON.stringify(from)}: update test/chaos/breakages.ts`);
      }
    });
  }
});
