// `npm start` builds dist/ only when it is missing or older than its sources, and then says so on
// stderr (it rebuilt on every start); the `allot` command in a checkout without dist/ (the first
// `npx allot`) builds first and says so (it built for a minute without a word). Run in a scratch
// project holding the real scripts/build-if-stale.mjs and bin/allot.js, whose `build` writes the
// two outputs and counts its runs, so no test waits for tsc and vite.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(os.tmpdir(), 'allot-build-if-stale-'));
const at = (...parts: string[]) => path.join(work, ...parts);
const builds = () => (existsSync(at('builds')) ? readFileSync(at('builds'), 'utf8').length : 0);

const FAKE_BUILD = [
  "const fs = require('fs');",
  "fs.mkdirSync('dist/cli', { recursive: true }); fs.mkdirSync('dist/ui', { recursive: true });",
  "fs.writeFileSync('dist/cli/main.js', 'console.log(\"allot ran\")\\n'); fs.writeFileSync('dist/ui/index.html', '');",
  "fs.appendFileSync('builds', 'x'); console.log('build output');",
].join(' ');

function write(file: string, text: string) {
  mkdirSync(path.dirname(at(file)), { recursive: true });
  writeFileSync(at(file), text);
}

const run = (file: string) => spawnSync(process.execPath, [at(file)], { cwd: work, encoding: 'utf8', timeout: 60_000 });

describe('building dist/ before a start', () => {
  beforeEach(() => {
    rmSync(work, { recursive: true, force: true });
    cpSync(path.join(root, 'scripts/build-if-stale.mjs'), at('scripts/build-if-stale.mjs'));
    cpSync(path.join(root, 'bin/allot.js'), at('bin/allot.js'));
    write('package.json', JSON.stringify({ type: 'module', scripts: { build: `node -e "${FAKE_BUILD.replaceAll('"', '\\"')}"` } }));
    write('src/cli/main.ts', '');
    write('ui/index.html', '');
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  test('package.json: npm start and the allot command go through the check', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    assert.equal(pkg.scripts.prestart, 'node scripts/build-if-stale.mjs');
    assert.equal(pkg.bin.allot, 'bin/allot.js');
  });

  test('no dist/: builds once, saying why on stderr, and nothing on stdout', () => {
    const res = run('scripts/build-if-stale.mjs');
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /^allot: building dist\/ first \(npm run build, about a minute\): dist\/cli\/main\.js is missing\n/);
    assert.match(res.stderr, /build output/);
    assert.equal(res.stdout, '');
    assert.equal(builds(), 1);
  });

  test('dist/ newer than every source: no build and not a word', () => {
    run('scripts/build-if-stale.mjs');
    const again = run('scripts/build-if-stale.mjs');
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.stderr + again.stdout, '');
    assert.equal(builds(), 1);
  });

  test('a source newer than dist/: builds, naming that source', () => {
    run('scripts/build-if-stale.mjs');
    const later = new Date(Date.now() + 60_000);
    utimesSync(at('src/cli/main.ts'), later, later);
    const res = run('scripts/build-if-stale.mjs');
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /: src\/cli\/main\.ts is newer than dist\/\n/);
    assert.equal(builds(), 2);
  });

  test('the allot command in a checkout without dist/ builds first, says so, then runs', () => {
    const res = run('bin/allot.js');
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /allot: building dist\/ first .*dist\/cli\/main\.js is missing/);
    assert.equal(res.stdout, 'allot ran\n');
    const again = run('bin/allot.js');
    assert.equal(again.stderr, '');
    assert.equal(builds(), 1);
  });

  test('a failing build stops the start with a message', () => {
    write('package.json', JSON.stringify({ scripts: { build: 'exit 3' } }));
    const res = run('scripts/build-if-stale.mjs');
    assert.equal(res.status, 1);
    assert.match(res.stderr, /allot: the build failed \(exit 3\); fix it and run npm run build/);
  });
});
