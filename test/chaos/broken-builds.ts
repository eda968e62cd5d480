// Proof that the chaos checker catches what it claims: a deliberately broken allot — one guarantee
// taken out of a throwaway copy of dist/, never out of the sources — run through the chaos
// harness must make the checker fail.
//
//   npm run test:chaos:broken -- <name> [harness options, e.g. --seed 1 --minutes 2]
//
// Each breakage is a text replacement in the compiled JavaScript; it refuses to run when the
// text is not found (the code moved on: update the replacement). The copy is removed afterwards.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BREAKAGES } from './breakages.js';

/** minutes of load when the arguments do not say (the run takes about two more to start and settle) */
const DEFAULT_MINUTES = 2;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const [name, ...harnessArgs] = process.argv.slice(2);
const breakage = name ? BREAKAGES[name] : undefined;
if (!breakage) {
  console.error(`usage: test/chaos/broken-builds.ts <${Object.keys(BREAKAGES).join('|')}> [harness options]`);
  process.exit(2);
}
const copy = mkdtempSync(path.join(os.tmpdir(), `allot-broken-${name}-`));
let code = 2;
try {
  cpSync(path.join(root, 'dist'), path.join(copy, 'dist'), { recursive: true });
  // what dist/ needs beside it: the package (an ES module) and its dependencies
  cpSync(path.join(root, 'package.json'), path.join(copy, 'package.json'));
  symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
  for (const [file, edits] of Object.entries(breakage.edits)) {
    const full = path.join(copy, 'dist', file);
    let text = readFileSync(full, 'utf8');
    for (const [from, to] of edits) {
      if (!text.includes(from)) throw new Error(`${file} no longer contains ${JSON.stringify(from)}: update this breakage`);
      text = text.split(from).join(to);
    }
    writeFileSync(full, text);
  }
  console.log(`# broken build "${name}": ${breakage.what}`);
  // bounded: two minutes of load unless told otherwise
  const minutes = harnessArgs.includes('--minutes') ? [] : ['--minutes', String(DEFAULT_MINUTES)];
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'test/chaos/run.ts'), '--allot-dist', path.join(copy, 'dist'), ...minutes, ...harnessArgs],
    {
      stdio: 'inherit',
      cwd: root,
    },
  );
  code = run.status ?? 2;
  console.log(code === 1 ? `# the checker caught "${name}"` : `# the checker did NOT catch "${name}" (harness exit ${code})`);
} finally {
  rmSync(copy, { recursive: true, force: true });
}
process.exit(code === 1 ? 0 : 1);
