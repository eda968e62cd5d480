// `npx tsx bench/cpu-profile.ts DIR|FILE.cpuprofile… [--top N] [--last SECONDS]`: where a
// server's CPU time went. Reads V8 CPU profiles (from `--allot-cpu-prof DIR` of bench:placement,
// or `node --cpu-prof`) and prints self time grouped by package / allot source file, and the
// hottest functions. `--last` keeps only each profile's last SECONDS: a bench stops its server
// right after the measured phase, so that leaves out the setup (making nodes, pools…).
// `--callers AREA` (a package, e.g. kysely): that area's self time by the nearest allot function
// up the stack — which of allot's calls the package's time is spent for.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' }, last: { type: 'string' }, callers: { type: 'string' } },
  allowPositionals: true,
});
const files = positionals.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(p, f))
    : [p],
);
if (files.length === 0) {
  console.error('usage: npx tsx bench/cpu-profile.ts DIR|FILE.cpuprofile… [--top N] [--last SECONDS] [--callers AREA]');
  process.exit(2);
}

/** Which part of the program a frame belongs to. */
function area(frame: ProfileNode['callFrame']): string {
  const { functionName: fn, url } = frame;
  if (fn === '(idle)' || fn === '(garbage collector)' || fn === '(program)') return fn;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/(.+)$/.exec(url);
  if (own) return `allot ${own[1]}`;
  if (url.startsWith('node:')) return url;
  return url ? url : '(native)';
}

const byArea = new Map<string, number>();
const byFunction = new Map<string, number>();
const byCaller = new Map<string, number>();
let total = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  /** the nearest allot function at or above a node, as `name file:line` */
  const allotCaller = (id: number | undefined): string => {
    for (; id !== undefined; id = parents.get(id)) {
      const f = nodes.get(id)!.callFrame;
      const own = /\/dist\/(.+)$/.exec(f.url);
      if (own && !f.url.includes('/node_modules/')) return `${f.functionName || '(anonymous)'} allot ${own[1]}:${f.lineNumber + 1}`;
    }
    return '(no allot caller)';
  };
  // sample times, from each sample's delta; kept when within the last `--last` seconds
  const from = values.last === undefined ? -Infinity : profile.endTime - Number(values.last) * 1e6;
  let at = profile.endTime - profile.timeDeltas.reduce((a, b) => a + b, 0);
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from) return;
    const us = profile.timeDeltas[i + 1] ?? 0; // the time until the next sample belongs to this one
    const frame = nodes.get(id)!.callFrame;
    total += us;
    const a = area(frame);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
    const url = frame.url;
    const where = url.includes('/node_modules/') ? url.replace(/^.*\/node_modules\//, '') : url.replace(/^.*\/dist\//, 'allot ').replace(/^file:\/\//, '');
    const name = `${frame.functionName || '(anonymous)'} ${where || a}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    if (values.callers !== undefined && a === values.callers) {
      const caller = allotCaller(id);
      byCaller.set(caller, (byCaller.get(caller) ?? 0) + us);
    }
  });
}

const top = Number(values.top);
const busy = total - (byArea.get('(idle)') ?? 0);
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (self time, % of non-idle ${(busy / 1e6).toFixed(1)} s)`);
  for (const [k, us] of [...m]
    .filter(([k]) => k !== '(idle)' && !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(`${((100 * us) / busy).toFixed(1).padStart(6)}%  ${k}`);
  }
};
console.log(`${files.length} profile(s), ${(total / 1e6).toFixed(1)} s sampled, ${(((byArea.get('(idle)') ?? 0) / total) * 100).toFixed(0)}% idle`);
show('by package / file', byArea);
show('hottest functions', byFunction);
if (values.callers !== undefined) show(`${values.callers} by its nearest allot caller`, byCaller);
