// `npm run check:cycles`: import cycles in src/, found by madge. Fails when a cycle involves a
// directory that has been made cycle-free (CLEAN below); other cycles are listed as warnings
// until their domain is done.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const CLEAN = ['baremetal/'];

const cli = createRequire(import.meta.url).resolve('madge/bin/cli.js');
const run = spawnSync(process.execPath, [cli, '--circular', '--extensions', 'ts', '--json', 'src'], { encoding: 'utf8' });
if (run.error || !run.stdout.trim().startsWith('[')) {
  console.error(`madge failed: ${run.error?.message ?? run.stderr}`);
  process.exit(2);
}
const cycles = JSON.parse(run.stdout) as string[][];
const bad = cycles.filter((cycle) => cycle.some((file) => CLEAN.some((dir) => file.startsWith(dir))));
for (const cycle of cycles) console.log(`${bad.includes(cycle) ? 'error' : 'warning'}: ${cycle.join(' > ')}`);
console.log(`${cycles.length} cycle(s), ${bad.length} involving ${CLEAN.join(', ')}`);
process.exit(bad.length ? 1 : 0);
