// The Node.js versions allot states it supports (package.json `engines`) are ones every locked
// package supports too, so `npm ci` on any of them warns no EBADENGINE (it did: cookie@2 via
// fastify → light-my-request wants Node >= 22), and the Node this runs on is one of them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file: string) => JSON.parse(readFileSync(path.join(root, file), 'utf8'));
const supported: string = readJson('package.json').engines.node;

test('every locked package supports every Node version package.json engines names', () => {
  const lock = readJson('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } }> };
  const wantMore = Object.entries(lock.packages)
    .filter(([, p]) => p.engines?.node && !semver.subset(supported, p.engines.node))
    .map(([where, p]) => `${where}@${p.version} wants node ${p.engines!.node}`);
  assert.deepEqual(wantMore, [], `engines says node ${supported}`);
});

test('the Node running the tests is a supported one', () => {
  assert.ok(semver.satisfies(process.version, supported), `${process.version} is not in ${supported}`);
});
