// `npm run lint`'s layering check (docs/architecture.md, "The layers"):
// 1. import cycles in src/ (type-only imports included), found by madge — layers depend one way;
// 2. a domain's store (src/<domain>/store/) is imported only inside that domain — domains meet
//    through services — and never by its routes (src/<domain>/routes/, views.ts): routes parse,
//    validate and call a service, reads included, and take their types from services or core.
// Any finding fails.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const DOMAINS = ['placement', 'baremetal', 'ids'];

const cli = createRequire(import.meta.url).resolve('madge/bin/cli.js');
const run = spawnSync(process.execPath, [cli, '--circular', '--extensions', 'ts', '--json', 'src'], { encoding: 'utf8' });
if (run.error || !run.stdout.trim().startsWith('[')) {
  console.error(`madge failed: ${run.error?.message ?? run.stderr}`);
  process.exit(2);
}
const cycles = JSON.parse(run.stdout) as string[][];
for (const cycle of cycles) console.log(`error: ${cycle.join(' > ')}`);
console.log(`${cycles.length} import cycle(s) in src/`);

/** Every .ts file below `dir`, as a path from the repository's root. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The relative module specifiers a file imports or re-exports (`import type` included), resolved from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)];
  return found.map((m) => relative('.', join(dirname(file), (m[1] ?? m[2])!)));
}

const domainOf = (path: string) => DOMAINS.find((d) => path.startsWith(`src/${d}/`));
const storeOf = (path: string) => DOMAINS.find((d) => path.startsWith(`src/${d}/store/`));
const isRoute = (path: string) => DOMAINS.some((d) => path.startsWith(`src/${d}/routes/`) || path === `src/${d}/views.ts`);

const layering: string[] = [];
for (const file of sources('src')) {
  for (const target of importsOf(file)) {
    const store = storeOf(target);
    if (!store) continue;
    if (domainOf(file) !== store) layering.push(`${file} imports ${target}: another domain's store (call its services)`);
    else if (isRoute(file)) layering.push(`${file} imports ${target}: a route imports no store (call a service; types come from it or core/)`);
  }
}
for (const line of layering) console.log(`error: ${line}`);
console.log(`${layering.length} store import(s) across the layers`);
process.exit(cycles.length || layering.length ? 1 : 0);
