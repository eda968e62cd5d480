#!/usr/bin/env node
// The server command the conformance runner starts per gabbi file: `conformance-server.mjs
// PROFILE PORT`. Some files need server configuration (the runner's "profiles"); this maps each
// to allot's real options. Plain JavaScript so it starts fast (52 files, a fresh server each).
// With ALLOT_CONFORMANCE_PG_ADMIN_URL set (`npm run conformance -- --postgres`), each server gets
// a fresh PostgreSQL database of its own, dropped when it stops; otherwise an in-memory SQLite.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const [profile = 'default', port] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
// Placement's test fixtures run its policy with enforce_new_defaults off (the legacy `role:admin`
// rules OR-ed in), except SecureRBACPolicyFixture, which runs today's defaults as allot does.
const LEGACY = ['--no-enforce-new-defaults'];
const PROFILES = {
  default: LEGACY,
  cors: [...LEGACY, '--cors-allowed-origins', 'http://valid.example.com'],
  'open-policy': [...LEGACY, '--policy-file', path.join(here, 'conformance-open-policy.yaml')],
  'secure-rbac': [],
};
if (!(profile in PROFILES)) {
  console.error(`conformance-server: unknown profile ${profile}`);
  process.exit(2);
}

const admin = process.env.ALLOT_CONFORMANCE_PG_ADMIN_URL;
const adminQuery = async (text) => {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
};
let db = 'sqlite::memory:';
let dbName = null;
if (admin) {
  dbName = `allot_conformance_${process.pid}_${Date.now().toString(36)}`;
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const url = new URL(admin);
  url.pathname = `/${dbName}`;
  db = url.toString();
}

const cli = path.join(here, '../dist/cli/main.js');
const child = spawn(process.execPath, [cli, 'serve', '--db', db, '--port', '0', '--placement-port', port, '--log-level', 'warn', ...PROFILES[profile]], {
  stdio: 'inherit',
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', async (code, signal) => {
  if (dbName) await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  process.exit(code ?? (signal ? 1 : 0));
});
