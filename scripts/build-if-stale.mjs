// Builds dist/ (npm run build) only when it is missing or older than what it is built from, and
// says so on stderr first, naming why; otherwise does nothing. `npm start` runs it before serving
// (it rebuilt on every start), and bin/allot.js when a checkout has no dist/ yet (the first
// `npx allot` built for a minute without a word). Plain Node: it runs before anything is built.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** what the build writes last of each of its two steps (tsc, vite) */
const OUTPUTS = ['dist/cli/main.js', 'dist/ui/index.html'];
const INPUTS = ['src', 'ui', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

const mtimeOrNull = (file) => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? null;

/** The newest file under `entry` (a file or a directory): [path, mtime]. */
function newest(entry) {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return null;
  if (!stat.isDirectory()) return [entry, stat.mtimeMs];
  let found = null;
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules') continue;
    const candidate = newest(path.join(entry, name));
    if (candidate && (!found || candidate[1] > found[1])) found = candidate;
  }
  return found;
}

/** Why dist/ needs building, or null when it is up to date. */
function staleness() {
  const built = OUTPUTS.map((f) => [f, mtimeOrNull(path.join(root, f))]);
  const missing = built.find(([, t]) => t === null);
  if (missing) return `${missing[0]} is missing`;
  const builtAt = Math.min(...built.map(([, t]) => t));
  for (const input of INPUTS) {
    const found = newest(path.join(root, input));
    if (found && found[1] > builtAt) return `${path.relative(root, found[0])} is newer than dist/`;
  }
  return null;
}

const why = staleness();
if (why) {
  process.stderr.write(`allot: building dist/ first (npm run build, about a minute): ${why}\n`);
  // the build's own output goes to stderr too: stdout is the command's answer (-o json)
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) {
    process.stderr.write(`allot: the build failed (exit ${build.status ?? build.signal}); fix it and run npm run build\n`);
    process.exit(1);
  }
}
