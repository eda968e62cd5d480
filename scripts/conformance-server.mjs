#!/usr/bin/env node
// The server command the conformance runner starts per gabbi file: `conformance-server.mjs
// PROFILE PORT`. Some files need server configuration (the runner's "profiles"); this maps each
// to allot's real options. Plain JavaScript so it starts fast (52 files, a fresh server each).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [profile = 'default', port] = process.argv.slice(2);
const PROFILES = {
  default: [],
  cors: ['--cors-allowed-origins', 'http://valid.example.com'],
  // Policy profiles (open-policy, secure-rbac) are not supported yet: served with the defaults.
};
const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), '../dist/cli/main.js');
const child = spawn(
  process.execPath,
  [cli, 'serve', '--db', 'sqlite::memory:', '--port', '0', '--placement-port', port, '--log-level', 'warn', ...(PROFILES[profile] ?? [])],
  { stdio: 'inherit' },
);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
