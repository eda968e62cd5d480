// The optional suites that need other projects' material (Placement's gabbi tests, the real
// Placement and Ironic) take it from an option or an environment variable, never from a path
// outside the repository; without it they stop at once with one line that says what to pass and
// what to install, and exit 2 — no stack trace, nothing started.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from './helpers/postgres.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  for (const name of ['ALLOT_CONFORMANCE_RUNNER', 'ALLOT_REAL_PLACEMENT', 'ALLOT_REAL_IRONIC']) delete env[name];
  const res = spawnSync(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

function assertOneLine(res: { status: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(res.status, 2, res.stderr);
  assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  assert.match(res.stderr.trim(), pattern);
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
}

describe("suites that need other projects' material", () => {
  test('npm run conformance without the gabbi runner names the option, the variable and the packages', () => {
    assertOneLine(
      run(['scripts/conformance.ts']),
      /^npm run conformance: needs conformance-runner: pass --conformance-runner PATH or set ALLOT_CONFORMANCE_RUNNER \(.*run_gabbits\.py.*apt-get install -y python3-gabbi python3-yaml\)$/,
    );
    assertOneLine(
      run(['scripts/conformance.ts', '--conformance-runner', '/nonexistent/run_gabbits.py']),
      /conformance-runner \/nonexistent\/run_gabbits\.py is not there: pass --conformance-runner PATH/,
    );
  });

  test('the benches against the real services say which launcher to pass', () => {
    assertOneLine(
      run(['bench/placement.ts', '--vs-real']),
      /^bench:placement --vs-real: needs real-placement: pass --real-placement PATH or set ALLOT_REAL_PLACEMENT .*python3-placement uwsgi/,
    );
    assertOneLine(
      run(['bench/baremetal.ts', '--vs-real']),
      /^bench:baremetal --vs-real: needs real-ironic: pass --real-ironic PATH or set ALLOT_REAL_IRONIC .*python3-ironic/,
    );
    assertOneLine(run(['bench/all.ts', '--only', 'baremetal']), /^npm run bench: needs real-ironic: pass --real-ironic PATH or set ALLOT_REAL_IRONIC/);
  });

  test('a differential run whose reference does not answer says how to start one', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    assertOneLine(
      run(['scripts/placement-differential.ts', nobody, nobody]),
      /^placement-differential: nothing answers at http:.*: start the real Placement there first .*ALLOT_REAL_PLACEMENT/,
    );
    assertOneLine(
      run(['scripts/baremetal-differential.ts', nobody, nobody]),
      /^baremetal-differential: nothing answers at .*: start the real Ironic there first .*ALLOT_REAL_IRONIC/,
    );
    assertOneLine(run(['scripts/candidates-differential.ts', '--real', nobody]), /^candidates-differential: nothing answers at .*real Placement/);
  });
});
