// The deployment files as written (deploy/): the systemd unit passes `systemd-analyze verify`, and
// neither it nor the container image sets a setting that would silently beat the configuration
// file an operator writes (flags > environment > file > defaults); the Dockerfile copies files that
// exist, and test/cli/package.test.ts packs and runs allot from exactly those. No container engine
// builds the image here (see docs/operations.md for what is and is not proven).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { dockerCopySources, dockerRunEnv } from './helpers/dockerfile.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const UNIT = path.join(root, 'deploy/allot.service');
const work = mkdtempSync(path.join(os.tmpdir(), 'allot-deploy-test-'));

/** `allot config -o json` with exactly this environment: key → { value, source }. */
function effectiveConfig(env: Record<string, string>): Record<string, { value: unknown; source: string }> {
  const res = spawnSync(process.execPath, [path.join(root, 'dist/cli/main.js'), 'config', '-o', 'json'], {
    env: { PATH: process.env.PATH!, ...env },
    encoding: 'utf8',
    cwd: work,
  });
  assert.equal(res.status, 0, res.stderr);
  return Object.fromEntries((JSON.parse(res.stdout) as Array<{ key: string; value: unknown; source: string }>).map((e) => [e.key, e]));
}

/** The operator's file, as docs/operations.md shows it: the database is named there. */
function operatorFile(): string {
  const file = path.join(work, 'allot.yaml');
  writeFileSync(file, 'db: postgres://allot:secret@db.internal:5432/allot\nport: 8779\n');
  return file;
}

/** The unit's own Environment= assignments (EnvironmentFile= is the operator's). */
function unitEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, assignments] of readFileSync(UNIT, 'utf8').matchAll(/^Environment=(.*)$/gm)) {
    for (const [, key, value] of assignments!.matchAll(/"?(\w+)=([^"\s]*)"?/g)) env[key!] = value!;
  }
  return env;
}

/** Run systemd-analyze verify on a unit file in a root holding systemd's own units and an `allot` to start. */
function verify(unitText: string): { status: number | null; output: string } {
  const verifyRoot = mkdtempSync(path.join(work, 'root-'));
  mkdirSync(path.join(verifyRoot, 'usr/lib/systemd'), { recursive: true });
  cpSync('/usr/lib/systemd/system', path.join(verifyRoot, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
  // the ExecStart= the package installs (npm install -g): here a stand-in that runs the built CLI
  mkdirSync(path.join(verifyRoot, 'usr/local/bin'), { recursive: true });
  writeFileSync(path.join(verifyRoot, 'usr/local/bin/allot'), `#!/bin/sh\nexec ${process.execPath} ${path.join(root, 'dist/cli/main.js')} "$@"\n`);
  chmodSync(path.join(verifyRoot, 'usr/local/bin/allot'), 0o755);
  mkdirSync(path.join(verifyRoot, 'etc/systemd/system'), { recursive: true });
  writeFileSync(path.join(verifyRoot, 'etc/systemd/system/allot.service'), unitText);
  const res = spawnSync('systemd-analyze', ['verify', `--root=${verifyRoot}`, '/etc/systemd/system/allot.service'], { encoding: 'utf8' });
  assert.ok(!res.error, `systemd-analyze cannot run (apt-get install -y systemd): ${res.error?.message}`);
  return { status: res.status, output: `${res.stdout}${res.stderr}`.trim() };
}

describe('deploy/', () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  test('systemd-analyze verify finds nothing to say about allot.service', () => {
    const unit = readFileSync(UNIT, 'utf8');
    assert.deepEqual(verify(unit), { status: 0, output: '' });
    // the check reads the unit: a misspelt directive is reported
    const misspelt = verify(unit.replace(/^ProtectHome=/m, 'ProtectHom='));
    assert.match(misspelt.output, /Unknown key 'ProtectHom'/);
  });

  test("the unit sets no setting: the operator's configuration file decides the database", () => {
    // what allot.env holds per docs/operations.md: the file's name and this host's conductor name
    const file = operatorFile();
    const config = effectiveConfig({ ...unitEnvironment(), ALLOT_CONFIG: file, ALLOT_CONDUCTOR_ID: 'allot-1' });
    assert.deepEqual(config.db, { key: 'db', value: 'postgres://allot:****@db.internal:5432/allot', source: `file ${file}` });
    assert.equal(config.port!.source, `file ${file}`);
    // without a db anywhere the default is relative to WorkingDirectory=, the StateDirectory=
    assert.match(readFileSync(UNIT, 'utf8'), /^WorkingDirectory=\/var\/lib\/allot$/m);
    assert.match(readFileSync(UNIT, 'utf8'), /^StateDirectory=allot$/m);
    assert.equal(effectiveConfig(unitEnvironment()).db!.value, 'sqlite:./allot.db');
  });

  test("the image sets no database: a configuration file's db is used, the image's default is in its volume", () => {
    const env = dockerRunEnv();
    const file = operatorFile();
    const config = effectiveConfig({ ...env, ALLOT_CONFIG: file });
    assert.deepEqual(config.db, { key: 'db', value: 'postgres://allot:****@db.internal:5432/allot', source: `file ${file}` });
    assert.equal(config.port!.source, `file ${file}`);
    // the one setting the image makes, documented in the Dockerfile: a container listens on its interface
    assert.deepEqual(config.host, { key: 'host', value: '0.0.0.0', source: 'env ALLOT_HOST' });
    const dockerfile = readFileSync(path.join(root, 'deploy/Dockerfile'), 'utf8');
    assert.match(dockerfile, /^WORKDIR \/var\/lib\/allot$/m);
    assert.match(dockerfile, /^VOLUME \["\/var\/lib\/allot"\]$/m);
  });

  test('the image without authentication settings refuses to start, in one line naming what to set', () => {
    const res = spawnSync(process.execPath, [path.join(root, 'dist/cli/main.js'), 'serve', '--port', '0'], {
      env: { PATH: process.env.PATH!, ...dockerRunEnv(), ALLOT_DB: 'sqlite::memory:' },
      encoding: 'utf8',
      cwd: work,
      timeout: 60_000,
    });
    assert.equal(res.status, 1, res.stderr);
    assert.match(res.stderr.trim(), /^allot: cannot start: refusing to listen on 0\.0\.0\.0 without authentication: .*--auth keystone.*--insecure-noauth/);
  });

  test("every file the image's build copies is in the repository, and they are what npm pack builds from", () => {
    const sources = dockerCopySources();
    for (const source of sources) assert.ok(existsSync(path.join(root, source)), `COPY ${source}: no such file in the repository`);
    // npm pack runs `prepare` → `npm run build`: the inputs it names must be copied
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts.prepare!, /npm run build/);
    for (const [, file] of pkg.scripts.build!.matchAll(/(?:-p|--config) (\S+)/g)) {
      assert.ok(
        sources.some((s) => file === s || file!.startsWith(`${s}/`)),
        `the build reads ${file}, which the Dockerfile does not copy`,
      );
    }
  });
});
