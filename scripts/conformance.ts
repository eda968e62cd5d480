// `npm run conformance [-- runner args]`: play Placement's own gabbi files (../shared/conformance)
// against allot, one fresh in-memory server per file. Extra arguments go to the runner
// (`--files 'allocations*'`, `--json out.json`, `--log-dir DIR`, `--source DIR`).
// `--postgres`: the same on PostgreSQL, a fresh database per file (DATABASE_URL, which must allow
// CREATE DATABASE, or a throwaway server as the tests use).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningPostgres, startEmbeddedPostgres } from '../test/helpers/postgres.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runner = process.env.ALLOT_CONFORMANCE_RUNNER ?? path.resolve(root, '../shared/conformance/placement/run_gabbits.py');
if (!existsSync(runner)) {
  console.error(`conformance runner not found at ${runner} (set ALLOT_CONFORMANCE_RUNNER)`);
  process.exit(2);
}
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const serverCmd = `node ${path.join(root, 'scripts/conformance-server.mjs')} {profile} {port}`;
const args = process.argv.slice(2).filter((a) => a !== '--postgres');
const onPostgres = process.argv.includes('--postgres');
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
