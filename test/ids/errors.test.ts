// The identifier API's error table against its documentation: clients read docs/ids.md to know
// every code they may meet.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { PROBLEM_CODES } from '../../src/ids/errors.js';

describe('identifier API problem codes', () => {
  test('docs/ids.md lists every problem code the API answers with', () => {
    const docs = readFileSync(new URL('../../docs/ids.md', import.meta.url), 'utf8');
    const missing = Object.keys(PROBLEM_CODES).filter((code) => !docs.includes(`\`${code}\``));
    assert.deepEqual(missing, []);
  });
});
