// `npm test`: every test file under test/, against real databases. PostgreSQL comes from
// DATABASE_URL when set (it must allow CREATE DATABASE), otherwise a throwaway server is started
// for the run. Files named *keystone* get a real Keystone, started once for the run (it takes
// about a minute). The OpenStack command-line clients the client tests drive, and Keystone, are
// installed when missing (scripts/system-deps.ts). Arguments narrow the run to matching files:
// `npm test -- placement`.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type StartedKeystone, startKeystone } from '../test/helpers/keystone.js';
import { type RunningPostgres, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { ensureSystemPackages } from './system-deps.js';

/** A test file that runs longer fails (ALLOT_TEST_FILE_TIMEOUT_S overrides). */
const FILE_TIMEOUT_MS = Number(process.env.ALLOT_TEST_FILE_TIMEOUT_S ?? 900) * 1000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return testFiles(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = testFiles(path.join(root, 'test'))
  .filter((f) => filters.length === 0 || filters.some((x) => path.relative(root, f).includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files match');
  process.exit(1);
}

ensureSystemPackages();

// A fixture that fails to start says why in one line; what the run started is stopped either way.
let postgres: RunningPostgres | null = null;
let keystone: StartedKeystone | null = null;
let code = 1;
try {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    postgres = await startEmbeddedPostgres();
    adminUrl = postgres.adminUrl;
    console.log(`# throwaway PostgreSQL at ${adminUrl.replace(/:[^:@/]*@/, ':***@')}`);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, ALLOT_TEST_PG_ADMIN_URL: adminUrl };
  if (files.some((f) => path.basename(f).includes('keystone')) && !process.env.ALLOT_TEST_KEYSTONE_DIR) {
    console.log('# starting a real Keystone for the run');
    keystone = await startKeystone().catch((err: Error) => {
      throw new Error(`cannot start Keystone: ${err.message}`);
    });
    env.ALLOT_TEST_KEYSTONE_DIR = keystone.stateDir;
  }
  // --test-timeout bounds each FILE (node runs each in a process of its own). The slowest,
  // test/cli/package.test.ts (npm pack with the build + npm install from the registry), takes ~4
  // minutes on a quiet 2-core machine and went past 10 on a loaded one.
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', `--test-timeout=${FILE_TIMEOUT_MS}`, ...files], {
    stdio: 'inherit',
    cwd: root,
    env,
  });
  code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
} catch (err) {
  console.error(`npm test: ${(err as Error).message}`);
} finally {
  await postgres?.stop();
  await keystone?.stop();
}
process.exit(code);
