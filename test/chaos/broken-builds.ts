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

/** minutes of load when the arguments do not say (the run takes about two more to start and settle) */
const DEFAULT_MINUTES = 2;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Breakage {
  what: string;
  /** file under dist/ → [text, replacement] pairs */
  edits: Record<string, Array<[string, string]>>;
}

const BREAKAGES: Record<string, Breakage> = {
  'no-consumer-generation-compare': {
    what: 'a Placement write does not compare the consumer generation the client sent (both the one-statement path and the general one)',
    edits: {
      'placement/store/one-statement-writes.js': [
        ['where c.uuid = v.uuid and c.generation = v.generation and c.held_by is null', 'where c.uuid = v.uuid and c.held_by is null'],
      ],
      'placement/store/allocations.js': [['existing?.generation !== w.generation', 'existing === undefined']],
    },
  },
  'no-capacity-check': {
    what: 'a Placement claim does not check the provider’s capacity (both paths)',
    edits: {
      'placement/store/one-statement-writes.js': [['floor((i.total - i.reserved) * i.allocation_ratio)', '1000000000']],
      'core/capacity.js': [['return capacityOf(inv.total, inv.reserved, inv.allocation_ratio);', 'return 1e9;']],
    },
  },
  'unfenced-conductor': {
    what: 'a conductor finishes an allocation without checking it still owns it (no `conductor_affinity = <me>` and no `state = allocating` in its final write), and its worker goes on with an allocation taken over from it',
    edits: {
      'baremetal/store/allocations.js': [[".where('conductor_affinity', '=', conductor)\n        .where('state', '=', 'allocating')", '']],
      'baremetal/services/allocations.js': [
        ["if (allocation?.state !== 'allocating' || allocation.conductor_affinity !== ctx.conductorId)", 'if (!allocation)'],
      ],
    },
  },
};

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
