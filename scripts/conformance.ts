// `npm run conformance [-- runner args]`: play Placement's own gabbi files against allot, one
// fresh in-memory server per file. The runner and the gabbi files are Placement's material, not
// this repository's: `--conformance-runner PATH` or ALLOT_CONFORMANCE_RUNNER names run_gabbits.py
// (CI passes ../shared/conformance/placement/run_gabbits.py). Other arguments go to the runner
// (`--files 'allocations*'`, `--json out.json`, `--log-dir DIR`, `--source DIR`).
// `--postgres`: the same on PostgreSQL, a fresh database per file (DATABASE_URL, which must allow
// CREATE DATABASE, or a throwaway server as the tests use).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningPostgres, startEmbeddedPostgres } from '../test/helpers/postgres.js';
import { referenceFile } from './references.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const runnerAt = argv.indexOf('--conformance-runner');
const runner = referenceFile('conformance-runner', 'npm run conformance', runnerAt >= 0 ? argv[runnerAt + 1] : undefined);
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const serverCmd = `node ${path.join(root, 'scripts/conformance-server.mjs')} {profile} {port}`;
const args = argv.filter((a, i) => a !== '--postgres' && a !== '--conformance-runner' && (runnerAt < 0 || i !== runnerAt + 1));
const onPostgres = argv.includes('--postgres');
if (!args.includes('--server-cmd')) args.push('--server-cmd', serverCmd, '--run-server-config-fixtures');
if (!args.includes('--json')) args.push('--json', path.join(os.tmpdir(), 'allot-conformance.json'));

let postgres: RunningPostgres | null = null;
const env = { ...process.env };
if (onPostgres) {
  if (!process.env.DATABASE_URL) postgres = await startEmbeddedPostgres();
  env.ALLOT_CONFORMANCE_PG_ADMIN_URL = process.env.DATABASE_URL ?? postgres!.adminUrl;
}
const result = spawnSync(python, [runner, ...args], { stdio: 'inherit', cwd: root, env });
await postgres?.stop();
process.exit(result.status ?? 1);
