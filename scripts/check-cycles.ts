// `npm run check:cycles`: import cycles in src/ (type-only imports included), found by madge.
// Any cycle fails: layers depend one way (docs/architecture.md).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const cli = createRequire(import.meta.url).resolve('madge/bin/cli.js');
const run = spawnSync(process.execPath, [cli, '--circular', '--extensions', 'ts', '--json', 'src'], { encoding: 'utf8' });
if (run.error || !run.stdout.trim().startsWith('[')) {
  console.error(`madge failed: ${run.error?.message ?? run.stderr}`);
  process.exit(2);
}
const cycles = JSON.parse(run.stdout) as string[][];
for (const cycle of cycles) console.log(`error: ${cycle.join(' > ')}`);
console.log(`${cycles.length} import cycle(s) in src/`);
process.exit(cycles.length ? 1 : 0);
