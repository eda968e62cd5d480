// A process and what it started, seen from /proc: the HA cluster and the chaos run stop (or
// pause) a supervisor together with every process under it.
import { readdirSync, readFileSync } from 'node:fs';

/** Send `sig` to `pid`, if it is still there. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

/** Every pid whose parent chain leads to `root` (from /proc). */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent)
      if (ppid === pid && !out.includes(child)) {
        out.push(child);
        walk(child);
      }
  };
  walk(root);
  return out;
}
